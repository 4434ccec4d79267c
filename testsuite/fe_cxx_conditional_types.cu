// The conditional operator as C++ types it: `c ? char* : const char*` (the composite
// pointer type, qualifiers joined), a pointer against `nullptr`, two shorts staying
// short, an enum against an int, unsigned/signed mixes (the usual arithmetic
// conversions), and `c ? v : w` of one class choosing whole structs.
// LAUNCH: pick_bytes grid=1 block=128 text=u8[256]:randint(0,127) alt=u8[256]:randint(0,127) out=i32[128]:zero n=128
// LAUNCH: pick_values grid=2 block=64 a=i16[128]:randint(-300,300) b=u32[128]:randint(0,70000) out=i32[512]:zero
// LAUNCH: pick_structs grid=1 block=64 p=f32[256]:rand out=f32[128]:zero

enum Mode { LOW = 1, HIGH = 7 };
struct Pair { float lo, hi; };

__device__ const char* choose(char* mutable_text, const char* fixed, bool first) {
    return first ? mutable_text : fixed;     // char * and const char *: const char *
}

__global__ void pick_bytes(char* text, const char* alt, int* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    const char* p = choose(text + i, alt + i, (i & 1) != 0);
    const char* q = i % 3 == 0 ? nullptr : alt + 2 * i;
    const void* any = i % 5 == 0 ? (const void*)p : text;
    out[i] = *p + (q ? *q : -1) + (any == (const void*)text ? 1000 : 0);
}

__global__ void pick_values(const short* a, const unsigned* b, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    short x = a[i], y = (short)(a[i] >> 1);
    short s = i & 1 ? x : y;                         // short: stays short
    Mode m = x > 0 ? HIGH : LOW;
    int e = i & 2 ? m : -3;                          // enum and int: int
    unsigned u = b[i];
    long long w = i & 4 ? (long long)x : u;          // mixed: the common type
    out[4 * i] = s;
    out[4 * i + 1] = e;
    out[4 * i + 2] = (int)(x < 0 ? u : x);           // unsigned wins: -1 is 4294967295
    out[4 * i + 3] = (int)(w >> 3);
}

__device__ Pair make_pair(float a, float b) { Pair p; p.lo = a < b ? a : b; p.hi = a < b ? b : a; return p; }

__global__ void pick_structs(const float* p, float* out) {
    int i = threadIdx.x;
    Pair a = make_pair(p[4 * i], p[4 * i + 1]);
    Pair b = make_pair(p[4 * i + 2], p[4 * i + 3]);
    Pair w = a.hi - a.lo > b.hi - b.lo ? a : b;
    out[2 * i] = w.lo;
    out[2 * i + 1] = w.hi;
}
