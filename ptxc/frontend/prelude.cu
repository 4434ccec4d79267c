// CUDA functions that ptxc writes in CUDA itself, from functions it already has.
// prelude.py adds a definition to a file that names it and does not define it; it is
// inlined at each call like the user's own __device__ functions, so `sincosf(x, &s, &c)`
// keeps s and c in registers.  Each one gives nvcc's bits: testsuite/fe_math_sincos.cu
// checks them against nvcc's own functions.
__device__ __forceinline__ void sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
__device__ __forceinline__ void sincos(double x, double* s, double* c) { *s = sin(x); *c = cos(x); }
__device__ __forceinline__ void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
__device__ __forceinline__ void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
__device__ __forceinline__ void __sincosf(float x, float* s, float* c) { *s = __sinf(x); *c = __cosf(x); }
__device__ __forceinline__ void __nanosleep(unsigned int ns) { asm volatile("nanosleep.u32 %0;" :: "r"(ns)); }
