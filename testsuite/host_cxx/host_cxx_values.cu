// Host C++ under `ptxc run`, checked against the program nvcc builds (it launches no
// kernel, so it runs without a GPU): functions returning structs by value (also read
// as `f(x).mean`), member operators returning references chained (`(a += b) *= 2`,
// `v[i] = x`), static data members defined outside their class, default arguments,
// an alias template, `const int n` array bounds and the conditional operator's types.
// RUN: ptxc run %s
#include <cstdio>

struct Stats { float mean; float var; int n; };

Stats summarize(const float* v, int n) {
    Stats s;
    s.mean = 0; s.var = 0; s.n = n;
    for (int i = 0; i < n; ++i) s.mean += v[i];
    s.mean /= n;
    for (int i = 0; i < n; ++i) s.var += (v[i] - s.mean) * (v[i] - s.mean);
    s.var /= n;
    return s;
}

struct Vec2 {
    float x, y;
    Vec2& operator+=(const Vec2& o) { x += o.x; y += o.y; return *this; }
    Vec2& operator*=(float s) { x *= s; y *= s; return *this; }
    float& operator[](int i) { return i == 0 ? x : y; }
};

Vec2 make_vec(float x, float y = 1.0f) { Vec2 v; v.x = x; v.y = y; return v; }

struct Counter {
    static int calls;
    static const int limit;
    static void hit() { if (calls < limit) ++calls; }
};
int Counter::calls = 0;
const int Counter::limit = 3;

template <class T, int N> struct Buffer { T data[N]; };
template <class T> using Buffer4 = Buffer<T, 4>;

template <typename T> T scaled(T x, T by = T(10)) { return x * by; }

__global__ void unused(float* p) { p[0] = 1.0f; }

int main() {
    const int n = 6;
    float values[n] = {1, 2, 3, 4, 5, 6};
    Stats s = summarize(values, n);
    printf("mean %g var %g n %d\n", s.mean, s.var, s.n);
    printf("half mean %g\n", summarize(values, n / 2).mean);
    Vec2 a = make_vec(1, 2), b = make_vec(3);
    (a += b) *= 2.0f;
    a[0] += 0.5f;
    a[1] = a[0] * 2;
    printf("a %g %g\n", a.x, a.y);
    for (int i = 0; i < 5; ++i) Counter::hit();
    printf("calls %d of %d\n", Counter::calls, Counter::limit);
    Buffer4<int> buf;
    for (int i = 0; i < 4; ++i) buf.data[i] = scaled(i) + scaled(i, 3);
    printf("buf %d %d %d %d\n", buf.data[0], buf.data[1], buf.data[2], buf.data[3]);
    char text[] = "mutable";
    const char* fixed = "fixed";
    for (int k = 0; k < 2; ++k) {
        const char* pick = k ? text : fixed;
        short x = 300, y = -2;
        unsigned u = 7;
        printf("%s %d %u\n", pick, (int)sizeof(k ? x : y), k ? u : (unsigned)y);
    }
    return 0;
}
