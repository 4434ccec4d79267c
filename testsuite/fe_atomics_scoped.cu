// Every atomic on every type CUDA has, at device, block and system scope, on global and
// shared memory; atomicCAS on 32- and 64-bit words (a CAS loop building a float max;
// the 16-bit atomicCAS is in tests/test_headers.py: ptxas emulates it with a loop whose
// LDG form the emulator lacks); warp-aggregated atomics (one atomicAdd per warp, the leader's
// old value broadcast).  Only order-independent results are stored.
// LAUNCH: atomics_all grid=4 block=128 iv=i32[512]:randint(-1000,1000) uv=u32[512]:randint(0,100000) lv=i64[512]:randint(-100000,100000) fv=f32[512]:randint(-64,64) dv=f64[512]:randint(-64,64) iacc=i32[16]:zero uacc=u32[16]:zero lacc=i64[8]:zero uacc64=u64[8]:zero facc=f32[4]:zero dacc=f64[4]:zero
// LAUNCH: warp_aggregated grid=8 block=256 flags=i32[2048]:randint(0,1) counter=u32[4]:zero taken=i32[2049]:zero
#include <cstdint>

__device__ float atomic_max_float(float* address, float value) {
    int* word = (int*)address;
    int old = *word, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= value) break;
        old = atomicCAS(word, assumed, __float_as_int(value));
    } while (assumed != old);
    return __int_as_float(old);
}

__global__ void atomics_all(const int* iv, const unsigned* uv, const long long* lv, const float* fv,
                            const double* dv, int* iacc, unsigned* uacc, long long* lacc,
                            unsigned long long* uacc64, float* facc, double* dacc) {
    __shared__ int s_int[4];
    __shared__ unsigned long long s_u64[2];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 4) s_int[threadIdx.x] = 0;
    if (threadIdx.x < 2) s_u64[threadIdx.x] = 0;
    __syncthreads();
    int x = iv[i];
    unsigned u = uv[i];
    long long l = lv[i];
    atomicAdd(&iacc[0], x);
    atomicSub(&iacc[1], x);
    atomicMin(&iacc[2], x);
    atomicMax(&iacc[3], x);
    atomicAnd(&iacc[4], x | 0x10);
    atomicOr(&iacc[5], x);
    atomicXor(&iacc[6], x);
    atomicAdd_block(&iacc[7], 1);
    atomicSub_system(&iacc[8], 2);
    atomicMax_block(&iacc[9], x);
    atomicMin_system(&iacc[10], x);
    atomicOr_block(&iacc[11], 1 << (i & 31));
    atomicXor_system(&iacc[12], x);
    atomicAdd(&uacc[0], u);
    atomicMin(&uacc[1], u + 1);
    atomicMax(&uacc[2], u);
    atomicInc(&uacc[3], 100u);
    atomicDec(&uacc[4], 77u);
    atomicInc_block(&uacc[5], 1000u);
    atomicDec_system(&uacc[6], 5u);
    atomicAnd_block(&uacc[7], ~(1u << (i & 31)));
    atomicAdd_system(&uacc[8], u);
    atomicSub(&uacc[9], 3u);
    atomicMin(&lacc[0], l);
    atomicMax(&lacc[1], l);
    atomicAnd(&lacc[2], l);
    atomicOr(&lacc[3], l);
    atomicXor(&lacc[4], l);
    atomicMax_block(&lacc[5], l);
    atomicXor_system(&lacc[6], l);
    atomicAdd(&uacc64[0], (unsigned long long)u);
    atomicMax(&uacc64[1], (unsigned long long)l);
    atomicMin(&uacc64[2], (unsigned long long)l);
    atomicOr(&uacc64[3], 1ull << (i & 63));
    atomicAdd_block(&uacc64[4], 5ull);
    atomicAnd_system(&uacc64[5], (unsigned long long)l);
    atomicAdd(&facc[0], fv[i]);
    atomicAdd_block(&facc[1], 0.5f);
    atomic_max_float(&facc[2], fv[i]);
    atomicAdd(&dacc[0], dv[i]);
    atomicAdd_system(&dacc[1], 0.25);
    // shared memory, block scope
    atomicAdd(&s_int[0], x);
    atomicMax_block(&s_int[1], x);
    atomicCAS_block(&s_int[2], 0, blockIdx.x + 1);
    atomicExch(&s_int[3], 9);
    atomicAdd(&s_u64[0], (unsigned long long)(l & 0xffff));
    atomicCAS(&s_u64[1], 0ull, 0x123456789ull);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&iacc[13], s_int[0]);
        atomicMax(&iacc[14], s_int[1]);
        atomicAdd(&iacc[15], s_int[2] + s_int[3]);
        atomicAdd(&uacc64[6], s_u64[0]);
        atomicExch_system(&uacc64[7], s_u64[1]);
        atomicExch(&uacc[10], 42u);
        atomicExch_block(&facc[3], 2.5f);
        atomicCAS_system(&uacc[11], 0u, 11u);
        atomicMax(&lacc[7], (long long)atomicCAS((unsigned long long*)&lacc[7], 0ull, 99ull));
    }
}

// The warp-aggregated increment: one atomic per warp, each flagged lane's slot from the
// leader's old value and the flagged lanes before it.  The whole warp votes and
// shuffles (a full mask: ptxas's code for a shuffle under a variable mask needs an
// instruction form the emulator lacks).
__device__ unsigned aggregated_inc(unsigned* counter, bool flagged) {
    unsigned mask = __ballot_sync(0xffffffffu, flagged);
    int leader = __ffs(mask) - 1;
    int lane = threadIdx.x & 31;
    unsigned base = 0;
    if (lane == leader) base = atomicAdd(counter, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader < 0 ? 0 : leader);
    return base + __popc(mask & ((1u << lane) - 1));
}

// Every flagged thread gets a distinct slot: `taken` ends with a 1 in each of the first
// `counter[0]` slots, whatever order the warps came in.
__global__ void warp_aggregated(const int* flags, unsigned* counter, int* taken) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool flagged = flags[i] != 0;
    unsigned slot = aggregated_inc(&counter[0], flagged);
    atomicAdd(&taken[flagged ? slot : 2048], flagged ? 1 : 0);   // no branch: every lane stores
    unsigned votes = __ballot_sync(0xffffffffu, flagged);
    if ((threadIdx.x & 31) == 0) atomicAdd(&counter[2], __popc(votes));
}
