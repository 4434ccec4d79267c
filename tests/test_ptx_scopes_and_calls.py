"""PTX that nvcc writes around inline asm, warp shuffles and calls: scoped `{ }` blocks,
`%r|%p` destinations, `.func` definitions, declarations and call sequences.

Each input is parsed, checked in the IR, printed, and the print handed to ptxas (the
oracle); lowering tests compare ptxc's SASS with ptxas's or check the diagnostic.
"""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from ptxc import oracle
from ptxc.diagnostics import CompileError
from ptxc.ptx import ir
from ptxc.ptx.parser import parse_ptx
from ptxc.ptx.printer import print_module
from ptxc.driver import lower_module
from ptxc.lower.pipeline import Options

from conftest import TESTSUITE

HEAD = ".version 9.5\n.target sm_89\n.address_size 64\n\n"


def ptxas_accepts(text: str, tmp_path) -> None:
    path = tmp_path / "printed.ptx"
    path.write_text(text)
    oracle.ptxas(path, tmp_path / "printed.cubin")


def round_trip(text: str) -> ir.Module:
    module = parse_ptx(text)
    assert parse_ptx(print_module(module)) == module
    return module


# ---- scoped blocks ---------------------------------------------------------------------------

SCOPES = HEAD + """.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<2>;
	.reg .b16 	%rs<4>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.u32 	%r1, [%rd2];
	setp.gt.s32 	%p1, %r1, 0;
	mov.b32 	{%rs1, %rs2}, %r1;
	{ .reg .pred p; setp.lt.f16 p, %rs1, %rs2; selp.u16 %rs3, 1, 0, p; }
	{
	.reg .pred 	%p1;
	.reg .b32 	%r<2>;
	setp.ne.u32 	%p1, %r1, 0;
	selp.u32 	%r0, 1, 0, %p1;
	{ .reg .b16 low; mov.b32 {low, %rs2}, %r0; @!%p1 mov.b16 %rs1, low; }
	}
	selp.u32 	%r2, 1, 0, %p1;
	cvt.u32.u16 	%r3, %rs3;
	add.s32 	%r2, %r2, %r3;
	st.global.u32 	[%rd2], %r2;
	ret;
}
"""


def test_scoped_names_are_renamed_apart_from_the_functions():
    func = round_trip(SCOPES).functions[0]
    instrs = func.instrs()
    asm = next(i for i in instrs if i.opcode == "setp.lt.f16")
    inner = next(i for i in instrs if i.opcode == "setp.ne.u32")
    after = [i for i in instrs if i.opcode == "selp.u32"][-1]
    # scopes are numbered as they close: the innermost first
    assert asm.operands[0] == ir.Reg("%__s2_p")                       # `p` became a %-register
    assert inner.operands[0] != ir.Reg("%p1") and inner.operands[1] != ir.Reg("%r1")  # shadowed ...
    assert inner.operands[1] == ir.Reg("%__s3_r1")                     # ... `%r<2>` of the scope
    assert after.operands[3] == ir.Reg("%p1")                          # the function's %p1 again
    innermost = next(i for i in instrs if i.opcode == "mov.b16")
    assert innermost.guard == inner.operands[0] and innermost.operands[1] == ir.Reg("%__s1_low")
    assert all(func.reg_type(r) for i in instrs for r in i.operands if isinstance(r, ir.Reg))


@pytest.mark.oracle
def test_ptxas_accepts_the_flattened_scopes(tmp_path):
    ptxas_accepts(print_module(parse_ptx(SCOPES)), tmp_path)


# ---- two-destination forms -------------------------------------------------------------------

PAIRS = HEAD + """.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<5>;
	.reg .b32 	%r<10>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.u32 	%r1, [%rd2];
	mov.u32 	%r2, 1;
	mov.u32 	%r3, 31;
	mov.u32 	%r4, -1;
	shfl.sync.down.b32 	%r5|%p1, %r1, %r2, %r3, %r4;
	setp.lt.s32 	%p2|%p3, %r1, %r5;
	match.all.sync.b32 	%r6|%p4, %r1, %r4;
	selp.u32 	%r7, 1, 0, %p1;
	selp.u32 	%r8, %r7, %r6, %p3;
	add.s32 	%r9, %r8, %r5;
	st.global.u32 	[%rd2], %r9;
	ret;
}
"""


