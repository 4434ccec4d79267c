"""PTX parser and printer: nvcc's PTX parses, and printing then re-parsing gives the same IR."""
from __future__ import annotations

import pytest

from ptxc import oracle
from ptxc.diagnostics import CompileError
from ptxc.ptx import ir
from ptxc.ptx.parser import parse_ptx
from ptxc.ptx.printer import print_module

from conftest import TESTSUITE


@pytest.fixture(scope="module")
def nvcc_vadd_ptx(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("ptx") / "vadd.ptx"
    oracle.nvcc_ptx(TESTSUITE / "vadd.cu", out)
    return out.read_text()


@pytest.mark.oracle
def test_nvcc_vadd_ptx_round_trips(nvcc_vadd_ptx):
    module = parse_ptx(nvcc_vadd_ptx, "vadd.ptx")
    assert [f.name for f in module.kernels()] == ["_Z4vaddPKfS0_Pfi"]
    assert parse_ptx(print_module(module)) == module


@pytest.mark.oracle
def test_printed_ptx_lines_match_nvcc(nvcc_vadd_ptx):
    """Apart from the header comment, ptxc prints nvcc's PTX line for line."""
    printed = print_module(parse_ptx(nvcc_vadd_ptx))
    body = lambda text: [l for l in text.splitlines() if l.strip() and not l.startswith("//")]
    assert body(printed) == body(nvcc_vadd_ptx)


@pytest.mark.oracle
def test_ptxas_accepts_printed_ptx(nvcc_vadd_ptx, tmp_path):
    path = tmp_path / "again.ptx"
    path.write_text(print_module(parse_ptx(nvcc_vadd_ptx)))
    oracle.ptxas(path, tmp_path / "again.cubin")


TESTSUITE_FILES = sorted(p.stem for p in TESTSUITE.glob("*.cu"))


@pytest.fixture(scope="module")
def nvcc_ptx_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("testsuite_ptx")


@pytest.mark.oracle
@pytest.mark.parametrize("name", TESTSUITE_FILES)
def test_nvcc_ptx_of_every_testsuite_file_round_trips_through_ptxas(name, nvcc_ptx_dir):
    """nvcc's PTX parses; ptxc prints it back; the print parses to the same IR and
    ptxas accepts it (scoped blocks, `%r|%p`, call sequences, .func declarations)."""
    source = nvcc_ptx_dir / f"{name}.ptx"
    oracle.nvcc_ptx(TESTSUITE / f"{name}.cu", source)
    module = parse_ptx(source.read_text(), str(source))
    printed = nvcc_ptx_dir / f"{name}.printed.ptx"
    printed.write_text(print_module(module))
    assert parse_ptx(printed.read_text(), str(printed)) == module
    oracle.ptxas(printed, nvcc_ptx_dir / f"{name}.cubin")


def test_reads_operand_forms():
    text = """
.version 9.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .align 8 .b8 k_param_1[16])
{
    .reg .pred %p<3>;
    .reg .b32 %r<9>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b8 buf[1024];
    ld.param.u64 %rd1, [k_param_0];
    ld.global.v2.f32 {%f1, %f2}, [%rd1+8];
    mov.f32 %f1, 0f3F800000;
    add.s32 %r1, %r2, -4;
    @!%p1 bra $L__BB0_2;
$L__BB0_2:
    ret;
}
"""
    module = parse_ptx(text)
    func = module.functions[0]
    assert func.params[1] == ir.Param(".b8", "k_param_1", align=8, array=16)
    assert func.vars[0].state == ".shared" and func.vars[0].array == 1024
    instrs = func.instrs()
    assert instrs[1].operands == [ir.Vector((ir.Reg("%f1"), ir.Reg("%f2"))), ir.Address(ir.Reg("%rd1"), 8)]
    assert instrs[2].operands[1] == ir.Imm(1.0, ".f32")
    assert instrs[3].operands[2] == ir.Imm(-4)
    assert instrs[4].guard == ir.Reg("%p1") and instrs[4].guard_negated
    assert parse_ptx(print_module(module)) == module


@pytest.mark.parametrize("bad, message, line, col", [
    ("\tadd.s32 %r1, %r2 %r3;\n", "unexpected '%r3'", 8, 19),
    ("\tadd.s32 %r1, %r2, %r99;\n", "register '%r99' is not declared", 8, 2),
    ("\tadd.s32 %r1, %r2, #;\n", "unexpected character '#'", 8, 20),
    # regressions (found by mutating nvcc's PTX): these were internal errors (KeyError)
    ("\tbra.uni $L__BB0_9;\n", "label '$L__BB0_9' is not defined in 'k'", 8, 2),
    ("\t.reg .float %f<2>;\n", "unknown type '.float'", 8, 7),
])
def test_syntax_errors_point_at_the_token(bad, message, line, col):
    text = (".version 9.5\n.target sm_89\n.address_size 64\n.visible .entry k()\n{\n"
            "\t.reg .b32 %r<4>;\n\n" + bad + "}\n")
    with pytest.raises(CompileError) as info:
        parse_ptx(text, "bad.ptx")
    diag = info.value.diagnostics[0]
    assert message in diag.message
    assert (diag.loc.line, diag.loc.col) == (line, col)
    formatted = info.value.format()
    assert formatted.startswith(f"bad.ptx:{line}:{col}: error:")
    assert formatted.splitlines()[2] == " " * (col - 1) + "^"


def test_unknown_parameter_type_is_an_error():
    """Regression: `.param .float` (not a PTX type) was an internal error (KeyError)."""
    text = ".version 9.5\n.target sm_89\n.address_size 64\n.visible .entry k(\n\t.param .float p\n)\n{\n\tret;\n}\n"
    with pytest.raises(CompileError) as info:
        parse_ptx(text, "bad.ptx")
    diag = info.value.diagnostics[0]
    assert diag.message == "unknown type '.float'"
    assert (diag.loc.line, diag.loc.col) == (5, 9)


# Instructions whose operands do not fit their opcode: each was an internal error (a
# rule unpacking operands that were not there) before operand_shapes, found by mutating
# nvcc's PTX.  ptxas rejects every one on the same line: the test asks it.
BAD_OPERANDS = [
    ("add.s32 %r1, %r2;", "'add.s32' takes 3 operands, not 2"),
    ("add.s32 %r1, %r2, %r3, %r3;", "'add.s32' takes 3 operands, not 4"),
    ("ld.global.u32 %r1;", "'ld.global.u32' takes 2 operands, not 1"),
    ("ld.global.v2.u32 %r1, [%rd1];", "'ld.global.v2.u32' moves a vector of 2"),
    ("ld.global.u32 {%r1, %r2}, [%rd1];", "'ld.global.u32' moves one value"),
    ("st.global.u32 %r1, %r2;", "operand 1 of 'st.global.u32' must be an address"),
    ("mov.u32 1, %r1;", "operand 1 of 'mov.u32' must be a register"),
    ("add.s32 %r1, %r2, 1.5;", "'add.s32' takes no floating-point immediate"),
    ("add.f32 %f1, %f2, 1;", "'add.f32' takes no integer immediate"),
    ("or.b32 %r1, %r2, 0d3FF0000000000000;", "'or.b32' takes no 64-bit floating-point immediate"),
    ("st.param.local [%rd1], %r1;", "'st.param.local' names no type"),
    ("cvt.u64.u32 %rd1, %r1, %r2;", "'cvt.u64.u32' takes 2 operands, not 3"),
    ("setp.lt.s32 %p1, %r1;", "'setp.lt.s32' takes 3 or 4 operands, not 2"),
    ("bra.uni $L__nowhere;", "label '$L__nowhere' is not defined in 'k'"),
    ("bar.sync 0, 1.0;", "'bar.sync' takes no floating-point immediate"),
]


def _kernel_with(line: str) -> str:
    return (".version 9.0\n.target sm_89\n.address_size 64\n.visible .entry k()\n{\n"
            "\t.reg .b32 %r<4>;\n\t.reg .f32 %f<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<2>;\n\n"
            f"\t{line}\n\tret;\n}}\n")


@pytest.mark.parametrize("line, message", BAD_OPERANDS)
def test_operands_that_do_not_fit_are_errors_at_the_instruction(line, message):
    with pytest.raises(CompileError) as info:
        parse_ptx(_kernel_with(line), "bad.ptx")
    diag = info.value.diagnostics[0]
    assert message in diag.message
    assert (diag.loc.line, diag.loc.col) == (11, 2)


@pytest.mark.oracle
def test_ptxas_rejects_the_same_operands(tmp_path):
    """The oracle agrees that each of BAD_OPERANDS is an error, on the same line."""
    for k, (line, _message) in enumerate(BAD_OPERANDS):
        ptx = tmp_path / f"bad{k}.ptx"
        ptx.write_text(_kernel_with(line))
        result = oracle.run("ptxas", "-arch=sm_89", "-o", str(tmp_path / "x.cubin"), str(ptx), check=False)
        assert result.returncode != 0, line
        assert f"line 11;" in result.stdout + result.stderr, (line, result.stderr)


def test_operand_shapes_of_the_cli_error(tmp_path, capsys):
    """Through the command line: file:line:col, the line, a caret, exit 1, no output."""
    from ptxc.cli import main
    ptx = tmp_path / "bad.ptx"
    ptx.write_text(_kernel_with("add.s32 %r1, %r2;"))
    out = tmp_path / "bad.cubin"
    assert main([str(ptx), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{ptx}:11:2: error: 'add.s32' takes 3 operands, not 2")
    assert err.splitlines()[2] == " ^"
    assert not out.exists()
