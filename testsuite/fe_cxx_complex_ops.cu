// A Complex<T> class template with constructors, const member functions and
// operators (members and free), used by a kernel template that evaluates a complex
// polynomial by Horner's rule.  Integer-valued inputs keep every product exact (which
// product NVVM contracts into an FMA is issue 15 item 7, not this file's subject).
// LAUNCH: horner<float> grid=2 block=128 re=f32[256]:randint(-3,3) im=f32[256]:randint(-3,3) out=f32[512]:zero n=256
// LAUNCH: horner<double> grid=2 block=128 dre=f64[256]:randint(-3,3) dim=f64[256]:randint(-3,3) dout=f64[512]:zero n=256

template <typename T>
class Complex {
public:
    T re, im;
    __host__ __device__ Complex() : re(0), im(0) {}
    __host__ __device__ Complex(T r, T i = 0) : re(r), im(i) {}
    __host__ __device__ T norm2() const { return re * re + im * im; }
    __host__ __device__ Complex conj() const { return Complex(re, -im); }
    __host__ __device__ Complex operator+(const Complex& o) const { return Complex(re + o.re, im + o.im); }
    __host__ __device__ Complex operator-(const Complex& o) const { return Complex(re - o.re, im - o.im); }
    __host__ __device__ Complex operator*(const Complex& o) const {
        return Complex(re * o.re - im * o.im, re * o.im + im * o.re);
    }
    __host__ __device__ Complex& operator+=(const Complex& o) {
        re += o.re;
        im += o.im;
        return *this;
    }
};

template <typename T>
__host__ __device__ Complex<T> operator*(T s, const Complex<T>& z) { return Complex<T>(s * z.re, s * z.im); }

template <typename T>
__global__ void horner(const T* re, const T* im, T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Complex<T> z(re[i], im[i]);
    const T coeffs[4] = {1, -2, 3, 1};
    Complex<T> acc;
    for (int k = 0; k < 4; ++k)
        acc = acc * z + Complex<T>(coeffs[k]);
    Complex<T> w = T(2) * z.conj() - z;
    w += acc;
    out[2 * i] = w.re;
    out[2 * i + 1] = w.norm2();
}

template __global__ void horner<float>(const float*, const float*, float*, int);
template __global__ void horner<double>(const double*, const double*, double*, int);
