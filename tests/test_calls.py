"""Real calls (lower_calls' ABI): what lowers, and the diagnostics that remain."""
from __future__ import annotations

import numpy as np
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


def run(text: str, threads: int = 32) -> np.ndarray:
    """Lower `text` with ptxc and run k(out) on the emulator, one block of `threads`; out[]."""
    from ptxc.driver import cubin_bytes
    from ptxc.emu.device import Device
    dev = Device()
    out = dev.malloc(4 * threads, "out")
    dev.memory.write(out, np.full(threads, 7, dtype=np.int32))
    kernel = dev.load(cubin_bytes(lower(text), "sm_89"), "c.cubin").kernel("k")
    dev.launch(kernel, 1, threads, [out])
    return dev.memory.view(out, np.int32, threads).copy()


STORE_AT_TID = """mul.wide.u32 %rd9, %r1, 4;
	add.s64 %rd9, %rd1, %rd9;
	cvta.to.global.u64 %rd9, %rd9;
	"""


def test_a_predicate_live_across_a_call_is_kept():
    """A predicate live across a call is saved in the frame (it was a CompileError):
    thread 0 stores down(0) = 0, the others keep their 7."""
    text = DOWN.replace(".reg .b64 	%rd<2>;", ".reg .b64 	%rd<10>;").replace(
        "USE", STORE_AT_TID + "@%p1 st.global.u32 [%rd9], %r2;")
    expected = np.full(32, 7, dtype=np.int32)
    expected[0] = 0
    assert np.array_equal(run(text), expected)


def test_values_live_across_two_calls_in_a_row():
    """Regression: save_across_calls indexed liveness by block lengths that its own
    restores had grown, so the values live across a second call (here the predicate
    and the sum, read right after it) went unsaved when many came back from the first."""
    products = "".join(f"\tmul.lo.s32 	%r{10 + k}, %r1, {k + 1};\n" for k in range(8))
    total = "\tmov.u32 	%r5, 0;\n" + "".join(f"\tadd.s32 	%r5, %r5, %r{10 + k};\n" for k in range(8))
    two_calls = DOWN.replace(".reg .b64 	%rd<2>;", ".reg .b64 	%rd<10>;").replace(
        ".reg .b32 	%r<4>;\n	.reg .b64", ".reg .b32 	%r<20>;\n	.reg .b64").replace(
        "\tsetp.eq.s32 	%p1, %r1, 0;\n", products).replace("USE", total + """
	setp.lt.u32 	%p1, %r1, 5;
	{ // callseq 2, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), down, (param0);
	ld.param.b32 	%r3, [retval0+0];
	} // callseq 2
	add.s32 	%r4, %r2, %r3;
	selp.b32 	%r4, %r4, %r5, %p1;
	""" + STORE_AT_TID + "st.global.u32 [%rd9], %r4;")
    tid = np.arange(32, dtype=np.int32)
    assert np.array_equal(run(two_calls), np.where(tid < 5, 2 * tid, 36 * tid))


def test_a_long_callee_called_twice_stays_a_subroutine():
    """outlined_functions: a callee of OUTLINE_MIN_INSTRS instructions or more, called
    from two sites, is lowered once; a short one is inlined at both."""
    from ptxc.lower.lower_calls import OUTLINE_MIN_INSTRS
    body = "\n".join("\tadd.s32 	%r2, %r2, %r1;" for _ in range(OUTLINE_MIN_INSTRS))
    def module(body: str) -> str:
        return HEAD + """.func  (.param .b32 func_retval0) sum(.param .b32 sum_param_0)
{
	.reg .b32 	%r<4>;
	ld.param.u32 	%r1, [sum_param_0];
	mov.u32 	%r2, 0;
""" + body + """
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<10>;
	ld.param.u64 	%rd1, [k_param_0];
	mov.u32 	%r1, %tid.x;
	{ // callseq 1, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), sum, (param0);
	ld.param.b32 	%r2, [retval0+0];
	} // callseq 1
	add.s32 	%r5, %r1, 1;
	{ // callseq 2, 0
	.param .b32 param0;
	st.param.b32 	[param0+0], %r5;
	.param .b32 retval0;
	call.uni (retval0), sum, (param0);
	ld.param.b32 	%r3, [retval0+0];
	} // callseq 2
	add.s32 	%r4, %r2, %r3;
	""" + STORE_AT_TID + """st.global.u32 [%rd9], %r4;
	ret;
}
"""
    long, short = module(body), module("\tadd.s32 	%r2, %r2, %r1;")
    (kernel,) = lower(long)
    assert [i.op for i in kernel.func.instrs()].count("CALL") == 2
    (kernel,) = lower(short)
    assert "CALL" not in [i.op for i in kernel.func.instrs()]
    tid = np.arange(32, dtype=np.int64)
    assert np.array_equal(run(long), (OUTLINE_MIN_INSTRS * (2 * tid + 1)).astype(np.int32))
    assert np.array_equal(run(short), (2 * tid + 1).astype(np.int32))


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
