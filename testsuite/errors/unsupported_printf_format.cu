// ERROR: 6:12: unsupported feature: printf with a format that is not a string literal
#include <stdio.h>

__global__ void hello(int* out, const char* fmt) {
    out[threadIdx.x] = 1;
    printf(fmt, threadIdx.x);
}
