"""fold_cvta and 64-bit values used in halves (a miscompile found merging issue-16 work).

`selp.b64 %rd6, %rd5, %rd1, %p` with %rd1 = `cvta.to.global %rd2` is split by
instruction selection into two 32-bit SELs reading %rd1's low and high registers.
fold_cvta replaced the low register by the whole 64-bit source and left the high one
undefined (`SEL R7, R7, R8, P0` with R8 never written: testsuite/isa_histogram.cu's
generic_atomics wrote out of bounds).  The class: any use of one 32-bit part of a
multi-register value that a pass substitutes (vregs.substitute) must read the same part
of the replacement.

Checked here, on generated kernels (every 64-bit operation that lowering splits into
halves x a CVTA'd parameter in either operand, sm_89 and sm_90): the emulator's results
of ptxc's cubin equal the parameters' values as PTX defines them (an independent
reference: the buffers' addresses, computed in Python), and ptxas's cubin of the same PTX
agrees.
"""
from __future__ import annotations

import numpy as np
import pytest

from ptxc import oracle

NT = 32
# (name, PTX computing %v from %ga, %gb (the two CVTA'd pointers) and %p (tid odd), reference)
OPS = [
    ("selp_ab", "selp.b64 %v, %ga, %gb, %p;", lambda a, b, odd: a if odd else b),
    ("selp_ba", "selp.b64 %v, %gb, %ga, %p;", lambda a, b, odd: b if odd else a),
    ("and", "and.b64 %v, %ga, -1;", lambda a, b, odd: a),
    ("or_hi", "or.b64 %v, %gb, 0;", lambda a, b, odd: b),
    ("xor", "xor.b64 %v, %ga, %gb;", lambda a, b, odd: a ^ b),
    ("halves", "mov.b64 {%lo, %hi}, %ga; mov.b64 %v, {%hi, %lo};",
     lambda a, b, odd: ((a & 0xFFFFFFFF) << 32) | (a >> 32)),
    ("add", "add.s64 %v, %ga, 8;", lambda a, b, odd: a + 8),
]


def kernel_ptx(arch: str) -> str:
    body = []
    for k, (_, code, _) in enumerate(OPS):
        body += [f"\t{code}", f"\tst.global.u64 [%o+{k * NT * 8}], %v;"]
    return f""".version 8.5
.target {arch}
.address_size 64
.visible .entry parts(.param .u64 po, .param .u64 pa, .param .u64 pb)
{{
\t.reg .pred %p; .reg .b32 %t, %odd, %lo, %hi;
\t.reg .b64 %o, %a, %b, %ga, %gb, %v, %off;
\tmov.u32 %t, %tid.x;
\tld.param.u64 %o, [po]; ld.param.u64 %a, [pa]; ld.param.u64 %b, [pb];
\tcvta.to.global.u64 %o, %o;
\tcvta.to.global.u64 %ga, %a;
\tcvta.to.global.u64 %gb, %b;
\tand.b32 %odd, %t, 1;
\tsetp.ne.u32 %p, %odd, 0;
\tmul.wide.u32 %off, %t, 8; add.s64 %o, %o, %off;
{chr(10).join(body)}
\tret;
}}
"""


def _ptxc_cubin(text: str, arch: str, path):
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    path.write_bytes(cubin_bytes(lower_module(load_module("parts.ptx", text, arch),
                                              Options(arch=arch, filename="parts.ptx")), arch))
    return path


def _run(cubin) -> tuple:
    from ptxc.emu.device import Device
    dev = Device()
    kernel = dev.load(cubin.read_bytes(), cubin.name).kernel("parts")
    out = dev.malloc(len(OPS) * NT * 8, "out")
    a, b = dev.malloc(256, "a"), dev.malloc(256, "b")
    dev.launch(kernel, (1, 1, 1), (NT, 1, 1), [out, a, b], 0)
    return int(a), int(b), dev.memory.view(out, np.uint64, len(OPS) * NT).copy()


@pytest.mark.oracle
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_halves_of_cvta_results(arch, tmp_path):
    text = kernel_ptx(arch)
    ptx = tmp_path / "parts.ptx"
    ptx.write_text(text)
    mine = _ptxc_cubin(text, arch, tmp_path / "ptxc.cubin")
    for tool, args in (("cuobjdump", ["-sass"]), ("nvdisasm", [])):    # NVIDIA's tools read every word
        run = oracle.run(tool, *args, str(mine), check=False)
        assert run.returncode == 0 and run.stderr == "", f"{tool}: {run.stderr}"
    for cubin in (mine, oracle.ptxas(ptx, tmp_path / "ptxas.cubin", arch)):
        a, b, got = _run(cubin)
        bad = [f"{cubin.name} {name} lane {t}: {int(got[k * NT + t]):#x}, expected {ref(a, b, t & 1) & (2**64 - 1):#x}"
               for k, (name, _, ref) in enumerate(OPS) for t in range(NT)
               if int(got[k * NT + t]) != ref(a, b, t & 1) & (2**64 - 1)]
        assert not bad, "\n".join(bad[:10])
