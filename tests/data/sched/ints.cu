__global__ void hash32(unsigned* out, int n, unsigned seed) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned h = i ^ seed;
    h ^= h >> 16; h *= 0x7feb352d; h ^= h >> 15; h *= 0x846ca68b; h ^= h >> 16;
    out[i] = h;
}
__global__ void bits(const unsigned* in, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { unsigned v = in[i]; out[i] = __popc(v) + __clz(v) + __brev(v) + __ffs(v) + __byte_perm(v, i, 0x4321); }
}
__global__ void divmod(const int* a, const int* b, int* q, int* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { q[i] = a[i] / b[i]; r[i] = a[i] % b[i]; }
}
__global__ void idx64(const float* in, float* out, long long n, long long stride) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i * stride < n) out[i] = in[i * stride] + in[i * stride + 1];
}
