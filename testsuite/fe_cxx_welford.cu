// LayerNorm statistics as a class: a running-moments accumulator with constructors, a
// const combine() and operator+=, merged across a warp by shuffling its fields, in a
// kernel template on the row length.  Integer-valued inputs and power-of-two counts
// keep every step exact.
// LAUNCH: row_stats<256> grid=8 block=32 x=f32[2048]:randint(-16,16) sums=f32[8]:zero sq=f32[8]:zero

struct Moments {
    float n, sum, sq;
    __device__ Moments() : n(0.0f), sum(0.0f), sq(0.0f) {}
    __device__ Moments(float x) : n(1.0f), sum(x), sq(x * x) {}
    __device__ Moments combine(const Moments& o) const {
        Moments r;
        r.n = n + o.n;
        r.sum = sum + o.sum;
        r.sq = sq + o.sq;
        return r;
    }
    __device__ Moments& operator+=(const Moments& o) {
        *this = combine(o);
        return *this;
    }
    __device__ float mean() const { return sum / n; }
};

__device__ Moments shuffle_down(const Moments& m, int offset) {
    Moments r;
    r.n = __shfl_down_sync(0xffffffffu, m.n, offset);
    r.sum = __shfl_down_sync(0xffffffffu, m.sum, offset);
    r.sq = __shfl_down_sync(0xffffffffu, m.sq, offset);
    return r;
}

template <int COLS>
__global__ void row_stats(const float* x, float* sums, float* sq) {
    const float* row = x + blockIdx.x * COLS;
    Moments acc;
    for (int c = threadIdx.x; c < COLS; c += 32)
        acc += Moments(row[c]);
    for (int offset = 16; offset > 0; offset /= 2)
        acc += shuffle_down(acc, offset);
    if (threadIdx.x == 0) {
        sums[blockIdx.x] = acc.mean() * acc.n;
        sq[blockIdx.x] = acc.sq;
    }
}

template __global__ void row_stats<256>(const float*, float*, float*);
