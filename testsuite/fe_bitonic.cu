// Bitonic sort of 512 keys per block in shared memory: nested loops with shifting
// strides, compare-and-swap through a __device__ function taking pointers to shared
// memory, and the direction computed from the thread index.
// LAUNCH: bitonic grid=4 block=256 keys=i32[2048]:randint(-100000,100000)

__device__ void compare_swap(int* a, int* b, bool up) {
    if ((*a > *b) == up) {
        int t = *a;
        *a = *b;
        *b = t;
    }
}

__global__ void bitonic(int* keys) {
    __shared__ int s[512];
    int t = threadIdx.x;
    int* base = keys + blockIdx.x * 512;
    s[t] = base[t];
    s[t + 256] = base[t + 256];
    __syncthreads();
    for (unsigned size = 2; size <= 512; size <<= 1) {
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            unsigned pos = 2 * t - (t & (stride - 1));
            bool up = ((pos & size) == 0);
            compare_swap(&s[pos], &s[pos + stride], up);
            __syncthreads();
        }
    }
    base[t] = s[t];
    base[t + 256] = s[t + 256];
}
