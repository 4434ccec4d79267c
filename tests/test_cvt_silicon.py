"""Conversions whose lowering was wrong on the H200 (issue 16, docs/hw-forms.md):

- cvt.{rni,rzi,rmi,rpi}.{u8,s8,u16,s16}.f64: ptxc went through F2I.U32/S32 and a clamp,
  which turns a NaN into 0xff/0xffff (the H200's F2I.U32.F64 gives 0x80000000); ptxas
  writes F2I.<narrow>.F64 (0x80/0x8000);
- cvt.f64.f16: through HADD2.F32 a NaN's payload became f32's canonical one; ptxas writes
  F2F.F64.F16;
- cvt.ftz.f64.f32: ptxc wrote F2F.FTZ.F64.F32, whose operand widths the tables get
  backwards; ptxas writes FMUL.FTZ x, 1 then F2F.F64.F32.

Checked: the conversion instructions of ptxc's SASS are ptxas's (opcode and modifiers,
every width x signedness x rounding), sm_89 and sm_90; and in the emulator ptxc's cubin
gives ptxas's cubin's results on edge values (NaNs with payloads, infinities, +-0,
out-of-range, halfway values).  The other integer conversions keep their own lowering
(f16/f32 sources go through U32/S32 and a clamp, which the H200 run found equal to
ptxas's F2I.<narrow> / F2IP.U8).
"""
from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from ptxc import oracle

NT = 32
NARROW = [(t, r) for t in ("u8", "s8", "u16", "s16") for r in ("rni", "rzi", "rmi", "rpi")]
F64_CASES = [float("nan"), -0.0, 0.0, 0.5, 1.5, 2.5, -0.5, -1.5, 127.5, 128.0, 255.5, 256.0, -128.5, -129.0,
             32767.5, 65535.5, 65536.0, -32768.5, 1e300, -1e300, float("inf"), float("-inf"), 3.7, -3.7]
F64_BITS = [struct.unpack("<Q", struct.pack("<d", v))[0] for v in F64_CASES] + [0x7FF0000000000001,
                                                                             0xFFF8123456789ABC]
F16_BITS = [0x7E00, 0x7C01, 0xFE12, 0x7C00, 0xFC00, 0x0001, 0x8000, 0x3C00]
F32_BITS = [0x7FC00000, 0x7F800001, 0xFFC12345, 0x00000001, 0x807FFFFF, 0x3F800000, 0x7F800000, 0x80000000]


def kernel_ptx(arch: str) -> str:
    body = []
    for k, (t, r) in enumerate(NARROW):
        body += [f"\tcvt.{r}.{t}.f64 %h, %d;", f"\tcvt.u32.u16 %r, %h;",
                 f"\tst.global.u32 [%o32+{k * NT * 4}], %r;"]
    body += ["\tcvt.f64.f16 %e, %hin;", f"\tst.global.f64 [%o64], %e;",
             "\tcvt.ftz.f64.f32 %e, %f;", f"\tst.global.f64 [%o64+{NT * 8}], %e;"]
    return f""".version 8.5
.target {arch}
.address_size 64
.visible .entry cvts(.param .u64 po32, .param .u64 po64, .param .u64 pd, .param .u64 pf, .param .u64 ph)
{{
\t.reg .b32 %t, %r; .reg .b16 %h, %hin; .reg .f32 %f; .reg .f64 %d, %e;
\t.reg .b64 %o32, %o64, %a, %b, %c, %off;
\tmov.u32 %t, %tid.x;
\tld.param.u64 %o32, [po32]; ld.param.u64 %o64, [po64];
\tld.param.u64 %a, [pd]; ld.param.u64 %b, [pf]; ld.param.u64 %c, [ph];
\tmul.wide.u32 %off, %t, 8; add.s64 %a, %a, %off; add.s64 %o64, %o64, %off;
\tmul.wide.u32 %off, %t, 4; add.s64 %b, %b, %off; add.s64 %o32, %o32, %off;
\tmul.wide.u32 %off, %t, 2; add.s64 %c, %c, %off;
\tld.global.f64 %d, [%a]; ld.global.f32 %f, [%b]; ld.global.b16 %hin, [%c];
{chr(10).join(body)}
\tret;
}}
"""


def _ptxc_cubin(text: str, arch: str, path):
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    path.write_bytes(cubin_bytes(lower_module(load_module("cvts.ptx", text, arch),
                                              Options(arch=arch, filename="cvts.ptx")), arch))
    return path


def _conversions(sass: str) -> list:
    return sorted(re.findall(r"\b((?:F2I|F2IP|F2F|HADD2\.F32|FMUL\.FTZ)[A-Z0-9_.]*)\s", sass))


@pytest.mark.oracle
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_conversions_are_ptxas_instructions(arch, tmp_path):
    text = kernel_ptx(arch)
    ptx = tmp_path / "cvts.ptx"
    ptx.write_text(text)
    theirs = _conversions(oracle.cuobjdump_sass(oracle.ptxas(ptx, tmp_path / "ptxas.cubin", arch)))
    mine = _conversions(oracle.cuobjdump_sass(_ptxc_cubin(text, arch, tmp_path / "ptxc.cubin")))
    assert mine == theirs


@pytest.mark.oracle
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_ptxc_cubin_gives_ptxas_results(arch, tmp_path):
    from ptxc.emu.device import Device
    text = kernel_ptx(arch)
    ptx = tmp_path / "cvts.ptx"
    ptx.write_text(text)
    d = np.array((F64_BITS * NT)[:NT], np.uint64)
    f = np.array((F32_BITS * NT)[:NT], np.uint32)
    h = np.array((F16_BITS * NT)[:NT], np.uint16)
    results = []
    for cubin in (oracle.ptxas(ptx, tmp_path / "ptxas.cubin", arch), _ptxc_cubin(text, arch, tmp_path / "ptxc.cubin")):
        dev = Device()
        kernel = dev.load(cubin.read_bytes(), cubin.name).kernel("cvts")
        o32, o64 = dev.malloc(len(NARROW) * NT * 4, "o32"), dev.malloc(2 * NT * 8, "o64")
        pd, pf, ph = dev.malloc(d.nbytes, "d"), dev.malloc(f.nbytes, "f"), dev.malloc(h.nbytes, "h")
        for p, a in ((pd, d), (pf, f), (ph, h)):
            dev.memory.write(p, a)
        dev.launch(kernel, (1, 1, 1), (NT, 1, 1), [o32, o64, pd, pf, ph], 0)
        results.append((dev.memory.view(o32, np.uint32, len(NARROW) * NT).copy(),
                        dev.memory.view(o64, np.uint64, 2 * NT).copy()))
    (a32, a64), (b32, b64) = results
    bad = [f"{NARROW[k // NT]} of {d[k % NT]:#x}: {b32[k]:#x} vs ptxas {a32[k]:#x}"
           for k in range(a32.size) if a32[k] != b32[k]]
    bad += [f"{('cvt.f64.f16', 'cvt.ftz.f64.f32')[k // NT]} lane {k % NT}: {b64[k]:#x} vs ptxas {a64[k]:#x}"
            for k in range(a64.size) if a64[k] != b64[k]]
    assert not bad, "\n".join(bad[:20])
