// constexpr as kernels use it: constexpr functions (recursive too) giving array sizes
// and template arguments, `const int n = 100; float h[n];`, static_assert, an
// `enum class` in a switch, a `struct __align__(16)` staged through shared memory.
// LAUNCH: stage grid=2 block=64 in=f32[512]:rand out=f32[512]:zero mode=1
// LAUNCH: stage grid=2 block=64 in=f32[512]:rand out3=f32[512]:zero mode=2

__host__ __device__ constexpr int div_up(int a, int b) { return (a + b - 1) / b; }
__host__ __device__ constexpr int log2i(int n) { return n <= 1 ? 0 : 1 + log2i(n / 2); }

enum class Op : int { Copy = 0, Scale = 1, Square = 2 };

struct __align__(16) Quad {
    float a, b, c, d;
};

template <int SHIFT>
__device__ float shifted(float x) { return x * (float)(1 << SHIFT); }

__global__ void stage(const float* in, float* out, int mode) {
    const int n = 64;
    constexpr int QUADS = div_up(n, 4);
    static_assert(QUADS == 16 && log2i(n) == 6, "sizes");
    static_assert(sizeof(Quad) == 16, "Quad is 16 bytes");
    __shared__ Quad tile[QUADS];
    float h[n / 16];
    int t = threadIdx.x;
    const float* src = in + blockIdx.x * 256;
    if (t < QUADS) {
        Quad q;
        q.a = src[4 * t];
        q.b = src[4 * t + 1];
        q.c = src[4 * t + 2];
        q.d = src[4 * t + 3];
        tile[t] = q;
    }
    __syncthreads();
    for (int k = 0; k < n / 16; ++k)
        h[k] = tile[(t + k) % QUADS].b;
    float v = h[0] + h[1] + h[2] + h[3];
    Op op = static_cast<Op>(mode);
    switch (op) {
    case Op::Copy:
        break;
    case Op::Scale:
        v = shifted<log2i(8)>(v);
        break;
    case Op::Square:
        v = v * v;
        break;
    }
    out[blockIdx.x * 256 + t] = v;
}
