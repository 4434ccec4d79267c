// ERROR: 2:1: unsupported #include 'thrust/device_vector.h': only system headers the frontend knows (assert.h, cuda.h, cuda_runtime.h, cuda_runtime_api.h, device_launch_parameters.h, float.h, limits.h, math.h, math_constants.h, stddef.h, stdint.h, stdio.h, stdlib.h, string.h, time.h) are accepted
#include <thrust/device_vector.h>
__global__ void k(int* a) { a[0] = 1; }
