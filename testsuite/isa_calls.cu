// Device-function calls that stay calls (__noinline__): arguments and results in
// registers, a recursive function with a stack frame, and a function pointer table.
// LAUNCH: call_chain grid=4 block=64 in=i32[256]:randint(0,20) out=i32[256]:zero n=256
// LAUNCH: recursive_fib grid=1 block=32 out=i32[32]:zero
// LAUNCH: call_float grid=4 block=64 x=f32[256]:rand out=f32[256]:zero n=256 ulp=2
// LAUNCH: indirect_call grid=1 block=64 x=i32[64]:randint(-9,9) out=i32[64]:zero

__device__ __noinline__ int mix(int a, int b) {
    return (a * 31) ^ (b + 7);
}

__device__ __noinline__ int clamp_sum(const int* p, int count, int lo, int hi) {
    int s = 0;
    for (int k = 0; k < count; k++) s += p[k];
    return min(max(s, lo), hi);
}

__global__ void call_chain(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = mix(in[i], i);
    int b = clamp_sum(in, in[i] & 7, -100, 100);
    out[i] = mix(a, b);
}

__device__ __noinline__ int fib(int k) {
    return k < 2 ? k : fib(k - 1) + fib(k - 2);
}

__global__ void recursive_fib(int* out) {
    out[threadIdx.x] = fib(threadIdx.x % 12);
}

__device__ __noinline__ float poly(float x, float a, float b, float c) {
    return (a * x + b) * x + c;
}

__device__ __noinline__ float2 polar(float r, float t) {
    return make_float2(r * __cosf(t), r * __sinf(t));
}

__global__ void call_float(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 p = polar(x[i], 0.5f);
    out[i] = poly(x[i], 2.0f, -1.0f, 0.5f) + p.x - p.y;
}

__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }

typedef int (*binop)(int, int);

__global__ void indirect_call(const int* x, int* out) {
    binop ops[3] = {op_add, op_sub, op_mul};
    int i = threadIdx.x;
    binop f = ops[i % 3];
    out[i] = f(x[i], i);
}
