// A Complex<T> class template (its operations as function templates deduced from
// their arguments), a `using` alias of an instance, references to it, `auto`.  Small
// integer inputs keep every product exact: which product NVVM contracts into an FMA is
// another issue (15 item 7), not this file's subject.
// LAUNCH: cmul_kernel grid=4 block=128 re=f32[512]:randint(-4,4) im=f32[512]:randint(-4,4) out_re=f32[512]:zero out_im=f32[512]:zero n=512
// LAUNCH: cpow_kernel<double> grid=2 block=64 dre=f64[128]:randint(-3,3) dim=f64[128]:randint(-3,3) dout=f64[128]:zero n=128

template <typename T>
struct Complex {
    T re;
    T im;
};

template <typename T>
__device__ Complex<T> make_complex(T re, T im) {
    Complex<T> c;
    c.re = re;
    c.im = im;
    return c;
}

template <typename T>
__device__ Complex<T> cmul(const Complex<T>& a, const Complex<T>& b) {
    return make_complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}

template <typename T>
__device__ void accumulate(Complex<T>& acc, const Complex<T>& x) {
    acc.re += x.re;
    acc.im += x.im;
}

using cfloat = Complex<float>;

__global__ void cmul_kernel(const float* re, const float* im, float* out_re, float* out_im, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cfloat a = make_complex(re[i], im[i]);
    cfloat b = make_complex(im[i], 0.5f);
    auto p = cmul(a, b);
    accumulate(p, a);
    out_re[i] = p.re;
    out_im[i] = p.im;
}

template <typename T>
__global__ void cpow_kernel(const T* re, const T* im, T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Complex<T> z = make_complex(re[i], im[i]);
    Complex<T> w = make_complex(T(1), T(0));
    for (int k = 0; k < 3; ++k)
        w = cmul(w, z);
    out[i] = w.re * w.re + w.im * w.im;
}

template __global__ void cpow_kernel<double>(const double*, const double*, double*, int);
