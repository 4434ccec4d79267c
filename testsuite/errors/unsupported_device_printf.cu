// ERROR: 6:5: unsupported feature: the builtin function 'printf' in device code
#include <stdio.h>

__global__ void hello(int* out) {
    out[threadIdx.x] = 1;
    printf("thread %d\n", threadIdx.x);
}
