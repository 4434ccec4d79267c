// A 256-bin histogram of bytes with global atomics; a size_t element count.
// LAUNCH: histogram grid=256 block=256 data=u8[65536]:randint(0,255) bins=u32[256]:zero n=65536

__global__ void histogram(const unsigned char* data, unsigned int* bins, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1u);
}
