// ERROR: 6:5: calling a __host__ function("helper") from a __global__ function("k") is not allowed
#include <stdlib.h>
int helper(int x) { return x + 1; }

__global__ void k(int* a) {
    helper(a[0]);
}
