// Warp shuffles: __shfl_sync, __shfl_up_sync, __shfl_down_sync and __shfl_xor_sync on
// int, unsigned, float and double (a 64-bit value moves as two halves), with the
// default width and with sub-warp widths.
// LAUNCH: warp_shuffle grid=2 block=128 fi=f32[256]:rand di=f64[256]:rand ii=i32[256]:rand out=f32[2048]:zero dout=f64[512]:zero iout=i32[1024]:zero

__global__ void warp_shuffle(const float* fi, const double* di, const int* ii, float* out, double* dout, int* iout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    float f = fi[i];
    double d = di[i];
    int x = ii[i];
    unsigned u = (unsigned)x;
    out[8 * i] = __shfl_sync(0xffffffff, f, 0);
    out[8 * i + 1] = __shfl_sync(0xffffffff, f, (lane + 5) % 32);
    out[8 * i + 2] = __shfl_up_sync(0xffffffff, f, 1);
    out[8 * i + 3] = __shfl_down_sync(0xffffffff, f, 3);
    out[8 * i + 4] = __shfl_xor_sync(0xffffffff, f, 16);
    out[8 * i + 5] = __shfl_sync(0xffffffff, f, 2, 8);
    out[8 * i + 6] = __shfl_down_sync(0xffffffff, f, 1, 16);
    out[8 * i + 7] = __shfl_xor_sync(0xffffffff, f, 1, 4);
    dout[2 * i] = __shfl_sync(0xffffffff, d, 31 - lane);
    dout[2 * i + 1] = __shfl_xor_sync(0xffffffff, d, 2);
    iout[4 * i] = __shfl_sync(0xffffffff, x, lane / 2);
    iout[4 * i + 1] = (int)__shfl_up_sync(0xffffffff, u, 4, 16);
    iout[4 * i + 2] = __shfl_down_sync(0xffffffff, x, lane & 7);
    float sum = f;
    for (int off = 16; off > 0; off /= 2)
        sum += __shfl_xor_sync(0xffffffff, sum, off);
    iout[4 * i + 3] = (int)(sum * 1000.0f);
}
