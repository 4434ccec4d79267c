"""Real calls (lower_calls' ABI): what lowers, and the diagnostics that remain."""
from __future__ import annotations

import pytest

from ptxc.diagnostics import CompileError
from ptxc.driver import lower_module
from ptxc.lower.pipeline import Options
from ptxc.ptx.parser import parse_ptx

HEAD = ".version 9.5\n.target sm_89\n.address_size 64\n\n"

DOWN = HEAD + """.func  (.param .b32 func_retval0) down(.param .b32 down_param_0)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	ld.param.u32 	%r1, [down_param_0];
	setp.lt.s32 	%p1, %r1, 1;
	mov.u32 	%r3, 0;
	@%p1 bra 	$L__done;
	add.s32 	%r2, %r1, -1;
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r2;
	.param .b32 retval0;
	call.uni (retval0), down, (param0);
	ld.param.b32 	%r3, [retval0+0];
	} // callseq 0
	add.s32 	%r3, %r3, 1;
$L__done:
	st.param.b32 	[func_retval0+0], %r3;
	ret;
}
.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<2>;
	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	setp.eq.s32 	%p1, %r1, 0;
	{ // callseq 1, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), down, (param0);
	ld.param.b32 	%r2, [retval0+0];
	} // callseq 1
	USE
	ret;
}
"""


def lower(text: str):
    return lower_module(parse_ptx(text, "c.ptx"), Options(filename="c.ptx"))


def test_a_recursive_callee_follows_the_kernel_once():
    (kernel,) = lower(DOWN.replace("USE", "st.global.u32 [%rd1], %r2;"))
    ops = [i.op for i in kernel.func.instrs()]
    assert ops.count("RET") == 1 and ops.count("CALL") == 2
    assert ops.index("EXIT") < ops.index("RET")


def test_a_call_ends_its_block_so_the_result_is_read_after_it():
    """Regression: if_convert joined the block after a CALL to it, and order_instrs
    moved the CALL below the load of its result (split_at_calls)."""
    (kernel,) = lower(DOWN.replace("USE", "st.global.u32 [%rd1], %r2;"))
    code = [i for i in kernel.func.instrs()]
    call = next(k for k, i in enumerate(code) if i.op == "CALL")
    result = next(k for k, i in enumerate(code) if i.op == "LDL" and i.srcs[0].offset == 4)
    assert call < result


def test_a_predicate_live_across_a_call_is_a_clean_error():
    with pytest.raises(CompileError) as info:
        lower(DOWN.replace("USE", "@%p1 st.global.u32 [%rd1], %r2;"))
    assert "P register value live across a call" in info.value.diagnostics[0].message


def test_an_extern_callee_is_still_an_error_at_the_call():
    text = HEAD + """.extern .func  (.param .b32 func_retval0) ext(.param .b32 ext_param_0);
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<3>;
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), ext, (param0);
	ld.param.b32 	%r2, [retval0+0];
	} // callseq 0
	ret;
}
"""
    with pytest.raises(CompileError) as info:
        lower(text)
    (diag,) = info.value.diagnostics
    assert diag.loc.line == text.splitlines().index("\tcall.uni (retval0), ext, (param0);") + 1
    assert "'ext' is only declared here" in diag.message
