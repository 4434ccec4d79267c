// Warp reductions of 16-bit floats as LLM kernels write them: `__shfl_xor_sync` on
// `__nv_bfloat16` and `__half2`, `__shfl_down_sync` on `__nv_bfloat162` with a width,
// `__shfl_sync` broadcasting a `__half`, accumulated with the headers' intrinsics.
// LAUNCH: bf16_warp_sum grid=2 block=64 in=u16[128]:randint(16000,16200) out=u16[128]:zero
// LAUNCH: half2_warp_max grid=1 block=64 in=u32[64]:randint(0,1000000000) out=u32[64]:zero
// LAUNCH: bf162_segment grid=1 block=64 in=u32[64]:randint(1000000000,1060000000) out=u32[64]:zero width=16
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __nv_bfloat16 warp_sum(__nv_bfloat16 v) {
    for (int offset = 16; offset > 0; offset >>= 1) v = __hadd(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__global__ void bf16_warp_sum(const __nv_bfloat16* in, __nv_bfloat16* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = warp_sum(in[i]);
}

__global__ void half2_warp_max(const __half2* in, __half2* out) {
    int i = threadIdx.x;
    __half2 v = in[i];
    for (int offset = 16; offset > 0; offset >>= 1) v = __hmax2(v, __shfl_xor_sync(0xffffffffu, v, offset));
    __half lane0 = __shfl_sync(0xffffffffu, __low2half(in[i]), 0);
    out[i] = __halves2half2(__high2half(v), lane0);
}

__global__ void bf162_segment(const __nv_bfloat162* in, __nv_bfloat162* out, int width) {
    int i = threadIdx.x;
    __nv_bfloat162 v = in[i];
    __nv_bfloat162 below = __shfl_down_sync(0xffffffffu, v, 1, width);
    __nv_bfloat162 above = __shfl_up_sync(0xffffffffu, v, 2, width);
    out[i] = __hadd2(__hmul2(v, below), above);
}
