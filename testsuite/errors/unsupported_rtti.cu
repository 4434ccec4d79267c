// ERROR: 5:15: unsupported feature: RTTI (dynamic_cast)
// Run-time type information is named.
struct Base { int tag; };
void host_side(Base* b) {
    Base* d = dynamic_cast<Base*>(b);
}
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
