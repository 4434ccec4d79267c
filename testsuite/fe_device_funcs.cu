// __device__ functions: several returns, calls nested in calls and in conditions,
// __forceinline__ and __noinline__ (both inlined by ptxc: NVVM's choice is only
// about code size), a function called from two kernels, pointer parameters that
// write results, and a void function with an early return.
// LAUNCH: device_funcs grid=2 block=128 in=i32[256]:randint(-500,500) out=i32[768]:zero n=256
// LAUNCH: device_funcs2 grid=1 block=256 in=i32[256]:randint(-500,500) out=i32[768]:zero n=256

__device__ int sign(int x) {
    if (x > 0) return 1;
    if (x < 0) return -1;
    return 0;
}

__forceinline__ __device__ int square(int x) { return x * x; }

__noinline__ __device__ int gcd(int a, int b) {
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b != 0) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

__device__ void divmod(int a, int b, int* q, int* r) {
    if (b == 0) {
        *q = 0;
        *r = 0;
        return;
    }
    *q = a / b;
    *r = a % b;
}

__device__ bool is_prime(int x) {
    if (x < 2) return false;
    for (int d = 2; d * d <= x; d++)
        if (x % d == 0) return false;
    return true;
}

__global__ void device_funcs(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = in[i], y = in[(i + 7) % n];
    int q, r;
    divmod(x, y, &q, &r);
    out[3 * i] = sign(x) * square(sign(y) + 2) + gcd(x, y);
    out[3 * i + 1] = q * 1000 + r;
    out[3 * i + 2] = is_prime(x < 0 ? -x : x) ? square(x) : gcd(square(x), 360);
}

__global__ void device_funcs2(const int* in, int* out, int n) {
    int i = threadIdx.x;
    if (i < n)
        out[3 * i + 2] += gcd(in[i], 84) + sign(in[i]);
}
