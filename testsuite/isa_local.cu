// Local memory: arrays indexed at run time live in local memory (LDL/STL), of several
// element widths; a small insertion sort and a per-thread histogram.
// LAUNCH: local_sort grid=4 block=64 in=i32[4096]:randint(-1000,1000) out=i32[4096]:zero
// LAUNCH: local_hist grid=4 block=64 in=u8[4096]:randint(0,15) out=u32[4096]:zero
// LAUNCH: local_wide grid=2 block=64 idx=i32[128]:randint(0,7) out=f64[128]:zero lout=i64[128]:zero

__global__ void local_sort(const int* in, int* out) {
    int v[16];
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
    for (int k = 0; k < 16; k++) v[k] = in[base + k];
    for (int k = 1; k < 16; k++) {
        int key = v[k], j = k - 1;
        while (j >= 0 && v[j] > key) { v[j + 1] = v[j]; j--; }
        v[j + 1] = key;
    }
    for (int k = 0; k < 16; k++) out[base + k] = v[k];
}

__global__ void local_hist(const unsigned char* in, unsigned* out) {
    unsigned short h[16];
    for (int k = 0; k < 16; k++) h[k] = 0;
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
    for (int k = 0; k < 16; k++) h[in[base + k] & 15]++;
    for (int k = 0; k < 16; k++) out[base + k] = h[k];
}

__global__ void local_wide(const int* idx, double* out, long long* lout) {
    double d[8];
    long long l[8];
    char c[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 8; k++) { d[k] = k * 0.5 + i; l[k] = (long long)k << 40 | i; c[k] = (char)(k - i); }
    int j = idx[i];
    d[j] *= 3.0; l[(j + 1) & 7] -= 5; c[(j + 2) & 7] = 100;
    out[i] = d[idx[(i + 1) & 127]] + c[j];
    lout[i] = l[idx[(i + 2) & 127]];
}
