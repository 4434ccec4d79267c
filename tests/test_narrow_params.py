"""8- and 16-bit kernel parameters loaded into 64-bit registers (`ld.param.s16 %rd1`):
extended as their type says, on the emulator, against ptxas's cubin and Python."""
from __future__ import annotations

import pytest

from ptxc import oracle

from test_carry_chains import run

pytestmark = pytest.mark.oracle

PTX = """.version 9.0
.target sm_89
.address_size 64
.visible .entry k(.param .s16 k_a, .param .u16 k_b, .param .s8 k_c, .param .u64 k_out)
{
	.reg .b64 %rd<6>;
	ld.param.s16 %rd1, [k_a];
	ld.param.u16 %rd2, [k_b];
	ld.param.s8 %rd5, [k_c];
	ld.param.u64 %rd3, [k_out];
	cvta.to.global.u64 %rd4, %rd3;
	st.global.u64 [%rd4], %rd1;
	st.global.u64 [%rd4+8], %rd2;
	st.global.u64 [%rd4+16], %rd5;
	ret;
}
"""
LAUNCH = "// LAUNCH: k grid=1 block=1 k_a=-5 k_b=65535 k_c=-3 k_out=u64[3]:zero\n"


def test_narrow_parameters_extend_to_64_bits(tmp_path):
    """Regression: the signed case raised NameError in isel_memory (an internal error)."""
    from ptxc.cli import main
    ptx, ours, theirs = tmp_path / "k.ptx", tmp_path / "ours.cubin", tmp_path / "theirs.cubin"
    ptx.write_text(PTX)
    assert main([str(ptx), "-o", str(ours)]) == 0
    oracle.ptxas(ptx, theirs)
    want = [(-5) & (2**64 - 1), 65535, (-3) & (2**64 - 1)]
    for cubin in (theirs, ours):
        result = run(cubin, LAUNCH, "k", check_hazards=cubin is ours)
        assert not result.hazards
        assert [int(v) & (2**64 - 1) for v in result.buffers["k_out"]] == want, cubin.name


NARROW_CVT = """.version 9.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 k_x, .param .u64 k_out)
{
	.reg .b16 %rs<8>;
	.reg .b32 %r<16>;
	.reg .f32 %f<4>;
	.reg .f64 %fd<4>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [k_x];
	ld.param.u64 %rd2, [k_out];
	cvta.to.global.u64 %rd3, %rd1;
	cvta.to.global.u64 %rd4, %rd2;
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd5, %r1, 4;
	add.s64 %rd6, %rd3, %rd5;
	ld.global.f32 %f1, [%rd6];
	cvt.f64.f32 %fd1, %f1;
	cvt.rzi.s16.f32 %rs1, %f1;
	cvt.rni.s8.f32 %rs2, %f1;
	cvt.rzi.s16.f64 %rs3, %fd1;
	cvt.rmi.s8.f64 %rs4, %fd1;
	cvt.rzi.u16.f32 %rs5, %f1;
	cvt.s32.s16 %r2, %rs1;
	cvt.s32.s8 %r3, %rs2;
	cvt.s32.s16 %r4, %rs3;
	cvt.s32.s8 %r5, %rs4;
	cvt.u32.u16 %r6, %rs5;
	mul.wide.u32 %rd7, %r1, 32;
	add.s64 %rd7, %rd4, %rd7;
	st.global.v4.u32 [%rd7], {%r2, %r3, %r4, %r5};
	st.global.u32 [%rd7+16], %r6;
	ret;
}
"""
NARROW_CVT_LAUNCH = "// LAUNCH: k grid=1 block=64 k_x=f32[64]:rand k_out=i32[512]:zero\n"


def test_float_to_narrow_signed_integers(tmp_path):
    """Regression (random kernels): cvt.rzi.s16.f32 and friends selected F2I.S32, a
    form that does not exist (S32 is F2I's unprinted default), so ptxc stopped with
    'no sm_89 encoding'.  Against ptxas's cubin, saturation included, and Python."""
    from ptxc.cli import main
    ptx, ours, theirs = tmp_path / "k.ptx", tmp_path / "ours.cubin", tmp_path / "theirs.cubin"
    ptx.write_text(NARROW_CVT.replace("ld.global.f32 %f1, [%rd6];",
                                      "ld.global.f32 %f0, [%rd6];\n\tsub.f32 %f2, %f0, 0f3F000000;\n"
                                      "\tmul.f32 %f1, %f2, 0f47C35000;"))   # (x - 0.5) * 100000
    assert main([str(ptx), "-o", str(ours)]) == 0
    oracle.ptxas(ptx, theirs)
    want = run(theirs, NARROW_CVT_LAUNCH, "k", check_hazards=False)
    got = run(ours, NARROW_CVT_LAUNCH, "k", check_hazards=True)
    assert not got.hazards
    out = [int(v) for v in want.buffers["k_out"]]
    assert [int(v) for v in got.buffers["k_out"]] == out
    import math
    import numpy as np
    scaled = [float((np.float32(v) - np.float32(0.5)) * np.float32(100000)) for v in want.buffers["k_x"]]
    assert any(abs(v) > 32767 for v in scaled)      # some saturate
    assert out[0::8] == [max(-32768, min(32767, math.trunc(v))) for v in scaled]
    assert out[1::8] == [max(-128, min(127, round(v))) for v in scaled]
