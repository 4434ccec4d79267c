// ERROR: 4:11: unsupported feature: local arrays and structs (local memory)
__global__ void k(float* out) {
    int i = threadIdx.x;
    float tmp[4];
    tmp[0] = out[i];
    out[i] = tmp[0];
}
