// float4-vectorized kernels with the rest of the language around them: a functor
// template and a traits specialization choosing the operation, a derived class, a
// range-based for over a small array, an anonymous `typedef struct` parameter block, a
// variable named like its struct tag, `c ? p : q` of a mutable and a const pointer,
// dim3 passed by value, and a contraction-sensitive dot product (ulp=0).
// LAUNCH: axpby4<Scale> grid=2 block=64 x=f32[512]:rand y=f32[512]:rand out=f32[512]:zero n4=128
// LAUNCH: axpby4<Shift> grid=2 block=64 x=f32[512]:rand y=f32[512]:rand out=f32[512]:zero n4=128
// LAUNCH: records grid=1 block=64 pts=f32[256]:rand out=f32[128]:zero

struct Scale {};
struct Shift {};
template <typename Op> struct OpTraits { static constexpr float a = 1.0f; static constexpr float b = 1.0f; };
template <> struct OpTraits<Scale> { static constexpr float a = 2.0f; static constexpr float b = -0.5f; };
template <> struct OpTraits<Shift> { static constexpr float a = 1.0f; static constexpr float b = 0.25f; };

template <typename Op>
struct Axpby {
    __device__ float operator()(float x, float y) const { return OpTraits<Op>::a * x + OpTraits<Op>::b * y; }
};

template <typename Op>
__global__ void axpby4(const float4* x, const float4* y, float4* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    Axpby<Op> f;
    float4 a = x[i], b = y[i];
    out[i] = make_float4(f(a.x, b.x), f(a.y, b.y), f(a.z, b.z), f(a.w, b.w));
}
template __global__ void axpby4<Scale>(const float4*, const float4*, float4*, int);
template __global__ void axpby4<Shift>(const float4*, const float4*, float4*, int);

typedef struct { float x, y; } point;
struct Shape { float scale; __device__ float area(float w, float h) const { return scale * w * h; } };
struct Rect : Shape { float w, h; __device__ float size() const { return scale * w * h; } };

__device__ unsigned lane_of(dim3 block, unsigned t) { return (t + block.x * block.y) & 31; }

__global__ void records(const point* pts, float* out) {
    int i = threadIdx.x;
    const point* point = pts + 2 * i;       // named like its type
    float weights[3] = {0.5f, 0.25f, 0.25f};
    float acc = 0.0f;
    for (float w : weights) acc += w * point->x;
    Rect r;
    r.scale = 0.5f; r.w = point[1].x; r.h = point[1].y;
    float* mine = out + 2 * i + 1;           // float * and const float *: const float *
    const float* pick = (i & 1) ? mine : &point->y;
    out[2 * i] = acc + r.size() + pick[0] + (float)lane_of(blockDim, threadIdx.x);
    out[2 * i + 1] = point[0].x * point[1].y - point[0].y * point[1].x;
}
