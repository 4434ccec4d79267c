// Control flow: divergent if/else and loops (BSSY/BSYNC), early exits, break and
// continue, switch, compound conditions (PLOP3), predicates kept in registers, and
// __syncthreads_count/_and/_or.
// LAUNCH: collatz grid=4 block=64 in=u32[256]:randint(1,10000) steps=u32[256]:zero n=256
// LAUNCH: classify grid=4 block=64 x=i32[256]:randint(-20,20) y=i32[256]:randint(-20,20) out=i32[256]:zero n=256
// LAUNCH: search grid=2 block=64 hay=i32[4096]:randint(0,50) needles=i32[128]:randint(0,60) pos=i32[128]:zero n=32
// LAUNCH: block_votes grid=4 block=128 x=i32[512]:randint(-5,5) out=i32[16]:zero
// LAUNCH: many_predicates grid=2 block=64 x=f32[128]:rand out=u32[128]:zero

__global__ void collatz(const unsigned* in, unsigned* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = in[i], s = 0;
    while (v != 1 && s < 1000) {
        v = (v & 1) ? 3 * v + 1 : v >> 1;
        s++;
    }
    steps[i] = s;
}

__global__ void classify(const int* x, const int* y, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = x[i], b = y[i], r;
    switch ((a & 3) + (b > 0)) {
        case 0: r = a + b; break;
        case 1: r = a - b; break;
        case 2: r = a * b; break;
        case 3: r = (a > 5 && b < 3) || (a == b) ? 1 : -1; break;
        default: r = 42;
    }
    if ((a > 0) != (b > 0) && (a ^ b) > 3) r += 1000;
    out[i] = r;
}

__global__ void search(const int* hay, const int* needles, int* pos, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int needle = needles[i];
    const int* row = hay + i * n;
    int found = -1;
    for (int k = 0; k < n; k++) {
        if (row[k] < 0) continue;
        if (row[k] == needle) { found = k; break; }
    }
    pos[i] = found;
}

__global__ void block_votes(const int* x, int* out) {
    int v = x[blockIdx.x * blockDim.x + threadIdx.x];
    int count = __syncthreads_count(v > 0);
    int all = __syncthreads_and(v > -5);
    int any = __syncthreads_or(v == 5);
    if (threadIdx.x == 0) {
        out[4 * blockIdx.x] = count; out[4 * blockIdx.x + 1] = all; out[4 * blockIdx.x + 2] = any;
        out[4 * blockIdx.x + 3] = blockIdx.x;
    }
}

__global__ void many_predicates(const float* x, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    bool p[8];
#pragma unroll
    for (int k = 0; k < 8; k++) p[k] = v > (k - 4) * 0.25f;
    unsigned r = 0;
    for (int k = 0; k < 8; k++) {
        float w = x[(i + k) & 127];
        if (p[k] && w > 0.0f) r += 1u << k;
        if (p[(k + 3) & 7] != (w < 0.5f)) r ^= 0x100u << k;
    }
    out[i] = r;
}
