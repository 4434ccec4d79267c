// cooperative_groups/reduce.h as ptxc implements it: cg::reduce over a tile with the
// functors cg::plus, less, greater, bit_and, bit_or, bit_xor.  A 32-bit integer reduce
// is one redux.sync (sm_80+), as NVVM emits it; any other a butterfly of shuffles,
// halving the distance from Size/2 (op(value, the partner's value)).
// ptxc's own text, not NVIDIA's.
#pragma once
#include <cooperative_groups.h>

namespace cooperative_groups {

template <typename T> struct plus { __device__ T operator()(const T a, const T b) const { return a + b; } };
template <typename T> struct less { __device__ T operator()(const T a, const T b) const { return b < a ? b : a; } };
template <typename T> struct greater { __device__ T operator()(const T a, const T b) const { return a < b ? b : a; } };
template <typename T> struct bit_and { __device__ T operator()(const T a, const T b) const { return a & b; } };
template <typename T> struct bit_or { __device__ T operator()(const T a, const T b) const { return a | b; } };
template <typename T> struct bit_xor { __device__ T operator()(const T a, const T b) const { return a ^ b; } };

// Which redux.sync a functor over a 32-bit integer is (0: none).
template <typename Op> struct __ptxc_redux { static const int kind = 0; };
template <> struct __ptxc_redux<plus<int> > { static const int kind = 1; };
template <> struct __ptxc_redux<plus<unsigned int> > { static const int kind = 1; };
template <> struct __ptxc_redux<less<int> > { static const int kind = 2; };
template <> struct __ptxc_redux<less<unsigned int> > { static const int kind = 2; };
template <> struct __ptxc_redux<greater<int> > { static const int kind = 3; };
template <> struct __ptxc_redux<greater<unsigned int> > { static const int kind = 3; };
template <> struct __ptxc_redux<bit_and<int> > { static const int kind = 4; };
template <> struct __ptxc_redux<bit_and<unsigned int> > { static const int kind = 4; };
template <> struct __ptxc_redux<bit_or<int> > { static const int kind = 5; };
template <> struct __ptxc_redux<bit_or<unsigned int> > { static const int kind = 5; };
template <> struct __ptxc_redux<bit_xor<int> > { static const int kind = 6; };
template <> struct __ptxc_redux<bit_xor<unsigned int> > { static const int kind = 6; };

template <unsigned int Size, typename T, typename Op>
__device__ __forceinline__ T reduce(const thread_block_tile<Size>& g, T val, Op op) {
    if constexpr (__ptxc_redux<Op>::kind == 1) {
        return __reduce_add_sync(g.__mask(), val);
    } else if constexpr (__ptxc_redux<Op>::kind == 2) {
        return __reduce_min_sync(g.__mask(), val);
    } else if constexpr (__ptxc_redux<Op>::kind == 3) {
        return __reduce_max_sync(g.__mask(), val);
    } else if constexpr (__ptxc_redux<Op>::kind == 4) {
        return __reduce_and_sync(g.__mask(), val);
    } else if constexpr (__ptxc_redux<Op>::kind == 5) {
        return __reduce_or_sync(g.__mask(), val);
    } else if constexpr (__ptxc_redux<Op>::kind == 6) {
        return __reduce_xor_sync(g.__mask(), val);
    } else {
        // log2(Size) steps, at distances Size/2, Size/4, ..., 1
        const int steps = (Size >= 2) + (Size >= 4) + (Size >= 8) + (Size >= 16) + (Size >= 32);
#pragma unroll
        for (int step = 0; step < steps; step++)
            val = op(val, g.shfl_xor(val, (int)(Size >> (step + 1))));
        return val;
    }
}

}  // namespace cooperative_groups
