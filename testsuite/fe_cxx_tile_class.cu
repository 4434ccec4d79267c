// A class template holding an array, used both as a register tile and in shared
// memory: `Tile<T, N>` with member functions that load, transform and reduce it
// (called on a __shared__ instance and on a local one), a default constructor
// zeroing it, a member function template.
// LAUNCH: tile_sums<float, 32> grid=4 block=32 in=f32[128]:randint(-20,20) out=f32[8]:zero
// LAUNCH: tile_sums<int,16> grid=4 block=16 ini=i32[64]:randint(-500,500) outi=i32[8]:zero

template <typename T, int N>
struct Tile {
    T v[N];
    __device__ Tile() {
        for (int k = 0; k < N; ++k) v[k] = T(0);
    }
    __device__ void load(const T* p, int lane) { v[lane] = p[lane]; }
    __device__ T sum() const {
        T s = 0;
        for (int k = 0; k < N; ++k) s += v[k];
        return s;
    }
    template <typename F>
    __device__ void apply(int lane, F f) { v[lane] = f(v[lane]); }
};

template <typename T, int N>
__global__ void tile_sums(const T* in, T* out) {
    __shared__ Tile<T, N> tile;
    int lane = threadIdx.x;
    tile.load(in + blockIdx.x * N, lane);
    __syncthreads();
    tile.apply(lane, [](T x) { return x * 2 + 1; });
    __syncthreads();
    if (lane == 0) {
        Tile<T, N> local;
        local.v[0] = tile.sum();
        out[2 * blockIdx.x] = local.sum();
        out[2 * blockIdx.x + 1] = tile.v[N - 1];
    }
}

template __global__ void tile_sums<float, 32>(const float*, float*);
template __global__ void tile_sums<int, 16>(const int*, int*);
