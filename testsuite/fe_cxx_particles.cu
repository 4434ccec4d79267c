// A Vec3 class with operators (+, -, *, +=, unary -), a static constant member read as
// Vec3::DIM, a struct deriving from it (a particle is a position plus a velocity and a
// mass), member functions calling each other, in an n-body style step.
// LAUNCH: step grid=1 block=64 pos=f32[192]:randint(-8,8) vel=f32[192]:randint(-2,2) out=f32[192]:zero n=64

struct Vec3 {
    float x, y, z;
    static const int DIM = 3;
    __device__ Vec3() : x(0.0f), y(0.0f), z(0.0f) {}
    __device__ Vec3(float a, float b, float c) : x(a), y(b), z(c) {}
    __device__ Vec3 operator+(const Vec3& o) const { return Vec3(x + o.x, y + o.y, z + o.z); }
    __device__ Vec3 operator-(const Vec3& o) const { return Vec3(x - o.x, y - o.y, z - o.z); }
    __device__ Vec3 operator*(float s) const { return Vec3(x * s, y * s, z * s); }
    __device__ Vec3 operator-() const { return Vec3(-x, -y, -z); }
    __device__ Vec3& operator+=(const Vec3& o) {
        x += o.x;
        y += o.y;
        z += o.z;
        return *this;
    }
    __device__ float dot(const Vec3& o) const { return x * o.x + y * o.y + z * o.z; }
    __device__ float length2() const { return dot(*this); }
};

struct Particle : Vec3 {
    Vec3 v;
    float mass;
    __device__ void advance(const Vec3& force, float dt) {
        v += force * (dt / mass);
        x += v.x * dt;
        y += v.y * dt;
        z += v.z * dt;
    }
};

__device__ Vec3 load(const float* p, int i) { return Vec3(p[Vec3::DIM * i], p[Vec3::DIM * i + 1], p[Vec3::DIM * i + 2]); }

__global__ void step(const float* pos, const float* vel, float* out, int n) {
    int i = threadIdx.x;
    Particle me;
    Vec3 p = load(pos, i);
    me.x = p.x;
    me.y = p.y;
    me.z = p.z;
    me.v = load(vel, i);
    me.mass = 2.0f;
    Vec3 force;
    for (int j = 0; j < n; ++j) {
        Vec3 d = load(pos, j) - p;
        force += -d * (1.0f / (d.length2() + 1.0f));
    }
    me.advance(force, 0.125f);
    out[3 * i] = me.x;
    out[3 * i + 1] = me.y;
    out[3 * i + 2] = me.z;
}
