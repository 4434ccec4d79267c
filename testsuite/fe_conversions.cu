// Conversions C performs and those written as casts: float to int truncates, to
// unsigned; int to float rounds to nearest; double to float; char and short wrap;
// bool from int, float and pointer; functional casts and static_cast; the
// rounding intrinsics __float2int_rn/_rz/_rd/_ru and __int2float_rn.
// LAUNCH: conversions grid=2 block=64 f=f32[128]:rand d=f64[128]:rand k=i32[128]:rand out=i32[2048]:zero fo=f32[512]:zero

__global__ void conversions(const float* f, const double* d, const int* k, int* out, float* fo) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = f[i] * 1000.0f;
    double y = d[i] * 1e6;
    int m = k[i];
    int* o = out + 16 * i;
    o[0] = (int)x;
    o[1] = (int)(unsigned)(x > 0.0f ? x : -x);
    o[2] = (int)(long long)y;
    o[3] = (char)m;
    o[4] = (unsigned char)m;
    o[5] = (short)m;
    o[6] = (unsigned short)m;
    o[7] = (bool)m + (bool)x * 2 + (bool)(f + i) * 4;
    o[8] = int(x * 0.5f) + static_cast<int>(y * 0.25);
    o[9] = __float2int_rn(x) - __float2int_rz(x);
    o[10] = __float2int_rd(x) * 3 + __float2int_ru(x);
    o[11] = (int)(float)m - m;
    o[12] = (int)(double)(float)y;
    o[13] = (long long)m * 3 >> 1;
    o[14] = (int)((unsigned long long)(unsigned)m * 7u % 1000003u);
    o[15] = (signed char)(m >> 8) * (unsigned char)(m >> 16);
    float* p = fo + 4 * i;
    p[0] = (float)m;
    p[1] = (float)y;
    p[2] = __int2float_rn(m) + (float)(unsigned)m;
    p[3] = (float)(long long)y * 0.5f;
}
