// switch: dense and sparse cases, fall-through, default in the middle, nested switch,
// break out of a switch inside a loop, and a switch on a char.
// LAUNCH: switches grid=2 block=128 v=i32[256]:randint(0,20) c=u8[256]:randint(97,102) out=i32[768]:zero n=256

__global__ void switches(const int* v, const unsigned char* c, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = v[i];
    int r = 0;
    switch (x) {
    case 0: r = 100; break;
    case 1:
    case 2: r = 200;
    case 3: r += 30; break;
    default: r = -1;
    case 7: r += 7; break;
    case 15: r = 1500; break;
    case 19: {
        int t = x * 2;
        r = t + 1;
        break;
    }
    }
    int acc = 0;
    for (int k = 0; k < 8; k++) {
        switch ((x + k) % 4) {
        case 0: acc += 1; break;
        case 1: acc += 10; continue;
        case 2:
            switch (k & 1) {
            case 0: acc += 100; break;
            default: acc += 1000;
            }
            break;
        default: acc -= 1;
        }
        acc *= 2;
    }
    int kind;
    switch (c[i]) {
    case 'a': kind = 1; break;
    case 'b': kind = 2; break;
    case 'e': kind = 5; break;
    default: kind = 0;
    }
    out[3 * i] = r;
    out[3 * i + 1] = acc;
    out[3 * i + 2] = kind;
}
