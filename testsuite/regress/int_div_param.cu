// Integer division and remainder by a kernel parameter, dividends over the whole range of
// their type (issue 16: ptxc's u32 quotient by a parameter of 7 was about twice nvcc's).
// ptxas's sequence for a divisor d starts from -d * rcp(d); simplify_instrs turned
// `IMAD.MOV R, RZ, RZ, -c[0x0][d]` into a MOV and fold_constants then folded the bank
// value without its minus sign.  Every width, signed and unsigned, by parameters of
// several magnitudes; a second launch of each kernel reuses the same dividends.
// (In testsuite/regress/ until the emulator's tables run nvcc's code of it: nvcc's sm_90
// cubin holds I2F.U32.RP R, UR and sm_89's UISETP.LE forms they lack; then it moves up.)
// LAUNCH: div_u32 grid=32 block=256 x=u32[8192]:rand q=u32[8192]:zero r=u32[8192]:zero d=7
// LAUNCH: div_u32 grid=32 block=256 x=u32[8192]:rand qb=u32[8192]:zero rb=u32[8192]:zero d=0x80000001
// LAUNCH: div_s32 grid=32 block=256 sx=i32[8192]:rand sq=i32[8192]:zero sr=i32[8192]:zero d=-7
// LAUNCH: div_s32 grid=32 block=256 sx=i32[8192]:rand sqb=i32[8192]:zero srb=i32[8192]:zero d=1000003
// LAUNCH: div_u64 grid=8 block=256 lx=u64[2048]:rand lq=u64[2048]:zero lr=u64[2048]:zero d=7
// LAUNCH: div_u64 grid=8 block=256 lx=u64[2048]:rand lqb=u64[2048]:zero lrb=u64[2048]:zero d=0x100000003
// LAUNCH: div_s64 grid=8 block=256 slx=i64[2048]:rand slq=i64[2048]:zero slr=i64[2048]:zero d=-7
// LAUNCH: div_u16 grid=8 block=256 hx=u16[2048]:rand hq=u16[2048]:zero hr=u16[2048]:zero d=7
// LAUNCH: div_s16 grid=8 block=256 shx=i16[2048]:rand shq=i16[2048]:zero shr=i16[2048]:zero d=-7
// LAUNCH: div_u8 grid=8 block=256 bx=u8[2048]:rand bq=u8[2048]:zero br=u8[2048]:zero d=7
// LAUNCH: div_s8 grid=8 block=256 sbx=i8[2048]:rand sbq=i8[2048]:zero sbr=i8[2048]:zero d=-7

__global__ void div_u32(const unsigned *x, unsigned *q, unsigned *r, unsigned d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned ux = x[i];
    q[i] = ux / d;
    r[i] = ux % d;
}

__global__ void div_s32(const int *x, int *q, int *r, int d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    q[i] = x[i] / d;
    r[i] = x[i] % d;
}

__global__ void div_u64(const unsigned long long *x, unsigned long long *q, unsigned long long *r,
                        unsigned long long d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    q[i] = x[i] / d;
    r[i] = x[i] % d;
}

__global__ void div_s64(const long long *x, long long *q, long long *r, long long d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    q[i] = x[i] / d;
    r[i] = x[i] % d;
}

__global__ void div_u16(const unsigned short *x, unsigned short *q, unsigned short *r, unsigned short d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    q[i] = x[i] / d;
    r[i] = x[i] % d;
}

__global__ void div_s16(const short *x, short *q, short *r, short d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    q[i] = x[i] / d;
    r[i] = x[i] % d;
}

__global__ void div_u8(const unsigned char *x, unsigned char *q, unsigned char *r, unsigned char d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    q[i] = x[i] / d;
    r[i] = x[i] % d;
}

__global__ void div_s8(const signed char *x, signed char *q, signed char *r, signed char d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    q[i] = x[i] / d;
    r[i] = x[i] % d;
}
