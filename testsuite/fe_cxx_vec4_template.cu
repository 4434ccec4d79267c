// float4-vectorized kernels as templates: `template <typename T, int VEC = 4>`, loads
// through reinterpret_cast<const float4*>, a static_assert on sizeof, a scalar tail,
// a `using` alias for the vector type, a C++ cast family (static_cast, const_cast).
// LAUNCH: axpy_vec<float> grid=4 block=64 x=f32[1030]:rand y=f32[1030]:rand a=1.5 n=1030
// LAUNCH: scale_vec grid=2 block=64 src=f32[512]:rand dst=f32[512]:zero s=0.75 n=512

using vec_t = float4;
static_assert(sizeof(vec_t) == 16, "float4 is 16 bytes");

template <typename T, int VEC = 4>
__global__ void axpy_vec(const T* x, T* y, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int nvec = n / VEC;
    if (i < nvec) {
        vec_t xv = reinterpret_cast<const vec_t*>(x)[i];
        vec_t yv = reinterpret_cast<vec_t*>(y)[i];
        yv.x += a * xv.x;
        yv.y += a * xv.y;
        yv.z += a * xv.z;
        yv.w += a * xv.w;
        reinterpret_cast<vec_t*>(y)[i] = yv;
    }
    int tail = nvec * VEC + i;
    if (i < n - nvec * VEC)
        y[tail] += a * x[tail];
}

template __global__ void axpy_vec<float>(const float*, float*, float, int);

__device__ vec_t scaled(const vec_t& v, float s) { return make_float4(v.x * s, v.y * s, v.z * s, v.w * s); }

__global__ void scale_vec(const float* src, float* dst, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float* out = const_cast<float*>(static_cast<const float*>(dst));
    if (4 * i < n)
        reinterpret_cast<vec_t*>(out)[i] = scaled(reinterpret_cast<const vec_t*>(src)[i], s);
}
