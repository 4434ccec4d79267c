// asm volatile with operands and constraints, as hand-tuned kernels write it: "r" "l"
// "f" "d" "h" "n" inputs, "=r" "=l" "=f" "=d" "=h" outputs, "+r" read-write operands,
// the "memory" clobber, several instructions in one statement, a PTX-scoped register,
// and special registers read through asm (%laneid, %warpid-free helpers).
// LAUNCH: asm_ops grid=2 block=64 a=i32[128]:rand b=u32[128]:rand l=u64[128]:rand f=f32[128]:rand d=f64[128]:rand h=u16[128]:rand out=u32[1024]:zero lout=u64[256]:zero fout=f32[256]:zero dout=f64[128]:zero hout=u16[128]:zero
#include <cstdint>

__device__ __forceinline__ unsigned lane_id() {
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

__device__ __forceinline__ uint32_t bfe(uint32_t x, uint32_t pos, uint32_t len) {
    uint32_t r;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(pos), "r"(len));
    return r;
}

__device__ __forceinline__ float fma_rz(float a, float b, float c) {
    float r;
    asm("fma.rz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
    return r;
}

__global__ void asm_ops(const int* a, const unsigned* b, const unsigned long long* l, const float* f,
                        const double* d, const unsigned short* h, unsigned* out, unsigned long long* lout,
                        float* fout, double* dout, unsigned short* hout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned r;
    asm volatile("add.s32 %0, %1, %2;" : "=r"(r) : "r"(a[i]), "n"(17));
    out[i] = r;
    unsigned acc = b[i];
    asm("add.u32 %0, %0, %1;" : "+r"(acc) : "r"(r));
    asm("xor.b32 %0, %0, 0x5a5a;" : "+r"(acc));
    out[128 + i] = acc;
    out[256 + i] = lane_id();
    out[384 + i] = bfe(b[i], 4, 8);
    unsigned lo, hi;
    asm("mov.b64 {%0, %1}, %2;" : "=r"(lo), "=r"(hi) : "l"(l[i]));
    out[512 + i] = lo ^ hi;
    unsigned long long wide;
    asm("mul.wide.u32 %0, %1, %2;" : "=l"(wide) : "r"(b[i]), "r"(lo));
    lout[i] = wide;
    asm("{\n\t.reg .u64 t;\n\tshl.b64 t, %1, 3;\n\tadd.u64 %0, t, %1;\n\t}" : "=l"(wide) : "l"(l[i]));
    lout[128 + i] = wide;
    float y;
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(y) : "f"(f[i]), "f"(3.0f));
    fout[i] = y;
    fout[128 + i] = fma_rz(f[i], y, 1.0f);
    double z;
    asm("fma.rn.f64 %0, %1, %1, %2;" : "=d"(z) : "d"(d[i]), "d"(0.5));
    dout[i] = z;
    unsigned short s;
    asm("add.u16 %0, %1, %2;" : "=h"(s) : "h"(h[i]), "h"((unsigned short)7));
    hout[i] = s;
    unsigned popc_rev;
    asm("{\n\t.reg .b32 t;\n\tbrev.b32 t, %1;\n\tpopc.b32 %0, t;\n\t}" : "=r"(popc_rev) : "r"(b[i]));
    out[640 + i] = popc_rev;
    // a store through asm, then a load the clobber keeps after it
    asm volatile("st.global.u32 [%0], %1;" :: "l"(out + 768 + i), "r"(acc) : "memory");
    out[896 + i] = out[768 + i] + 1;
}
