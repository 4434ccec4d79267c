// Double-precision math: sqrt rsqrt exp exp2 log log2 sin cos tanh pow fabs fmin fmax
// floor ceil round fma, including sin/cos's slow-path call for huge arguments.
// LAUNCH: math_double grid=2 block=64 x=f64[128]:rand y=f64[128]:rand out=f64[2048]:zero n=128

__global__ void math_double(const double* x, const double* y, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double a = x[i], b = y[i];
    double* o = out + 16 * i;
    o[0] = sqrt(fabs(a)) + rsqrt(fabs(b) + 0.01);
    o[1] = exp(a * 20.0);
    o[2] = exp2(b * 30.0);
    o[3] = log(fabs(a) + 1e-9);
    o[4] = log2(fabs(b) * 1000.0);
    o[5] = sin(a * 4.0);
    o[6] = cos(b * 4.0);
    o[7] = sin(a * 1e12) + cos(b * 1e15);
    o[8] = tanh(a * 3.0);
    o[9] = pow(fabs(a) + 0.5, b * 4.0);
    o[10] = fmin(a, b) * fmax(a, b);
    o[11] = floor(a * 100.0) - ceil(b * 100.0);
    o[12] = round(a * 9.5);
    o[13] = fma(a, b, -0.125);
    o[14] = pow(a, 3.0) + pow(2.0, b);
    o[15] = (double)expf((float)a) + (double)sinf((float)b);
}
