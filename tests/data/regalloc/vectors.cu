// 128-bit loads and stores: quads next to pairs.
__global__ void copy4(const float4* a, float4* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    b[i] = a[i];
}
__global__ void add4v(const float4* a, const float4* b, float4* c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}
__global__ void int4_sum(const int4* a, int* b) {
    int i = threadIdx.x;
    int4 v = a[i];
    b[i] = v.x ^ v.y ^ v.z ^ v.w;
}
__global__ void scale4(float4* a, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = a[i];
    v.x *= s; v.y *= s; v.z *= s; v.w *= s;
    a[i] = v;
}
__global__ void d2add(const double2* a, double2* b) {
    int i = threadIdx.x;
    double2 v = a[i];
    b[i] = make_double2(v.x + v.y, v.x - v.y);
}
__global__ void store4(float4* out, float x) {
    int i = threadIdx.x;
    out[i] = make_float4(x, x + 1.0f, x * 2.0f, 0.0f);
}
