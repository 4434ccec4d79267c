// ERROR: 5:49: unsupported feature: choosing at run time between variables kept in registers (a conditional of their addresses or references)
// A `T&` result chosen by a condition known only at run time would need the object in memory.
struct Pair {
    float a, b;
    __device__ float& pick(bool first) { return first ? a : b; }
};
__global__ void k(float* p) { Pair q{p[0], p[1]}; q.pick(p[2] > 0) = 1.0f; p[3] = q.a + q.b; }
