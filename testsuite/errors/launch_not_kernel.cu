// ERROR: 6:5: 'twice' is not a __global__ function and cannot be launched
__device__ void twice(float* a) { a[threadIdx.x] *= 2.0f; }

int main() {
    float* d = 0;
    twice<<<1, 32>>>(d);
    return 0;
}
