// C++ templates as block reductions are written: a kernel template with a non-type
// BLOCK and a type T, explicit instantiations, a __device__ function template called
// with deduced arguments, a default template argument, __launch_bounds__ on BLOCK.
// LAUNCH: block_sum<256, float> grid=8 block=256 in=f32[2048]:rand out=f32[8]:zero n=2000 ulp=2
// LAUNCH: block_sum<128,int> grid=16 block=128 in=i32[2048]:randint(-1000,1000) out=i32[16]:zero n=2048
// LAUNCH: block_max<64> grid=4 block=64 in=f32[256]:rand out=f32[4]:zero

template <typename T>
__device__ T combine(T a, T b) { return a + b; }

template <typename T, int STRIDE = 1>
__device__ T load(const T* p, int i, int n) { return i * STRIDE < n ? p[i * STRIDE] : T(0); }

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) block_sum(const T* in, T* out, int n) {
    __shared__ T partial[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    partial[threadIdx.x] = load(in, i, n);
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            partial[threadIdx.x] = combine(partial[threadIdx.x], partial[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

template __global__ void block_sum<256, float>(const float*, float*, int);
template __global__ void block_sum<128, int>(const int*, int*, int);

template <int BLOCK, typename T = float>
__global__ void block_max(const T* in, T* out) {
    __shared__ T partial[BLOCK];
    partial[threadIdx.x] = in[blockIdx.x * BLOCK + threadIdx.x];
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

template __global__ void block_max<64>(const float*, float*);
