// ERROR: 9:15: no member named 'z' in 'Vec2'
// ERROR: 10:14: cannot convert 'Vec2' to 'float' when assigning
// ERROR: 11:15: member reference base type 'float' is not a structure or union
struct Vec2 { float x, y; };

__global__ void k(Vec2* v, float* out) {
    Vec2 a = v[threadIdx.x];
    float f = a.x;
    out[0] = a.z;
    out[1] = a;
    out[2] = f.x;
}
