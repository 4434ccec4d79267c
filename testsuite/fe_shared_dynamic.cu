// Dynamic shared memory: `extern __shared__` sized at launch (shared=BYTES), used
// for two arrays of different types carved out of one buffer.
// LAUNCH: dyn_shared grid=8 block=128 shared=1536 in=f32[1024]:rand keys=i32[1024]:randint(0,1000) out=f32[1024]:zero n=1024

extern __shared__ float smem[];

__global__ void dyn_shared(const float* in, const int* keys, float* out, int n) {
    float* vals = smem;
    int* ks = (int*)&smem[blockDim.x];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    vals[t] = i < n ? in[i] : 0.0f;
    ks[t] = i < n ? keys[i] : 0;
    __syncthreads();
    int left = t > 0 ? t - 1 : blockDim.x - 1;
    float r = vals[left] + (ks[t] > ks[left] ? 1.0f : -1.0f);
    if (i < n)
        out[i] = r;
}
