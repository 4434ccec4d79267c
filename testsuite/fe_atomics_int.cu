// Integer atomics on global and shared memory: atomicAdd, atomicSub, atomicMin,
// atomicMax, atomicAnd, atomicOr, atomicXor, atomicExch, atomicCAS (a lock-free
// add loop), atomicInc/atomicDec, on int, unsigned and unsigned long long.  Each
// result is independent of the order in which threads arrive.
// LAUNCH: atomics_int grid=4 block=128 v=i32[512]:randint(-10000,10000) g=i32[16]:zero u=u32[16]:zero w=u64[4]:zero n=512

__global__ void atomics_int(const int* v, int* g, unsigned* u, unsigned long long* w, int n) {
    __shared__ int s_sum;
    __shared__ unsigned s_or;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) {
        s_sum = 0;
        s_or = 0;
    }
    __syncthreads();
    if (i < n) {
        int x = v[i];
        atomicAdd(&g[0], x);
        atomicSub(&g[1], x);
        atomicMin(&g[2], x);
        atomicMax(&g[3], x);
        atomicAnd(&g[4], x | 0x10000);
        atomicOr(&g[5], x & 0xff);
        atomicXor(&g[6], x);
        atomicAdd(&u[0], (unsigned)x);
        atomicMin(&u[1], (unsigned)x);
        atomicMax(&u[2], (unsigned)x);
        atomicInc(&u[3], 100u);
        atomicExch(&g[7], 42);
        int old = g[8];
        int assumed;
        do {
            assumed = old;
            old = atomicCAS(&g[8], assumed, assumed + 1);
        } while (old != assumed);
        atomicAdd(&w[0], (unsigned long long)(x + 20000));
        atomicAdd(&s_sum, x);
        atomicOr(&s_or, 1u << (x & 31));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&g[9], s_sum);
        atomicOr(&u[4], s_or);
        atomicMax(&g[10], s_sum);
    }
}
