// A bf16 dot product with float accumulation, as LLM kernels write it: bf162 pairs
// loaded, widened with __bfloat1622float2, fused into float partial sums, a warp
// shuffle reduction, one partial per block; and bf16 arithmetic itself (+, *, fma).
// LAUNCH: dot_bf16 grid=8 block=128 n=4096 a=u16[4096]:randint(15872,16255) b=u16[4096]:randint(48640,49023) partial=f32[8]:zero
// LAUNCH: bf16_arith grid=4 block=256 a=u16[1024]:randint(15360,16767) b=u16[1024]:randint(48000,49400) out=u16[3072]:zero
#include <cuda_bf16.h>

__global__ void dot_bf16(int n, const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                         float* partial) {
    __shared__ float warp_sums[32];
    const __nv_bfloat162* a2 = reinterpret_cast<const __nv_bfloat162*>(a);
    const __nv_bfloat162* b2 = reinterpret_cast<const __nv_bfloat162*>(b);
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 2; i += blockDim.x * gridDim.x) {
        float2 x = __bfloat1622float2(a2[i]);
        float2 y = __bfloat1622float2(b2[i]);
        acc += x.x * y.x;
        acc += x.y * y.y;
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        acc += __shfl_down_sync(0xffffffff, acc, offset);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int w = 0; w < (int)(blockDim.x >> 5); w++) s += warp_sums[w];
        partial[blockIdx.x] = s;
    }
}

__global__ void bf16_arith(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    nv_bfloat16 x = a[i], y = b[i];
    out[3 * i] = x + y;
    out[3 * i + 1] = x * y;
    out[3 * i + 2] = __hfma(x, y, __hmax(x, y));
}
