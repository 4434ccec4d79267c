// ERROR: 4:16: unsupported feature: new and delete
// Dynamic allocation with new/delete is named.
void host_side() {
    float* p = new float[16];
}
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
