// ERROR: 5:26: initializer not allowed for __shared__ variable
// ERROR: 7:5: use of undeclared identifier 'undefined_buffer'

__global__ void k(float* out) {
    __shared__ float s = 1.0f;
    out[threadIdx.x] = s;
    undefined_buffer[0] = 2.0f;
}
