// ERROR: 4:5: unsupported feature: exceptions
// C++ exceptions (nvcc rejects them in device code too) are named.
void host_side(int n) {
    try {
        n = n + 1;
    } catch (...) {
    }
}
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
