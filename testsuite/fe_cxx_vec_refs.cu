// Member operators that return references, as vector classes write them: `Vec3&
// operator+=` chained (`(a += b) *= s`), `T& operator[](int)` assigned through and
// compound-assigned, a `T&` accessor, and a fixed-size array class whose elements are
// references into registers (the loops unroll, so every index is a constant).
// LAUNCH: vec_kernel grid=2 block=64 in=f32[384]:randint(-8,8) out=f32[384]:zero n=128
// LAUNCH: array_kernel<float> grid=1 block=128 in=f32[512]:randint(-16,16) out=f32[128]:zero
// LAUNCH: array_kernel<int> grid=1 block=128 in=i32[512]:randint(-100,100) out=i32[128]:zero

struct Vec3 {
    float x, y, z;
    __device__ Vec3& operator+=(const Vec3& o) { x += o.x; y += o.y; z += o.z; return *this; }
    __device__ Vec3& operator*=(float s) { x *= s; y *= s; z *= s; return *this; }
    __device__ float& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
    __device__ float& last() { return z; }
    __device__ float dot(const Vec3& o) const { return x * o.x + y * o.y + z * o.z; }
};

__device__ Vec3 load3(const float* p, int i) { return Vec3{p[3 * i], p[3 * i + 1], p[3 * i + 2]}; }

__global__ void vec_kernel(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Vec3 a = load3(in, i);
    Vec3 b = load3(in, (i + 1) % n);
    (a += b) *= 0.5f;
    a[1] += 2.0f;
    a.last() = a.last() - a[0];
    Vec3 c = a;
    c += a += b;
    out[3 * i] = a.dot(b);
    out[3 * i + 1] = c[1];
    out[3 * i + 2] = c.last();
}

template <typename T, int N>
struct Array {
    T data[N];
    __device__ T& operator[](int i) { return data[i]; }
    __device__ T sum() const { T s = 0; for (int i = 0; i < N; ++i) s += data[i]; return s; }
};

template <typename T>
__global__ void array_kernel(const T* in, T* out) {
    int t = threadIdx.x;
    Array<T, 4> a;
    for (int i = 0; i < 4; ++i) a[i] = in[4 * t + i];
    for (int i = 1; i < 4; ++i) a[i] += a[i - 1];
    a[0] *= 3;
    out[t] = a.sum() - a[3];
}
template __global__ void array_kernel<float>(const float*, float*);
template __global__ void array_kernel<int>(const int*, int*);
