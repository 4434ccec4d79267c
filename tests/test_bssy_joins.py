"""insert_bssy: a BSYNC only where every thread arriving ran its BSSY (issue 16's
deadlocks at BSYNC in loops).  A `continue` of an unrolled outer loop jumped to the
block after an inner loop, whose first instruction was the inner region's BSYNC: the
continuing threads waited there for a barrier they never entered, and the emulator
(and the GPU) stopped.  The region's own edges now take a block of their own before
the join.  Loop shapes with continue and break around inner loops, against nvcc on
the emulator, sm_89 and sm_90."""
from __future__ import annotations

import pytest

from ptxc import oracle
from ptxc.cli.check import check_command

pytestmark = [pytest.mark.oracle,
              pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")]

HEAD = "// LAUNCH: k grid=1 block=64 a=i32[64]:rand o=i32[64]:zero\n" \
       "__global__ void k(const int *a, int *o) {\n    int i = threadIdx.x;\n    int x = a[i], s = 0;\n"
BODIES = {
    "continue_then_inner_loop": """    for (int j = 0; j < 16; j++) {
        if ((x >> j) & 1) continue;
        s += j;
        if (s > (x & 31)) break;
        for (int k = 0; k < (x & 3); k++) { if (k == j) break; s ^= k; }
    }
""",
    "continue_into_inner_loop_join": """    for (int j = 0; j < 8; j++) {
        if ((x >> j) & 1) continue;
        for (int k = 0; k < ((x >> 8) & 3); k++) s += k * j;
    }
""",
    "runtime_trip_count": """    for (int j = 0; j < (x & 15); j++) {
        if (j & 1) continue;
        int k = 0;
        while (k < (j & 3)) { s += k; k++; if (s & 64) break; }
        s ^= j;
    }
""",
}


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_loops_reconverge_like_nvcc(name, arch, tmp_path, capsys):
    path = tmp_path / f"{name}.cu"
    path.write_text(HEAD + BODIES[name] + "    o[i] = s + x;\n}\n")
    status = check_command([str(path), f"-arch={arch}", "--max-steps", "2000000"])
    out = capsys.readouterr().out
    assert status == 0, out
