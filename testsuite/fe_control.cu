// Control flow: if/else chains, nested loops of every kind with break and continue,
// early return, loops whose bounds come from memory, and a loop with two exits.
// LAUNCH: control grid=4 block=64 v=i32[256]:randint(-100,100) lim=i32[256]:randint(0,20) out=i32[1024]:zero n=256

__global__ void control(const int* v, const int* lim, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = v[i];
    int cls;
    if (x < -50)
        cls = 0;
    else if (x < 0)
        cls = 1;
    else if (x == 0)
        cls = 2;
    else if (x <= 50)
        cls = 3;
    else
        cls = 4;
    int total = 0;
    for (int a = 0; a < lim[i]; a++) {
        if (a % 3 == 0)
            continue;
        int b = a;
        while (b > 0) {
            total += b & 1;
            b >>= 1;
            if (total > 40)
                break;
        }
    }
    int w = x, steps = 0;
    do {
        w = w / 2;
        steps++;
        if (steps > 3 && w == 1)
            break;
    } while (w != 0);
    int found = -1;
    for (int k = 0; k < 64; k++) {
        if (v[k] == x && k != i) {
            found = k;
            break;
        }
    }
    out[4 * i] = cls;
    out[4 * i + 1] = total;
    out[4 * i + 2] = steps;
    out[4 * i + 3] = found;
    if (x > 90)
        return;
    out[4 * i + 3] += 1000;
}
