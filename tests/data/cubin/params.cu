// Several kernels in one file, with scalar, struct-by-value and array-in-struct parameters.
struct Pair { int a; double b; };
struct Arr { float v[5]; };

__global__ void scale(float* out, const float* in, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = k * in[i];
}

__global__ void mixed(char c, double d, short s, long long q, int* out) {
    out[threadIdx.x] = c + (int)d + s + (int)q;
}

__global__ void bystruct(Pair p, Arr a, double* out) {
    out[threadIdx.x] = p.a + p.b + a.v[threadIdx.x % 5];
}

__global__ void noparams() {}
