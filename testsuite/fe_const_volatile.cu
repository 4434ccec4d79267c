// Qualifiers: const locals and parameters, const pointers, __restrict__ (so loads of
// read-only data use ld.global.nc), volatile (loads and stores that are neither
// merged nor removed: ld.volatile / st.volatile).
// LAUNCH: const_volatile grid=2 block=128 in=f32[256]:rand flags=i32[256]:randint(0,1) out=f32[256]:zero vol=i32[256]:zero n=256

__global__ void const_volatile(const float* __restrict__ in, const int* __restrict__ flags,
                               float* __restrict__ out, volatile int* vol, const int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const float scale = 1.5f;
    const float* const p = in + i;
    vol[i] = 1;
    vol[i] = vol[i] + flags[i];
    int seen = vol[i];
    out[i] = *p * scale + (float)seen + in[i] * 0.5f;
}
