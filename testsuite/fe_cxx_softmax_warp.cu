// A warp-per-row softmax template as LLM kernels write it: `template <int COLS,
// typename T = float>`, elements per lane a constexpr, a warp all-reduce helper template
// taking the combining functor (max, then sum), unrolled loops over a local array,
// the LAUNCH line leaving out the default argument.
// LAUNCH: softmax_warp<128> grid=4 block=128 in=f32[2048]:rand out=f32[2048]:zero rows=16 ulp=2
// LAUNCH: softmax_warp<64,float> grid=2 block=128 in=f32[2048]:rand out64=f32[2048]:zero rows=8 ulp=2

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

template <typename Op>
__device__ float warp_all_reduce(float v, Op op) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

template <int COLS, typename T = float>
__global__ void softmax_warp(const T* in, T* out, int rows) {
    constexpr int PER_LANE = COLS / 32;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= rows) return;
    const T* row = in + warp * COLS;
    T vals[PER_LANE];
#pragma unroll
    for (int k = 0; k < PER_LANE; ++k)
        vals[k] = row[lane + 32 * k];
    T m = vals[0];
#pragma unroll
    for (int k = 1; k < PER_LANE; ++k)
        m = fmaxf(m, vals[k]);
    m = warp_all_reduce(m, Max());
    T s = 0;
#pragma unroll
    for (int k = 0; k < PER_LANE; ++k) {
        vals[k] = __expf(vals[k] - m);
        s += vals[k];
    }
    s = warp_all_reduce(s, Sum());
#pragma unroll
    for (int k = 0; k < PER_LANE; ++k)
        out[warp * COLS + lane + 32 * k] = vals[k] / s;
}

template __global__ void softmax_warp<128>(const float*, float*, int);
template __global__ void softmax_warp<64>(const float*, float*, int);