def test_pair_destinations_parse_as_reg_pairs():
    instrs = round_trip(PAIRS).functions[0].instrs()
    pairs = [i.operands[0] for i in instrs if i.operands and isinstance(i.operands[0], ir.RegPair)]
    assert pairs == [ir.RegPair(ir.Reg("%r5"), ir.Reg("%p1")), ir.RegPair(ir.Reg("%p2"), ir.Reg("%p3")),
                     ir.RegPair(ir.Reg("%r6"), ir.Reg("%p4"))]


@pytest.mark.oracle
def test_ptxas_accepts_printed_pair_destinations(tmp_path):
    ptxas_accepts(print_module(parse_ptx(PAIRS)), tmp_path)


def test_a_pair_outside_setp_shfl_match_is_an_error_at_the_instruction():
    text = HEAD + ".visible .entry k()\n{\n\t.reg .b32 %r<3>;\n\t.reg .pred %p<2>;\n\tadd.s32 %r1|%p1, %r2, 1;\n\tret;\n}\n"
    with pytest.raises(CompileError) as info:
        parse_ptx(text, "pair.ptx")
    assert info.value.format().startswith("pair.ptx:9:2: error: 'add.s32' takes no '%r1|%p1' operand")


# ---- .func, declarations, call sequences -----------------------------------------------------

CALLS = HEAD + """.func  (.param .b32 func_retval0) twice
(
	.param .b32 twice_param_0
)
;
.extern .func  (.param .b32 func_retval0) ext_add(.param .b32 ext_add_param_0, .param .b32 ext_add_param_1);
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<4>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.u32 	%r1, [%rd2];
	{ // callseq 0, 0
	.reg .b32 temp_param_reg;
	.param .b32 param0;
	st.param.b32 	[param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), 
	twice, 
	(
	param0
	);
	ld.param.b32 	%r2, [retval0+0];
	} // callseq 0
	mov.u64 	%rd3, twice;
	{ // callseq 1, 0
	.reg .b32 temp_param_reg;
	.param .b32 param0;
	st.param.b32 	[param0+0], %r2;
	.param .b32 retval0;
	prototype_1 : .callprototype (.param .b32 _) _ (.param .b32 _);
	call (retval0), 
	%rd3, 
	(
	param0
	)
	, prototype_1;
	ld.param.b32 	%r3, [retval0+0];
	} // callseq 1
	st.global.u32 	[%rd2], %r3;
	ret;
}
.func  (.param .b32 func_retval0) twice(
	.param .b32 twice_param_0
)
{
	.reg .b32 	%r<3>;
	ld.param.u32 	%r1, [twice_param_0];
	shl.b32 	%r2, %r1, 1;
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}
"""


def test_call_sequences_keep_their_parts():
    module = round_trip(CALLS)
    decl, ext, kernel, func = module.functions
    assert not decl.defined and decl.return_params == [ir.Param(".b32", "func_retval0")]
    assert ext.extern and not ext.defined and len(ext.params) == 2
    assert func.defined and not func.entry and module.subroutines() == [func]
    assert [p.name for p in kernel.call_params] == ["__s1_param0", "__s1_retval0", "__s2_param0", "__s2_retval0"]
    assert kernel.prototypes == [ir.CallPrototype("__s2_prototype_1", [ir.Param(".b32", "_")], [ir.Param(".b32", "_")])]
    direct, indirect = [ir.call_site(i) for i in kernel.instrs() if i.base == "call"]
    assert direct == ir.CallSite(ir.Symbol("twice"), (ir.Symbol("__s1_retval0"),), (ir.Symbol("__s1_param0"),))
    assert indirect == ir.CallSite(ir.Reg("%rd3"), (ir.Symbol("__s2_retval0"),), (ir.Symbol("__s2_param0"),),
                                   "__s2_prototype_1")


@pytest.mark.oracle
def test_ptxas_accepts_printed_call_sequences(tmp_path):
    ptxas_accepts(print_module(parse_ptx(CALLS)), tmp_path)


# ---- immediates and initializers (bugs the testsuite round trip found) ----------------------

