// Function overloading (int, float, double, and a struct), default arguments, lvalue
// references (`T&` out-parameters, a swap template), `const T&` binding temporaries,
// `auto`, and range-for is not used: plain loops over constexpr bounds.
// LAUNCH: overloads grid=2 block=64 fi=f32[128]:rand ii=i32[128]:randint(-100,100) di=f64[128]:rand fo=f32[128]:zero io=i32[128]:zero do_=f64[128]:zero

struct Pair { float a, b; };

__device__ float scaled(float x, float s = 2.0f) { return x * s; }
__device__ int scaled(int x, int s = 3) { return x * s; }
__device__ double scaled(double x, double s = 0.5) { return x * s; }
__device__ float scaled(Pair p) { return p.a - p.b; }

template <typename T>
__device__ void swap_values(T& a, T& b) {
    T t = a;
    a = b;
    b = t;
}

__device__ void min_max(const float& x, const float& y, float& lo, float& hi) {
    lo = x < y ? x : y;
    hi = x < y ? y : x;
}

__global__ void overloads(const float* fi, const int* ii, const double* di, float* fo, int* io, double* do_) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float f = fi[i];
    int n = ii[i];
    double d = di[i];
    float lo, hi;
    min_max(f, f * 0.5f + 0.25f, lo, hi);
    Pair p;
    p.a = hi;
    p.b = lo;
    auto g = scaled(f) + scaled(f, 0.25f) + scaled(p);
    int m = scaled(n) + scaled(n, -1);
    swap_values(m, n);
    double e = scaled(d) + scaled(d, 4.0);
    fo[i] = g;
    io[i] = m - 2 * n;
    do_[i] = e;
}
