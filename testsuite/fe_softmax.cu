// Row-wise softmax: one block per row, a max reduction and a sum reduction in shared
// memory, expf on every element (full-precision libdevice code), a division by the sum.
// LAUNCH: softmax grid=16 block=128 in=f32[4096]:rand out=f32[4096]:zero cols=256

__global__ void softmax(const float* in, float* out, int cols) {
    __shared__ float red[128];
    const float* row = in + blockIdx.x * cols;
    float* dst = out + blockIdx.x * cols;
    int t = threadIdx.x;
    float m = -3.0e38f;
    for (int c = t; c < cols; c += blockDim.x)
        m = fmaxf(m, row[c] * 8.0f);
    red[t] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = t; c < cols; c += blockDim.x)
        sum += expf(row[c] * 8.0f - m);
    red[t] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            red[t] += red[t + s];
        __syncthreads();
    }
    sum = red[0];
    for (int c = t; c < cols; c += blockDim.x)
        dst[c] = expf(row[c] * 8.0f - m) / sum;
}
