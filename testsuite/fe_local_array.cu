// Local arrays: small ones indexed with constants live in registers (SROA, after the
// loops over them unroll); one indexed at run time lives in local memory
// (__local_depot), as NVVM places them; initializer lists fill them.
// LAUNCH: local_array grid=4 block=64 in=f32[256]:rand sel=i32[256]:randint(0,7) out=f32[1024]:zero n=256

__global__ void local_array(const float* in, const int* sel, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i];
    float powers[4];
    powers[0] = 1.0f;
    for (int k = 1; k < 4; k++)
        powers[k] = powers[k - 1] * x;
    float lut[8] = {0.5f, 1.5f, 2.5f, 3.5f, -1.0f, -2.0f, x, x * x};
    int hist[8] = {0};
    for (int k = 0; k < 32; k++)
        hist[(i + k * 3) & 7] += k;
    float acc = 0.0f;
    for (int k = 0; k < 4; k++)
        acc += powers[k] * (k + 1);
    out[4 * i] = acc;
    out[4 * i + 1] = lut[sel[i]];
    out[4 * i + 2] = (float)(hist[sel[i]] - hist[0]);
    int small[3] = {1, 2, 3};
    small[i % 3] = 10;
    out[4 * i + 3] = (float)(small[0] + small[1] * 10 + small[2] * 100);
}
