// C-style records as benchmark kernels write them: anonymous `typedef struct {...} T;`
// whose members are not type names, a variable named like its struct tag
// (`LatLong *latLong`, `struct point *point`), a self-referential `struct Node`
// reached through `n->next->value`, and a member named like a typedef (`p.x` with
// a type `x`).
// LAUNCH: nearest grid=2 block=64 locations=f32[256]:rand distances=f32[128]:zero numRecords=120 lat=0.25 lng=0.75
// LAUNCH: step_bodies grid=1 block=64 bodies=f32[448]:randint(-5,5) n=64
// LAUNCH: walk_lists grid=1 block=32 nodes=i32[256]:zero out=i32[32]:zero

typedef struct latLong { float lat; float lng; } LatLong;
typedef struct { float x, y, z; } vec3_t;
typedef struct { vec3_t pos; vec3_t vel; float mass; } Body;
typedef struct { int x; } x;
typedef struct Node { int value; struct Node* next; } Node;

__global__ void nearest(LatLong* locations, float* distances, int numRecords, float lat, float lng) {
    int globalId = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    LatLong *latLong = locations + globalId;
    if (globalId < numRecords) {
        float *dist = distances + globalId;
        *dist = sqrtf((lat - latLong->lat) * (lat - latLong->lat) + (lng - latLong->lng) * (lng - latLong->lng));
    }
}

__global__ void step_bodies(Body* bodies, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    Body body = bodies[i];
    x tag = {i};
    body.pos.x += body.vel.x * body.mass + (float)tag.x;
    body.pos.y += body.vel.y * body.mass;
    body.pos.z -= body.vel.z;
    bodies[i] = body;
}

__global__ void walk_lists(Node* nodes, int* out) {
    int i = threadIdx.x;
    Node* node = nodes + 2 * i;
    node->value = i;
    node->next = i + 1 < 32 ? nodes + 2 * (i + 1) : nullptr;
    nodes[2 * i + 1].value = -i;
    nodes[2 * i + 1].next = nullptr;
    __syncthreads();
    int sum = 0;
    for (Node* n = node; n != nullptr && sum < 100; n = n->next)
        sum += n->next ? n->next->value : 1;
    out[i] = sum;
}
