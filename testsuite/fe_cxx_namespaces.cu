// Namespaces (nested, a `using namespace` directive, qualified calls), `enum class`
// values as template arguments and in `if constexpr`, `nullptr`, `constexpr`
// functions' results as array sizes, C++ casts.
// LAUNCH: ops::transform<ops::Op::Square> grid=4 block=64 x=f32[256]:rand y=f32[256]:zero n=256
// LAUNCH: transform<ops::Op::Negate> grid=4 block=64 x=f32[256]:rand y2=f32[256]:zero n=256
// LAUNCH: bucket grid=2 block=128 v=i32[256]:randint(0,1000) hist=u32[8]:zero

namespace ops {
enum class Op { Square, Negate };

namespace detail {
__device__ float square(float x) { return x * x; }
}

template <Op OP>
__global__ void transform(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if constexpr (OP == Op::Square)
        y[i] = detail::square(x[i]);
    else
        y[i] = -x[i];
}

template __global__ void transform<Op::Square>(const float*, float*, int);
template __global__ void transform<Op::Negate>(const float*, float*, int);
}

namespace hist {
constexpr int BINS = 8;
using bin_t = unsigned int;
}

using namespace hist;

__global__ void bucket(const int* v, bin_t* out) {
    __shared__ bin_t local[BINS];
    const int* p = nullptr;
    if (threadIdx.x < BINS) local[threadIdx.x] = 0;
    __syncthreads();
    p = v;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = static_cast<int>(static_cast<unsigned>(p[i]) % BINS);
    atomicAdd(&local[b], 1u);
    __syncthreads();
    if (threadIdx.x < BINS) atomicAdd(&out[threadIdx.x], local[threadIdx.x]);
}
