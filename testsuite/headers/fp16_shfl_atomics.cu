// __half and __half2 through the warp shuffles, and the half atomics: counters in half
// and half2 (sums of small integers, exact in fp16 whatever the order) and a bf16
// histogram (atomicAdd on __nv_bfloat16: a CAS loop on sm_89, atom.add.bf16 on sm_90).
// LAUNCH: half_shuffles grid=2 block=128 x=u16[256]:randint(14336,18431) out=u16[1024]:zero
// LAUNCH: half_atomics grid=4 block=256 keys=i32[1024]:randint(0,15) hist=u16[16]:zero hist2=u32[16]:zero bhist=u16[16]:zero
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void half_shuffles(const __half* x, __half* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half v = x[i];
    __half2 p = __halves2half2(v, __hneg(v));
    out[4 * i] = __shfl_down_sync(0xffffffff, v, 3);
    out[4 * i + 1] = __shfl_up_sync(0xffffffff, v, 5);
    out[4 * i + 2] = __shfl_sync(0xffffffff, v, 7);
    __half2 q = __shfl_xor_sync(0xffffffff, p, 1);
    out[4 * i + 3] = __low2half(q) + __high2half(__shfl_down_sync(0xffffffff, p, 2, 16));
}

__global__ void half_atomics(const int* keys, __half* hist, __half2* hist2, __nv_bfloat16* bhist) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = keys[i];
    atomicAdd(&hist[k], __float2half(1.0f));
    atomicAdd(&hist2[k], __floats2half2_rn(1.0f, 2.0f));
    atomicAdd(&bhist[k], __float2bfloat16(1.0f));
}
