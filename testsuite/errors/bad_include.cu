// ERROR: 2:1: unsupported #include 'thrust/device_vector.h': no such file in the -I folders, and not a system header ptxc has (assert.h, cassert, cfloat, climits, cmath, cstddef, cstdint, cstdio, cstdlib, cstring, ctime, cuda.h, cuda_runtime.h, cuda_runtime_api.h, device_functions.h, device_launch_parameters.h, float.h, limits.h, math.h, math_constants.h, sm_20_atomic_functions.h, sm_60_atomic_functions.h, stddef.h, stdint.h, stdio.h, stdlib.h, string.h, time.h, vector_types.h)
#include <thrust/device_vector.h>
__global__ void k(int* a) { a[0] = 1; }
