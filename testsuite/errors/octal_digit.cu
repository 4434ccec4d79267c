// ERROR: 3:16: invalid digit in octal constant '09'
__global__ void k(int* a) {
    a[0] = 1 + 09;
}
