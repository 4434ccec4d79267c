// Constants as classes and files declare them: static data members declared in the
// class and defined outside (`const float Cfg::scale = 0.5f;`), `static constexpr`
// members, file-scope `const`/`constexpr` values as array bounds (`const int n = 8;
// float h[n];`), in shared and local arrays, and a `__align__(16)` struct.
// LAUNCH: scale_rows grid=4 block=64 in=f32[256]:rand out=f32[256]:zero ulp=1
// LAUNCH: window_sum grid=2 block=128 in=f32[256]:randint(-20,20) out=f32[256]:zero n=256

struct Cfg {
    static const float scale;
    static const int window;
    static constexpr float bias = 0.25f;
    static constexpr int tile = 64;
};
const float Cfg::scale = 0.5f;
const int Cfg::window = 4;

const int kTaps = 3;
constexpr int kHalo = kTaps - 1;
__constant__ float kWeights[kTaps] = {0.25f, 0.5f, 0.25f};

struct __align__(16) Quad { float a, b, c, d; };

__global__ void scale_rows(const float* in, float* out) {
    __shared__ float tile[Cfg::tile + kHalo];
    int t = threadIdx.x;
    int i = blockIdx.x * Cfg::tile + t;
    tile[t + 1] = in[i];
    if (t == 0) tile[0] = i > 0 ? in[i - 1] : 0.0f;
    if (t == Cfg::tile - 1) tile[Cfg::tile + 1] = i + 1 < 256 ? in[i + 1] : 0.0f;
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < kTaps; ++k) acc += kWeights[k] * tile[t + k];
    out[i] = acc * Cfg::scale + Cfg::bias;
}

__global__ void window_sum(const float* in, float* out, int n) {
    const int w = Cfg::window;
    float h[w];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < w; ++k) h[k] = in[(i + k) % n];
    Quad q = {h[0], h[1], h[2], h[3]};
    out[i] = (q.a + q.b) + (q.c + q.d) + (float)(sizeof(Quad) + alignof(Quad));
}
