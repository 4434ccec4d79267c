// Contraction-sensitive arithmetic, checked bit for bit (ulp=0) on random inputs:
// complex products and cross products (`a.x*b.y - a.y*b.x`: which product becomes
// the fma decides the result near cancellation), negated products, products by
// constants subtracted, a double-precision detour cast back to float, and the
// logistic function `1 / (1 + expf(-x))` whose denominator folds into expf's last fma.
// LAUNCH: cross_products grid=2 block=128 a=f32[768]:rand b=f32[768]:rand out=f32[768]:zero n=256
// LAUNCH: complex_mul<float> grid=2 block=64 re=f32[128]:rand im=f32[128]:rand out=f32[256]:zero n=128
// LAUNCH: complex_mul<double> grid=1 block=64 re=f64[64]:rand im=f64[64]:rand out=f64[128]:zero n=64
// LAUNCH: activations grid=2 block=128 x=f32[256]:rand out=f32[1024]:zero n=256

struct float3v { float x, y, z; };

__device__ float3v cross(float3v a, float3v b) {
    return float3v{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

__global__ void cross_products(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3v u{a[3 * i], a[3 * i + 1] - 0.5f, a[3 * i + 2]};
    float3v v{b[3 * i], b[3 * i + 1], 0.5f - b[3 * i + 2]};
    float3v w = cross(u, v);
    out[3 * i] = w.x - (-(u.x * v.x));
    out[3 * i + 1] = w.y + (-(u.y * 0.25f));
    out[3 * i + 2] = -w.z * v.z + u.z * 3.0f - v.y * 0.5f;
}

template <typename T>
struct Complex {
    T re, im;
    __device__ Complex operator*(const Complex& o) const { return Complex{re * o.re - im * o.im, re * o.im + im * o.re}; }
    __device__ Complex operator+(const Complex& o) const { return Complex{re + o.re, im + o.im}; }
    __device__ Complex operator-() const { return Complex{-re, -im}; }
};

template <typename T>
__global__ void complex_mul(const T* re, const T* im, T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Complex<T> z{re[i], im[i]};
    Complex<T> w{im[(i + 1) % n], re[(i + 3) % n]};
    Complex<T> r = z * w + -(w * w) + z * z * z;
    out[2 * i] = r.re;
    out[2 * i + 1] = r.im;
}
template __global__ void complex_mul<float>(const float*, const float*, float*, int);
template __global__ void complex_mul<double>(const double*, const double*, double*, int);

__global__ void activations(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = 4.0f * x[i] - 2.0f;
    out[4 * i] = 1.0f / (1.0f + expf(-v));
    out[4 * i + 1] = v * (1.0f / (1.0f + expf(-1.702f * v)));
    out[4 * i + 2] = (float)((double)v * (double)x[i] + (double)0.5f);
    out[4 * i + 3] = 1.0f + expf(v) * 0.5f;
}
