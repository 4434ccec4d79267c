// Control flow with side effects: short-circuit && and || that skip increments, ?: with
// a load on one side, a __device__ function with several returns, switch fall-through,
// nested loops with break and continue, a do-while with a compound condition.
// LAUNCH: control_flow grid=4 block=64 v=i32[256]:randint(-50,50) out=i32[1024]:zero n=256

__device__ int classify(int x) {
    if (x < -20)
        return -2;
    if (x < 0)
        return -1;
    if (x == 0)
        return 0;
    return x > 20 ? 2 : 1;
}

__global__ void control_flow(const int* v, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = v[i];
    int hits = 0;
    bool both = x > 0 && ++hits > 0;
    bool either = x < 10 || ++hits > 5;
    int pick = x > 0 ? v[(i + 1) % n] : -1;

    int acc = 0;
    switch (classify(x)) {
    case -2: acc += 100;
    case -1: acc += 10; break;
    case 0: acc = 7; break;
    case 2: acc -= 3;
    default: acc += 1;
    }

    int loops = 0;
    for (int a = 0; a < 8; a++) {
        if (a == x % 5)
            continue;
        for (int b = a; b < 8; b += 2) {
            if (b * a > 20)
                break;
            loops += b - a;
        }
    }
    int k = x < 0 ? -x : x;
    int steps = 0;
    do {
        k = k / 2 + (k & 1);
        steps++;
    } while (k > 1 && steps < 40);

    out[4 * i] = hits * 4 + both * 2 + either;
    out[4 * i + 1] = pick;
    out[4 * i + 2] = acc * 1000 + loops;
    out[4 * i + 3] = steps;
}
