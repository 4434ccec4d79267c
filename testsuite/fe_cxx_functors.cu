// Functor and lambda transforms, the style of thrust-like code: a __device__ template
// `transform_n` applying any callable, functor structs with state and a const
// operator(), lambdas capturing by value, a grid-stride loop helper taking a lambda
// that captures by reference, overloaded functors.
// LAUNCH: saxpy_functor grid=4 block=128 x=f32[1024]:rand y=f32[1024]:rand out=f32[1024]:zero a=2.5 n=1000
// LAUNCH: clamp_lambda grid=4 block=128 x=f32[1024]:rand bounds=f32[2]:rand out2=f32[1024]:zero n=1024
// LAUNCH: count_positive grid=2 block=64 x=f32[1024]:rand counts=i32[128]:zero n=1024

struct Saxpy {
    float a;
    __device__ float operator()(float x, float y) const { return a * x + y; }
};

struct Clamp {
    float lo, hi;
    __device__ Clamp(float l, float h) : lo(l), hi(h) {}
    __device__ float operator()(float v) const { return v < lo ? lo : (v > hi ? hi : v); }
};

template <typename F>
__device__ void transform_n(const float* in, float* out, int n, F f) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = f(in[i]);
}

template <typename F>
__device__ void for_each_index(int n, F body) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        body(i);
}

__global__ void saxpy_functor(const float* x, const float* y, float* out, float a, int n) {
    Saxpy op{a};
    for_each_index(n, [=](int i) { out[i] = op(x[i], y[i]); });
}

__global__ void clamp_lambda(const float* x, const float* bounds, float* out, int n) {
    Clamp c(fminf(bounds[0], bounds[1]), fmaxf(bounds[0], bounds[1]));
    auto twice_clamped = [c](float v) { return c(v) * 2.0f; };
    transform_n(x, out, n, twice_clamped);
}

__global__ void count_positive(const float* x, int* counts, int n) {
    int mine = 0;
    for_each_index(n, [&](int i) {
        if (x[i] > 0.0f) mine += 1;
    });
    counts[blockIdx.x * blockDim.x + threadIdx.x] = mine;
}
