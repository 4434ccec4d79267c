__global__ void branchy(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    if (v > 10) v = v * 3 + 1; else if (v < -10) v = -v; else v = v << 2;
    while (v > 1000) v >>= 1;
    out[i] = v;
}
__global__ void select_minmax(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float x = a[i], y = b[i]; c[i] = x > y ? fminf(x * y, 1.f) : fmaxf(x - y, -1.f); }
}
__global__ void local_arr(const int* in, int* out, int n) {
    int buf[16];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 16; ++k) buf[k] = in[(i + k) % n];
    int s = 0;
    for (int k = 0; k < 16; ++k) s += buf[(k * 7 + in[i]) & 15];
    out[i] = s;
}
__constant__ float coeffs[8];
__global__ void poly(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i], r = 0.f; for (int k = 7; k >= 0; --k) r = r * v + coeffs[k]; y[i] = r; }
}
__global__ void vote_ballot(const int* in, unsigned* out) {
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    unsigned b = __ballot_sync(0xffffffff, v > 0);
    if (__all_sync(0xffffffff, v != 0)) b |= 1;
    if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) >> 5] = b + __activemask();
}
__global__ void cas_loop(float* addr, float v) {
    int* a = (int*)addr; int old = *a, assumed;
    do { assumed = old; old = atomicCAS(a, assumed, __float_as_int(__int_as_float(assumed) * v)); } while (assumed != old);
}
