// Host C++ records under `ptxc run`, checked against the program nvcc builds: dim3
// returned from a helper (the launch-size idiom), a struct of structs returned by
// value and passed on, an anonymous typedef'd struct, a variable named like its tag,
// a derived class, the conditional operator choosing pointers and whole structs.
// RUN: ptxc run %s
#include <cstdio>

typedef struct { float lat, lng; } LatLong;
struct Range { int lo, hi; };
struct Plan { Range rows; Range cols; dim3 grid; };

dim3 grid_for(int n, int block) { return dim3((n + block - 1) / block); }

Range clip(Range r, int limit) { Range out; out.lo = r.lo < 0 ? 0 : r.lo; out.hi = r.hi > limit ? limit : r.hi; return out; }

Plan plan(int rows, int cols) {
    Plan p;
    p.rows.lo = -2; p.rows.hi = rows + 3;
    p.cols = clip(p.rows, cols);
    p.rows = clip(p.rows, rows);
    p.grid = grid_for(rows * cols, 128);
    return p;
}

struct Base { int id; int twice() const { return 2 * id; } };
struct Derived : Base { int extra; int total() const { return 2 * id + extra; } };

__global__ void unused(int* p) { p[0] = 0; }

int main() {
    Plan p = plan(100, 40);
    printf("rows %d..%d cols %d..%d grid %u %u %u\n", p.rows.lo, p.rows.hi, p.cols.lo, p.cols.hi,
           p.grid.x, p.grid.y, p.grid.z);
    printf("blocks %u\n", grid_for(1000, 256).x);
    LatLong places[3] = {{1.5f, 2.0f}, {-3.0f, 0.5f}, {0.25f, 8.0f}};
    LatLong* latLong = places + 1;
    printf("%g %g\n", latLong->lat, latLong[1].lng);
    Derived d;
    d.id = 7; d.extra = 5;
    printf("total %d\n", d.total());
    Range a = {1, 9}, b = {3, 4};
    Range wide = a.hi - a.lo > b.hi - b.lo ? a : b;
    const Range* pa = &a;
    Range* pb = &b;
    const Range* chosen = wide.lo == 1 ? pa : pb;
    printf("wide %d %d chosen %d\n", wide.lo, wide.hi, chosen->hi);
    return 0;
}
