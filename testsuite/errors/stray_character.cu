// ERROR: 3:14: stray '@' in program
__global__ void k(int* a) {
    a[0] = 1 @ 2;
}
