// User-defined conversions, the way half-precision and fixed-point types are written:
// a converting constructor (float -> Q8), a conversion operator (Q8 -> float) used by
// initialization, casts (C, functional, static_cast) and argument passing, free
// operators on the class, an overload chosen through a conversion.
// LAUNCH: q8_blend grid=2 block=64 a=f32[128]:randint(-64,64) b=f32[128]:randint(-64,64) out=f32[128]:zero w=0.25

struct Q8 {
    int raw;
    __device__ Q8(float f) : raw((int)(f * 256.0f)) {}
    __device__ Q8(int r, bool) : raw(r) {}
    __device__ operator float() const { return raw / 256.0f; }
};

__device__ Q8 operator+(Q8 x, Q8 y) { return Q8(x.raw + y.raw, true); }
__device__ Q8 operator*(Q8 x, Q8 y) { return Q8((x.raw * y.raw) >> 8, true); }

__device__ float squared(float x) { return x * x; }

__global__ void q8_blend(const float* a, const float* b, float* out, float w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Q8 qa = a[i];
    Q8 qb(b[i]);
    Q8 qw = w;
    Q8 mix = qa * qw + qb * Q8(1.0f - w);
    float f = mix;
    out[i] = f + (float)qa - float(qb) + static_cast<float>(qw) + squared(qw);
}
