// Structs in global memory: an array of structs read and written through a pointer
// (p[i].f, p->f, (*p).f), a whole struct copied in and out, and a struct pointer
// passed to a __device__ function.  The buffers hold the structs' bytes.
// LAUNCH: struct_global grid=2 block=64 particles=f32[512]:rand out=f32[512]:zero n=128

struct Particle { float x, y, z; float w; };

__device__ void step(Particle* p, float dt) {
    p->x += p->w * dt;
    (*p).y -= p->w * dt;
}

__global__ void struct_global(Particle* particles, Particle* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    Particle p = particles[i];
    step(&particles[i], 0.25f);
    p.z = p.x * p.y;
    out[i] = p;
    out[i].w = particles[i].x + particles[(i + 1) % n].y;
}
