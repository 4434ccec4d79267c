// Loads and stores of every width and signedness, through global, shared and constant
// memory, with the cache-operator intrinsics (__ldg, __ldcg, __ldcs, __stcs, ...),
// volatile accesses and memory fences.
// LAUNCH: widths grid=2 block=64 b=i8[128]:rand ub=u8[128]:rand s=i16[128]:rand us=u16[128]:rand w=i32[128]:rand l=i64[128]:rand v2=i32[256]:rand v4=i32[512]:rand out=i64[1024]:zero
// LAUNCH: store_widths grid=2 block=64 in=i32[128]:rand b=u8[128]:zero s=u16[128]:zero l=i64[128]:zero v2=f32[256]:zero v4=f32[512]:zero d2=f64[256]:zero
// LAUNCH: cache_hints grid=4 block=64 in=f32[256]:rand in4=f32[1024]:rand out=f32[1024]:zero n=256
// LAUNCH: shared_widths grid=2 block=64 in=i32[128]:rand out=i64[512]:zero
// LAUNCH: constant_table grid=2 block=64 idx=i32[128]:randint(0,63) out=f32[256]:zero
// LAUNCH: fences grid=4 block=32 data=i32[128]:zero flag=i32[4]:zero out=i32[128]:zero

__constant__ float table[64];
__constant__ int coeffs[4];

__global__ void widths(const signed char* b, const unsigned char* ub, const short* s, const unsigned short* us,
                       const int* w, const long long* l, const int2* v2, const int4* v4, long long* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int2 p = v2[i];
    int4 q = v4[i];
    out[8 * i + 0] = b[i];
    out[8 * i + 1] = ub[i];
    out[8 * i + 2] = s[i];
    out[8 * i + 3] = us[i];
    out[8 * i + 4] = w[i];
    out[8 * i + 5] = l[i];
    out[8 * i + 6] = (long long)p.x * p.y;
    out[8 * i + 7] = (long long)q.x + q.y + q.z + q.w;
}

__global__ void store_widths(const int* in, unsigned char* b, unsigned short* s, long long* l, float2* v2,
                             float4* v4, double2* d2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    b[i] = (unsigned char)v;
    s[i] = (unsigned short)(v >> 3);
    l[i] = (long long)v * 3;
    v2[i] = make_float2((float)v, 1.0f);
    v4[i] = make_float4(0.5f, (float)i, -1.0f, (float)(v & 7));
    d2[i] = make_double2((double)v, 0.25);
}

__global__ void cache_hints(const float* __restrict__ in, const float4* __restrict__ in4, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = __ldg(&in[i]) + __ldcg(&in[(i + 1) % n]) + __ldca(&in[(i + 2) % n]);
    float b = __ldcs(&in[(i + 3) % n]) + __ldlu(&in[(i + 4) % n]) + __ldcv(&in[(i + 5) % n]);
    float4 c = __ldg(&in4[i]);
    float4 d = __ldcs(&in4[(i + 7) % n]);
    __stcs(&out[4 * i], a);
    __stcg(&out[4 * i + 1], b);
    __stwt(&out[4 * i + 2], c.x + c.y + c.z + c.w);
    __stwb(&out[4 * i + 3], d.x * d.w);
}

__global__ void shared_widths(const int* in, long long* out) {
    __shared__ signed char sb[64];
    __shared__ unsigned short ss[64];
    __shared__ int sw[64];
    __shared__ long long sl[64];
    __shared__ int4 sq[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    int v = in[i];
    sb[t] = (signed char)v; ss[t] = (unsigned short)v; sw[t] = v; sl[t] = (long long)v << 20;
    sq[t] = make_int4(v, v + 1, v + 2, v + 3);
    __syncthreads();
    int u = 63 - t;
    int4 q = sq[u];
    out[4 * i + 0] = sb[u] + ss[u];
    out[4 * i + 1] = sw[u] + sw[(u + 1) & 63];
    out[4 * i + 2] = sl[u];
    out[4 * i + 3] = q.x + q.y * q.z - q.w;
}

__global__ void constant_table(const int* idx, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = idx[i];
    out[2 * i] = table[k] * coeffs[0] + table[(k + 1) & 63];
    out[2 * i + 1] = table[5] + coeffs[k & 3];
}

__global__ void fences(int* data, volatile int* flag, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    data[i] = i * 3;
    __threadfence();
    if (threadIdx.x == 0) flag[blockIdx.x] = 1;
    __threadfence_block();
    __syncthreads();
    volatile int* vd = data;
    out[i] = vd[i] + flag[blockIdx.x];
    __threadfence_system();
}
