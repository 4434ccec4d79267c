// ERROR: 3:1: unsupported feature: templates
// Templates parse, and are reported by name.
template <typename T>
__global__ void scale(T* data, T factor) {
    data[threadIdx.x] *= factor;
}