def test_nan_immediates_round_trip():
    """nvcc writes 0f7FFFFFFF; NaN != NaN made parse(print(m)) == m fail."""
    text = HEAD + ".visible .entry k()\n{\n\t.reg .f32 %f<2>;\n\tmov.f32 %f1, 0f7FFFFFFF;\n\tret;\n}\n"
    module = round_trip(text)
    assert "0f7FFFFFFF" in print_module(module)


@pytest.mark.oracle
def test_scalar_initializer_prints_without_braces(tmp_path):
    """`.const .f32 scale = 0f3F000000;` printed as `= {...}` made ptxas fail (type mismatch)."""
    text = HEAD + ".const .align 4 .f32 scale = 0f3F000000;\n.visible .entry k()\n{\n\tret;\n}\n"
    printed = print_module(parse_ptx(text))
    assert ".const .align 4 .f32 scale = 0f3F000000;" in printed
    ptxas_accepts(printed, tmp_path)


# ---- lowering --------------------------------------------------------------------------------

def shfl_lines(sass: str) -> list[str]:
    """SHFL instructions with register numbers blurred (allocation may differ)."""
    return [re.sub(r"\bR\d+", "R", m) for m in re.findall(r"SHFL[^;]*", sass)]


def ptxc_sass(ptx_path, tmp_path) -> str:
    """`ptxc x.ptx -o x.cubin` as a drop-in ptxas, read back by cuobjdump."""
    cubin = tmp_path / "ptxc.cubin"
    run = subprocess.run([sys.executable, "-m", "ptxc", str(ptx_path), "-o", str(cubin)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    return oracle.run("cuobjdump", "-sass", str(cubin)).stdout


def ptxas_sass(ptx_path, tmp_path) -> str:
    cubin = oracle.ptxas(ptx_path, tmp_path / "ptxas.cubin")
    return oracle.run("cuobjdump", "-sass", str(cubin)).stdout


SHFL_PRED = HEAD + """.visible .entry k(.param .u64 k_param_0)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<10>;
	.reg .b64 	%rd<3>;
	ld.param.u64 	%rd1, [k_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	ld.global.u32 	%r7, [%rd2];
	add.s32 	%r2, %r7, %r1;
	mov.u32 	%r3, 31;
	mov.u32 	%r4, -1;
	setp.eq.s32 	%p2, %r1, 0;
	shfl.sync.down.b32 	%r5|%p1, %r2, %r1, %r3, %r4;
	selp.u32 	%r6, 1, 0, PRED;
	st.global.v2.u32 	[%rd2], {%r5, %r6};
	ret;
}
"""


@pytest.mark.oracle
@pytest.mark.parametrize("used", [True, False])
def test_shfl_writes_its_predicate_as_ptxas_does(used, tmp_path):
    """A read predicate is SHFL's P destination (`SHFL.DOWN P0, ...`), an unread one PT."""
    text = SHFL_PRED.replace("PRED", "%p1" if used else "%p2")
    path = tmp_path / "shfl.ptx"
    path.write_text(text)
    expected = shfl_lines(ptxas_sass(path, tmp_path))
    assert expected and expected[0].startswith("SHFL.DOWN P0" if used else "SHFL.DOWN PT")
    assert shfl_lines(ptxc_sass(path, tmp_path)) == expected


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["fe_reduce_warp", "isa_reduce"])
def test_nvcc_shuffles_lower_to_ptxas_forms(name, tmp_path):
    """nvcc moves lane, clamp and mask into registers; SHFL takes them as immediates."""
    path = oracle.nvcc_ptx(TESTSUITE / f"{name}.cu", tmp_path / f"{name}.ptx")
    assert sorted(shfl_lines(ptxc_sass(path, tmp_path))) == sorted(shfl_lines(ptxas_sass(path, tmp_path)))


def test_an_indirect_call_is_a_real_call():
    """`twice` is inlined at the direct call; the call through %rd3 stays a CALL of it
    (lower_calls' dispatch), and `twice` follows the kernel as a subroutine."""
    (kernel,) = lower_module(parse_ptx(CALLS, "calls.ptx"), Options(filename="calls.ptx"))
    ops = [i.op for i in kernel.func.instrs()]
    assert ops.count("CALL") == 1 and ops.count("RET") == 1


def test_setp_with_two_destinations_is_a_clean_lowering_error():
    with pytest.raises(CompileError) as info:
        lower_module(parse_ptx(PAIRS, "pairs.ptx"), Options(filename="pairs.ptx"))
    assert any("'setp.lt.s32' with two destinations (p|q)" in d.message for d in info.value.diagnostics)


# ---- inline_calls ----------------------------------------------------------------------------

def call_seq(n: int, callee: str, args: list[tuple[str, str]], ret: str | None = None,
             result: str | None = None) -> str:
    """nvcc's `{ // callseq }` block: args are (param declaration type, operand)."""
    lines = [f"\t{{ // callseq {n}, 0", "\t.reg .b32 temp_param_reg;"]
    for k, (type_, value) in enumerate(args):
        lines += [f"\t.param {type_} param{k};", f"\tst.param{'.' + type_.split('.')[-1]} [param{k}+0], {value};"]
    if ret:
        lines += [f"\t.param {ret} retval0;"]
    names = ", ".join(f"param{k}" for k in range(len(args)))
    lines += [f"\tcall.uni {'(retval0), ' if ret else ''}{callee}, ({names});"]
    if result:
        lines += [f"\t{result};"]
    lines += [f"\t}} // callseq {n}"]
    return "\n".join(lines) + "\n"


RECURSIVE = HEAD + """.func  (.param .b32 func_retval0) down(.param .b32 down_param_0);
.func  (.param .b32 func_retval0) up(.param .b32 up_param_0)
{
	.reg .b32 	%r<3>;
	ld.param.u32 	%r1, [up_param_0];
""" + call_seq(0, "down", [(".b32", "%r1")], ".b32", "ld.param.b32 %r2, [retval0+0]") + """
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}
.func  (.param .b32 func_retval0) down(.param .b32 down_param_0)
{
	.reg .b32 	%r<3>;
	ld.param.u32 	%r1, [down_param_0];
""" + call_seq(1, "up", [(".b32", "%r1")], ".b32", "ld.param.b32 %r2, [retval0+0]") + """
	st.param.b32 	[func_retval0+0], %r2;
	ret;
}
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<2>;
	ld.param.u64 	%rd1, [k_param_0];
	ld.global.u32 	%r1, [%rd1];
""" + call_seq(2, "up", [(".b32", "%r1")], ".b32", "ld.param.b32 %r2, [retval0+0]") + """
	st.global.u32 	[%rd1], %r2;
	ret;
}
"""


def test_a_recursive_call_is_a_real_call():
    """`up` and `down` call each other: each is one subroutine after the kernel."""
    (kernel,) = lower_module(parse_ptx(RECURSIVE, "rec.ptx"), Options(filename="rec.ptx"))
    assert [i.op for i in kernel.func.instrs()].count("RET") >= 2


EXTERN = HEAD + """.extern .func  (.param .b32 func_retval0) ext(.param .b32 ext_param_0);
.visible .entry k(.param .u64 k_param_0)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<2>;
	ld.param.u64 	%rd1, [k_param_0];
	ld.global.u32 	%r1, [%rd1];
""" + call_seq(0, "ext", [(".b32", "%r1")], ".b32", "ld.param.b32 %r2, [retval0+0]") + """
	st.global.u32 	[%rd1], %r2;
	ret;
}
"""


def test_an_extern_callee_is_reported_through_the_command(tmp_path):
    """Through `ptxc x.ptx`: file:line:col, exit status 1, no traceback, no output file."""
    path = tmp_path / "ext.ptx"
    path.write_text(EXTERN)
    out = tmp_path / "ext.cubin"
    run = subprocess.run([sys.executable, "-m", "ptxc", str(path), "-o", str(out)], capture_output=True, text=True)
    call_line = next(n for n, line in enumerate(EXTERN.splitlines(), 1) if "call.uni" in line)
    assert run.returncode == 1 and not out.exists() and "Traceback" not in run.stderr
    assert f"{path}:{call_line}:2: error: unsupported: calls to .func ('ext' is only declared here (.extern, " \
           "defined in another module) and ptxc does not link modules)" in run.stderr


def test_inline_calls_cannot_be_disabled():
    from ptxc.lower.pipeline import check_pass_names
    with pytest.raises(CompileError, match="required"):
        check_pass_names({"inline_calls"}, "--disable-pass")


def test_inlining_leaves_the_module_unchanged():
    """The callee is copied, not moved: lowering twice gives the same code."""
    direct = (CALLS.replace("\tmov.u64 \t%rd3, twice;\n", "").replace("call (retval0)", "call.uni (retval0)")
              .replace("%rd3, \n", "twice, \n").replace("\n\t, prototype_1;", ";"))
    module = parse_ptx(direct, "calls.ptx")
    before = print_module(module)
    first = lower_module(module, Options(filename="calls.ptx"))
    assert print_module(module) == before
    second = lower_module(module, Options(filename="calls.ptx"))
    assert first[0].text == second[0].text


# ---- inline_calls against the oracle ----------------------------------------------------------

CALL_FILES = ["fe_device_funcs", "fe_math_double", "isa_histogram", "isa_calls"]
# ptxas contracts call_float's `mul` in polar() with the caller's `add` of its result
# once they are inlined (nvcc's CALL kept them apart; ptxc keeps them apart too, see
# inline_calls); call_float has no other mul + add, so --fmad=false gives nvcc's rounding.
PTXAS_FLAGS = {"isa_calls": ["--fmad=false"]}


def inlined(module: ir.Module, filename: str) -> tuple[ir.Module, set]:
    """`module` with each kernel that inline_calls rewrites to no calls rewritten (the others kept);
    and the names of the rewritten kernels."""
    from ptxc.lower.inline_calls import inline_calls
    functions, done = [], set()
    for f in module.functions:
        if f.entry:
            try:
                flat = inline_calls(f, module.functions, filename, outline=False)
                if not any(i.base == "call" for i in flat.instrs()):   # real calls stay calls
                    f = flat
                    done.add(f.name)
            except CompileError:
                pass
        functions.append(f)
    return ir.Module(module.version, module.target, module.address_size, functions, module.globals), done


def plain_name(name: str) -> str:
    """`_Z10call_chainPKiPii` -> `call_chain` (the name LAUNCH lines use)."""
    m = re.match(r"_Z(\d+)", name)
    return name[m.end():m.end() + int(m.group(1))] if m else name


def emulate_against_nvcc(name: str, cubin: bytes, kernels: set, tmp_path, hazards: bool = False) -> int:
    """Run the LAUNCH lines of `kernels` on `cubin` and on nvcc's cubin; the buffers they
    write must be equal.  Returns how many launches ran."""
    from ptxc.launch.spec import parse_file
    from ptxc.launch import differences, run_launches
    source = (TESTSUITE / f"{name}.cu").read_text()
    launches = parse_file(source, f"{name}.cu")
    plain = {plain_name(k) for k in kernels}
    only = {k for k, launch in enumerate(launches) if launch.kernel in plain}
    theirs = oracle.nvcc_cubin(TESTSUITE / f"{name}.cu", tmp_path / f"{name}.nvcc.cubin").read_bytes()
    a = run_launches(theirs, launches, source, f"{name}.cu", only=only)
    b = run_launches(cubin, launches, source, f"{name}.cu", only=only, check_hazards=hazards)
    assert not b.hazards, f"hazards: {b.hazards[:3]}"
    for buffer in {key for k in only for key in b.launch_buffers[k]}:
        diffs = differences(buffer, a.buffers[buffer], b.buffers[buffer], a.ulp.get(buffer, 0))
        assert not diffs, f"{buffer}: {len(diffs)} elements differ, first {diffs[:3]}"
    return len(only)


@pytest.mark.oracle
@pytest.mark.parametrize("name", CALL_FILES)
def test_inlined_ptx_through_ptxas_computes_what_nvcc_does(name, tmp_path):
    """The inliner checked apart from ptxc's backend: nvcc's PTX with the calls inlined
    is accepted by ptxas, and ptxas's cubin of it computes what nvcc's cubin computes
    (fe_math_double's trig slow path included, which ptxc's backend cannot select yet)."""
    path = oracle.nvcc_ptx(TESTSUITE / f"{name}.cu", tmp_path / f"{name}.ptx")
    module, kernels = inlined(parse_ptx(path.read_text(), str(path)), str(path))
    assert kernels
    text = print_module(module)
    assert all(not re.search(r"\bcall", line) or "callseq" in line
               for f in module.functions if f.name in kernels for line in ir_lines(f))
    out = tmp_path / "inlined.ptx"
    out.write_text(text)
    cubin = tmp_path / "inlined.cubin"
    oracle.run("ptxas", "-arch=sm_89", *PTXAS_FLAGS.get(name, ()), "-o", str(cubin), str(out))
    assert emulate_against_nvcc(name, cubin.read_bytes(), kernels, tmp_path) > 0


def ir_lines(func: ir.Function) -> list[str]:
    from ptxc.ptx.printer import format_function
    return format_function(func)


@pytest.mark.oracle
def test_isa_calls_direct_calls_through_ptxc_compute_what_nvcc_does(tmp_path):
    """isa_calls' kernels without recursion or function pointers (call_chain: an int
    function called twice, a loop in a callee; call_float: a float2 returned in an
    aligned byte array) through `ptxc x.ptx -o x.cubin`, on the emulator, no hazards."""
    path = oracle.nvcc_ptx(TESTSUITE / "isa_calls.cu", tmp_path / "isa_calls.ptx")
    module = parse_ptx(path.read_text(), str(path))
    module.functions = [f for f in module.functions if "fib" not in f.name and "indirect" not in f.name]
    subset = tmp_path / "direct.ptx"
    subset.write_text(print_module(module))
    cubin = tmp_path / "direct.cubin"
    run = subprocess.run([sys.executable, "-m", "ptxc", str(subset), "-o", str(cubin)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    for tool, args in (("cuobjdump", ["-sass"]), ("nvdisasm", [])):
        check = oracle.run(tool, *args, str(cubin), check=False)
        assert check.returncode == 0 and check.stderr == "", f"{tool}: {check.stderr}"
    kernels = {"call_chain", "call_float"}
    assert emulate_against_nvcc("isa_calls", cubin.read_bytes(), kernels, tmp_path, hazards=True) == 2


LIT_CALLS = sorted((TESTSUITE / "lower").glob("inline_call*.ptx"))


@pytest.mark.oracle
@pytest.mark.parametrize("path", LIT_CALLS, ids=[p.stem for p in LIT_CALLS])
def test_inlined_lit_files_compute_what_ptxas_computes(path, tmp_path):
    """The inline_calls lit files (byte arrays, a sign-extended byte, two copies, an
    early return, a local array) run by their LAUNCH lines: ptxc's cubin (inlined)
    against ptxas's (real calls) on the emulator, no hazards in ptxc's."""
    from ptxc.launch.spec import parse_file
    from ptxc.launch import differences, run_launches
    source = path.read_text()
    launches = parse_file(source, path.name)
    assert launches
    ours = tmp_path / "ptxc.cubin"
    run = subprocess.run([sys.executable, "-m", "ptxc", str(path), "-o", str(ours)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    theirs = oracle.ptxas(path, tmp_path / "ptxas.cubin")
    a = run_launches(theirs.read_bytes(), launches, source, path.name)
    b = run_launches(ours.read_bytes(), launches, source, path.name, check_hazards=True)
    assert not b.hazards, f"hazards: {b.hazards[:3]}"
    for buffer in a.buffers:
        assert not np.array_equal(a.initial[buffer], a.buffers[buffer]) or buffer == "x"
        diffs = differences(buffer, a.buffers[buffer], b.buffers[buffer])
        assert not diffs, f"{buffer}: {len(diffs)} elements differ, first {diffs[:3]}"


def test_lowering_a_kernel_without_the_modules_functions_says_so():
    """lower_function called with Options lacking `functions` (ptxc check's path before
    it passes them): the call is reported with that reason, not as a missing callee."""
    from ptxc.lower.pipeline import lower_function
    module = parse_ptx((TESTSUITE / "lower" / "inline_call_return.ptx").read_text(), "r.ptx")
    with pytest.raises(CompileError) as info:
        lower_function(module.kernels()[0], Options(filename="r.ptx"))
    assert "the pipeline was given none of the module's functions" in info.value.diagnostics[0].message
