// Attributes beyond the basics: a stack frame (local array), __launch_bounds__.
__global__ void with_frame(int* out, const int* idx, int k) {
    int tmp[512];
    for (int i = 0; i < 512; i++) tmp[i] = i * k + idx[i];
    out[threadIdx.x] = tmp[idx[threadIdx.x] & 511];
}

__global__ void __launch_bounds__(128) bounded(int* out) { out[threadIdx.x] = threadIdx.x; }
