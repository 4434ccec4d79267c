// ERROR: 5:5: expected ';' before 'a'
__global__ void k(int* a) {
    int i = threadIdx.x;
    int j = i * 2
    a[i] = j;
}
