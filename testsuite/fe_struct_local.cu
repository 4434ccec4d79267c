// Structs in device code: local structs kept in registers field by field, nested
// structs, struct assignment, structs passed by value to and returned from
// __device__ functions, initializer lists, arrays of structs.
// LAUNCH: struct_local grid=2 block=128 in=f32[512]:rand out=f32[1024]:zero n=256

struct Vec2 { float x, y; };
struct Body { Vec2 pos; Vec2 vel; float mass; int id; };

__device__ Vec2 add(Vec2 a, Vec2 b) {
    Vec2 r = {a.x + b.x, a.y + b.y};
    return r;
}

__device__ Vec2 scale(Vec2 v, float s) {
    v.x *= s;
    v.y *= s;
    return v;
}

__device__ float energy(Body b) {
    return 0.5f * b.mass * (b.vel.x * b.vel.x + b.vel.y * b.vel.y);
}

__global__ void struct_local(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Body b;
    b.pos.x = in[2 * i];
    b.pos.y = in[2 * i + 1];
    b.vel = scale(b.pos, 0.5f);
    b.mass = 2.0f + (i & 3);
    b.id = i;
    Body c = b;
    c.pos = add(c.pos, c.vel);
    c.mass += 1.0f;
    Vec2 pts[3] = {{1.0f, 2.0f}, {b.pos.x, c.pos.y}, {0.0f, -1.0f}};
    Vec2 sum = {0.0f, 0.0f};
    for (int k = 0; k < 3; k++)
        sum = add(sum, pts[k]);
    out[4 * i] = energy(b) + energy(c);
    out[4 * i + 1] = sum.x * sum.y;
    out[4 * i + 2] = c.pos.x - b.pos.x + (float)(c.id - b.id);
    out[4 * i + 3] = add(b.vel, scale(c.vel, -1.0f)).y;
}
