// Type traits as kernels use them: a class template declared, then fully specialized
// per type, with static constant members, static member functions and member type
// aliases (`typename Limits<T>::acc_t`), read through a kernel template; `if constexpr`
// on a trait; range-based for over a local array (by value and by reference).
// LAUNCH: reduce_rows<float> grid=4 block=32 in=f32[512]:randint(-9,9) out=f32[128]:zero cols=4
// LAUNCH: reduce_rows<int> grid=4 block=32 ini=i32[512]:randint(-1000,1000) outi=i32[128]:zero cols=4

template <typename T> struct Limits;

template <> struct Limits<float> {
    using acc_t = double;
    static const bool is_integer = false;
    __host__ __device__ static constexpr float lowest() { return -3.0e38f; }
};

template <> struct Limits<int> {
    using acc_t = long long;
    static const bool is_integer = true;
    __host__ __device__ static constexpr int lowest() { return -2147483647 - 1; }
};

template <typename T>
__global__ void reduce_rows(const T* in, T* out, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    T vals[4];
    for (int c = 0; c < 4; ++c)
        vals[c] = in[row * cols + c];
    typename Limits<T>::acc_t sum = 0;
    T base = Limits<T>::lowest() / T(1 << 20);
    for (T v : vals) {
        sum += v;
        base += v > 0 ? v : -v;
    }
    for (T& v : vals)
        v = v - base;
    T spread = vals[0] + vals[1] + vals[2] + vals[3];
    if constexpr (Limits<T>::is_integer)
        out[row] = (T)(sum % 1000) + spread;
    else
        out[row] = (T)(sum * 0.25) + spread;
}

template __global__ void reduce_rows<float>(const float*, float*, int);
template __global__ void reduce_rows<int>(const int*, int*, int);
