// half2 axpy as mixed-precision code writes it: y = a*x + y on pairs of halves
// (__hfma2), a grid-stride loop, the scalar tail in __half; and the same through the
// operators.  Halves travel as u16 buffers (a half2 as u32), with values in [2^-4, 4).
// LAUNCH: haxpy2 grid=4 block=128 n=1001 a=0.75 x=u16[1001]:randint(11264,17407) y=u16[1001]:randint(11264,17407)
// LAUNCH: haxpy_ops grid=2 block=128 n=777 a=-1.5 x=u16[1001]:randint(11264,17407) y=u16[1001]:randint(11264,17407)
#include <cuda_fp16.h>

__global__ void haxpy2(int n, float a, const __half* __restrict__ x, __half* __restrict__ y) {
    const __half2 a2 = __float2half2_rn(a);
    const __half2* x2 = reinterpret_cast<const __half2*>(x);
    __half2* y2 = reinterpret_cast<__half2*>(y);
    const int pairs = n / 2;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += blockDim.x * gridDim.x)
        y2[i] = __hfma2(a2, x2[i], y2[i]);
    if (blockIdx.x == 0 && threadIdx.x == 0 && (n & 1))
        y[n - 1] = __hfma(__float2half(a), x[n - 1], y[n - 1]);
}

__global__ void haxpy_ops(int n, float a, const half* x, half* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    half ha = a;
    half r = ha * x[i] + y[i];
    r += __float2half(0.25f);
    y[i] = r;
    if (i + 1 < n && (i & 1) == 0) {
        half2 p = __halves2half2(x[i], y[i + 1]);
        half2 q = p * __half2half2(ha) - __halves2half2(r, r);
        y[i + 1] = __high2half(q) + __low2half(q);
    }
}
