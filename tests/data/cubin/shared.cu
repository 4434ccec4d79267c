// Static shared memory and barriers: sizes, alignments, several kernels with shared windows.
__global__ void reduce(const float* in, float* out) {
    __shared__ float buf[256];
    unsigned t = threadIdx.x;
    buf[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = buf[0];
}

__global__ void twobufs(int* out) {
    __shared__ int a[32];
    __shared__ double b[7];
    a[threadIdx.x % 32] = threadIdx.x;
    b[threadIdx.x % 7] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = a[(threadIdx.x + 1) % 32] + (int)b[(threadIdx.x + 3) % 7];
}

// Odd sizes: the shared segment places each window at its alignment.
__global__ void odd3(char* out) {
    __shared__ char c[3];
    c[threadIdx.x % 3] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = c[(threadIdx.x + 1) % 3];
}

__global__ void pair(double* out) {
    __shared__ double d[2];
    d[threadIdx.x & 1] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = d[(threadIdx.x + 1) & 1];
}

// bar.sync 3: EIATTR_NUM_BARRIERS counts barrier ids, here 4.
__global__ void named_barrier(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    asm volatile("bar.sync 3, 64;");
    out[threadIdx.x] = s[63 - threadIdx.x];
}
