/* The preprocessor: object-like and function-like #define (with # and ##),
   #if / #ifdef / #ifndef / #elif / #else, defined(), #undef, line continuations,
   comments of both kinds, and the system headers accepted without a file. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define N_PER_THREAD 4
#define SQUARE(x) ((x) * (x))
#define MAD(a, b, c) ((a) * (b) + (c))
#define CAT(a, b) a##b
#define MAX3(a, b, c) \
    ((a) > (b) ? ((a) > (c) ? (a) : (c)) \
               : ((b) > (c) ? (b) : (c)))
#define USE_FAST 1
#if defined(USE_FAST) && USE_FAST > 0
#define SCALE 2
#elif defined(SLOW)
#define SCALE 3
#else
#define SCALE 4
#endif
#ifndef __CUDA_ARCH__
#error "device code only"
#endif
#define TEMP 7
#undef TEMP
#ifdef TEMP
#error "TEMP was undefined"
#endif

// LAUNCH: preprocessor grid=2 block=64 in=i32[512]:randint(-100,100) out=i32[512]:zero

__global__ void preprocessor(const int* in, int* out) {
    int CAT(my, index) = blockIdx.x * blockDim.x + threadIdx.x;  // myindex
    for (int k = 0; k < N_PER_THREAD; k++) {
        int j = myindex * N_PER_THREAD + k;
        int v = in[j];
        out[j] = SQUARE(v + 1) / SCALE + MAD(v, 3, -1) + MAX3(v, k, -v);
    }
}
