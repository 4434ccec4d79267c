// Floating-point atomicAdd (float and double) and atomicExch on float, with values
// whose sums are exact (small integers and halves), so any order gives the same bits.
// LAUNCH: atomics_float grid=4 block=64 v=i32[256]:randint(-64,64) f=f32[8]:zero d=f64[8]:zero n=256

__global__ void atomics_float(const int* v, float* f, double* d, int n) {
    __shared__ float s;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        s = 0.0f;
    __syncthreads();
    if (i < n) {
        float x = v[i] * 0.5f;
        atomicAdd(&f[0], x);
        atomicAdd(&f[1 + (i & 3)], 1.0f);
        atomicAdd(&d[0], (double)v[i] * 0.25);
        atomicAdd(&s, x);
        atomicExch(&f[5], 3.0f);
        float old = atomicAdd(d[1] == 0.0 ? &f[6] : &f[7], 2.0f);
        (void)old;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(&d[2], (double)s);
}
