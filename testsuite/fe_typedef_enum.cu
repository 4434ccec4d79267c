// typedef (of scalars, pointers and structs) and enum (with explicit values, in
// arithmetic, as a switch selector and as a kernel parameter).
// LAUNCH: typedef_enum grid=2 block=128 ops=i32[256]:randint(0,4) a=f32[256]:rand b=f32[256]:rand out=f32[256]:zero mode=2 n=256

typedef float real;
typedef const real* real_ptr;
typedef unsigned int index_t;
enum Op { ADD, SUB, MUL = 5, MAX, MIN = 10 };
typedef enum { LINEAR = 1, SQUARE = 2 } Mode;
typedef struct { real lo, hi; } Range;

__device__ real apply(enum Op op, real x, real y) {
    switch (op) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case MAX: return x > y ? x : y;
    default: return x < y ? x : y;
    }
}

__global__ void typedef_enum(const int* ops, real_ptr a, real_ptr b, real* out, Mode mode, index_t n) {
    index_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    static const int unused = 0;
    Op table[5] = {ADD, SUB, MUL, MAX, MIN};
    Op op = table[ops[i]];
    Range r = {-0.5f, 0.5f};
    real v = apply(op, a[i], b[i]);
    if (mode == SQUARE)
        v = v * v;
    v = v < r.lo ? r.lo : v > r.hi ? r.hi : v;
    out[i] = v + (real)op * 0.01f + (real)(MIN - MAX);
}
