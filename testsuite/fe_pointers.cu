// Pointers: arithmetic, *(p + i) and p[i], pointer differences, comparisons,
// walking a pointer through an array, a pointer to a pointer, pointer casts.
// LAUNCH: pointers grid=2 block=64 data=f32[8192]:rand table=i32[64]:iota out=f32[512]:zero idx=i64[128]:zero n=128

__device__ float sum_range(const float* begin, const float* end) {
    float s = 0.0f;
    for (const float* p = begin; p < end; ++p)
        s += *p;
    return s;
}

__global__ void pointers(const float* data, const int* table, float* out, long* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float* row = data + i * 64;
    const float* mid = &row[32];
    const float* const* pp = &row;
    float* o = out + 4 * i;
    o[0] = *(row + 3) + mid[-1] + *mid;
    o[1] = sum_range(row, row + table[i % 64] % 16);
    o[2] = (*pp)[5] * 2.0f;
    const int* t = table + (i & 31);
    o[3] = (float)(t[1] - *t);
    idx[i] = (mid - row) * 100 + (row < mid) + ((const char*)mid - (const char*)row);
}
