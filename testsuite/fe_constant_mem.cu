// Module-scope variables: __constant__ arrays and scalars with initializers (read with
// ld.const, at constant offsets or indexed), a __device__ array and counter in
// global memory, and a struct in constant memory.
// LAUNCH: constant_mem grid=2 block=128 in=f32[256]:rand out=f32[256]:zero counts=u32[4]:zero n=256
// LAUNCH: read_counter grid=1 block=32 out=f32[256]:zero counts=u32[4]:zero

struct Params { float gain; float bias; int taps; };

__constant__ float coeffs[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};
__constant__ int offsets[] = {-2, -1, 0, 1, 2};
__constant__ Params params = {1.5f, -0.25f, 5};
__constant__ float scale = 0.5f;
__device__ unsigned int hits;
__device__ float history[256];

__global__ void constant_mem(const float* in, float* out, unsigned* counts, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float s = 0.0f;
    for (int k = 0; k < params.taps; k++) {
        int j = i + offsets[k];
        if (j >= 0 && j < n)
            s += coeffs[k] * in[j];
    }
    float r = s * params.gain + params.bias * scale;
    history[i] = r;
    if (r > 0.0f)
        atomicAdd(&hits, 1u);
    out[i] = r + coeffs[i % 5];
    atomicAdd(&counts[i & 3], 1u);
}

__global__ void read_counter(float* out, unsigned* counts) {
    if (threadIdx.x == 0)
        counts[0] += hits;
    out[threadIdx.x] += history[threadIdx.x * 8];
}
