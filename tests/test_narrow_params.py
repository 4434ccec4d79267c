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
