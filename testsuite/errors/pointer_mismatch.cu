// ERROR: 3:14: cannot convert 'float *' to 'int *' when initializing
__global__ void k(float* a) {
    int* p = a;
    p[0] = 1;
}
