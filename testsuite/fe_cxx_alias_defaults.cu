// Type aliases and default arguments as libraries write them: `using` aliases, an alias
// template (`template <class T> using Vec4 = Vec<T, 4>`), default function arguments
// that name the template's parameters (`T lo = T(0)`), default template arguments,
// a constructor with defaults, and defaults in member functions.
// LAUNCH: clamp_scale<float> grid=2 block=128 in=f32[256]:rand out=f32[256]:zero n=256
// LAUNCH: clamp_scale<double> grid=1 block=64 in=f64[64]:rand out=f64[64]:zero n=64
// LAUNCH: accumulate grid=1 block=128 in=f32[512]:randint(-9,9) out=f32[128]:zero

template <class T, int N>
struct Vec { T v[N]; };

template <class T>
using Vec4 = Vec<T, 4>;

using index_t = int;
using real = float;

template <typename T>
__device__ T clampv(T x, T lo = T(0), T hi = T(1)) { return x < lo ? lo : (x > hi ? hi : x); }

template <typename T, int STEPS = 2>
__device__ T smooth(T x, T rate = T(0.5)) {
    for (int i = 0; i < STEPS; ++i) x = x * rate + (T(1) - rate) * clampv(x);
    return x;
}

template <typename T>
__global__ void clamp_scale(const T* in, T* out, index_t n) {
    index_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Vec4<T> w;
    for (int k = 0; k < 4; ++k) w.v[k] = in[(i + k) % n];
    T s = clampv(w.v[0]) + clampv(w.v[1], T(-1)) + clampv(w.v[2], T(-2), T(2));
    out[i] = s + smooth(w.v[3]) + smooth<T, 3>(w.v[3], T(0.25));
}
template __global__ void clamp_scale<float>(const float*, float*, index_t);
template __global__ void clamp_scale<double>(const double*, double*, index_t);

struct Accumulator {
    real sum;
    real weight;
    __device__ Accumulator(real start = 0.0f, real w = 1.0f) : sum(start), weight(w) {}
    __device__ void add(real x, real scale = 1.0f) { sum += x * scale * weight; }
};

__global__ void accumulate(const real* in, real* out) {
    index_t t = threadIdx.x;
    Accumulator a;
    Accumulator b(1.0f);
    Accumulator c(2.0f, 0.5f);
    for (int k = 0; k < 4; ++k) {
        a.add(in[4 * t + k]);
        b.add(in[4 * t + k], 2.0f);
        c.add(in[4 * t + k], -1.0f);
    }
    out[t] = a.sum + b.sum + c.sum;
}
