// Histograms and other atomics: shared-memory bins (ATOMS), global bins (RED/ATOMG),
// compare-and-swap loops, min/max/exchange/inc, and atomics through a generic pointer.
// LAUNCH: histogram grid=32 block=256 data=u8[65536]:randint(0,255) bins=u32[256]:zero n=65536
// LAUNCH: global_histogram grid=32 block=256 data=u32[8192]:randint(0,1023) bins=u32[64]:zero n=8192
// LAUNCH: atomic_misc grid=8 block=128 data=i32[1024]:randint(-50000,50000) stats=i32[8]:zero fstats=f32[4]:zero n=1024 ulp=4
// LAUNCH: cas_max grid=8 block=128 data=f32[1024]:rand result=f32[1]:const(-1000) n=1024
// LAUNCH: generic_atomics grid=4 block=64 counters=u32[4]:zero wide=u64[2]:zero

__global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}

__global__ void global_histogram(const unsigned int* data, unsigned int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned int old = atomicAdd(&bins[data[i] & 63], 1u);
        if (old == 0xffffffffu) bins[0] = 0;
    }
}

__global__ void atomic_misc(const int* data, int* stats, float* fstats, int n) {
    __shared__ int smax, smin;
    if (threadIdx.x == 0) { smax = -2147483647; smin = 2147483647; }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = data[i];
        atomicMax(&smax, v);
        atomicMin(&smin, v);
        atomicMax(&stats[0], v);
        atomicMin(&stats[1], v);
        atomicAnd(&stats[2], v | 0x0f0f0000);
        atomicOr(&stats[3], v & 0x0101);
        atomicXor(&stats[4], v);
        atomicInc((unsigned int*)&stats[5], 1000u);
        atomicSub(&stats[6], 1);
        atomicExch(&stats[7], 42);
        atomicAdd(&fstats[0], (float)(v & 15) * 0.5f);
    }
    __syncthreads();
    if (threadIdx.x == 0) { atomicAdd(&fstats[1], (float)smax); atomicAdd(&fstats[2], (float)smin); }
}

__device__ float atomic_max_float(float* addr, float value) {
    int* p = (int*)addr;
    int old = *p, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= value) break;
        old = atomicCAS(p, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void cas_max(const float* data, float* result, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(result, data[i]);
}

__device__ __noinline__ unsigned int bump(unsigned int* counter, unsigned int by) {
    return atomicAdd(counter, by);
}

__device__ __noinline__ unsigned long long swap_wide(unsigned long long* p, unsigned long long cmp,
                                                     unsigned long long v) {
    return atomicCAS(p, cmp, v);
}

__global__ void generic_atomics(unsigned int* counters, unsigned long long* wide) {
    __shared__ unsigned int shared_counter;
    if (threadIdx.x == 0) shared_counter = 0;
    __syncthreads();
    unsigned int* target = (threadIdx.x & 1) ? &shared_counter : &counters[0];
    unsigned int old = bump(target, 1u);
    __syncthreads();
    if (threadIdx.x == 0) counters[1] = shared_counter;
    atomicAdd(&counters[2], old == 0u ? 1u : 0u);
    swap_wide(&wide[0], 0ull, 7ull);
    atomicAdd(&wide[1], 3ull);
}
