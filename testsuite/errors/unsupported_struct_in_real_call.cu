// ERROR: 6:27: unsupported feature: a parameter of type 'Pair' in a call that is not inlined
// ERROR: 13:30: unsupported feature: an argument of type 'Pair' in a call that is not inlined
// Recursive __device__ functions are .funcs with scalar parameters and results; a struct
// passed by value is not supported yet.
struct Pair { int a, b; };
__device__ int depth(Pair p) {
    Pair q = {p.a - 1, p.b + 1};
    return p.a <= 0 ? p.b : depth(q);
}

__global__ void k(int* out) {
    Pair p = {(int)threadIdx.x, 0};
    out[threadIdx.x] = depth(p);
}
