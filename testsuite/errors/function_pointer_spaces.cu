// ERROR: 10:13: unsupported feature: the address of the __global__ function 'child' in device code
// ERROR: 11:15: a __host__ function("hostf") cannot be used as a function pointer in a __global__ function("k")
__global__ void child(int* a) { a[0] = 1; }
__host__ int hostf(int x) { return x + 1; }

typedef void (*kfn)(int* p);
typedef int (*unop)(int);

__global__ void k(int* a) {
    kfn g = child;
    unop h = &hostf;
    a[threadIdx.x] = h(1);
}
