// ERROR: 7:12: use of undeclared identifier 'total'
// ERROR: 8:17: invalid operands to binary expression ('float' and 'float'): '%' needs integers
// ERROR: 9:12: 'break' statement not in loop or switch statement
// ERROR: 10:13: void function 'k' should not return a value
__global__ void k(float* a) {
    int i = threadIdx.x;
    a[i] = total;
    a[i] = a[i] % 2.0f;
    if (i) break;
    if (!i) return 1;
}
