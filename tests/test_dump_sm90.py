"""`ptxc dump` and the sm_90 instruction table against nvcc's sm_90 cubins for the whole testsuite.

RUN: pytest tests/test_dump_sm90.py
CHECK (oracle): every testsuite/*.cu compiled by nvcc -arch=sm_90 -cubin: `python -m ptxc
dump` prints exactly what `cuobjdump -sass` prints, line for line (headerflags
EF_CUDA_SM90, `desc[UR4][R2.64]` addresses, `LDC R1, c[0x0][0x28]`, S2UR ...); every word
decodes to a form of ptxc/sass/sm_90.json (no UNKNOWN), prints as cuobjdump prints it and
encodes back to itself.
CHECK: the sm_90 table loads by arch and knows what sm_89's does not (the printed
descriptor, bfloat16 immediates); sm_89's tables and printing are unchanged by it.
"""
from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.sass import decode, encode, printer, table
from ptxc.sass.ir import Control, Imm, Instr, Mem, R, Reg

from test_dump import first_difference, learn_script

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "testsuite").glob("*.cu"))
SM90 = table.load("sm_90")


@pytest.fixture(scope="session")
def nvcc_sm90_cubins(tmp_path_factory) -> dict:
    """Every testsuite kernel file compiled once for sm_90 (None where nvcc rejects it)."""
    out = tmp_path_factory.mktemp("nvcc_sm90")

    def one(cu: Path) -> Path | None:
        proc = oracle.run("nvcc", "-arch=sm_90", "-cubin", "-o", str(out / f"{cu.stem}.cubin"), str(cu), check=False)
        return out / f"{cu.stem}.cubin" if proc.returncode == 0 else None

    with ThreadPoolExecutor(2) as pool:
        return dict(zip((cu.stem for cu in SOURCES), pool.map(one, SOURCES)))


@pytest.mark.oracle
@pytest.mark.parametrize("name", [cu.stem for cu in SOURCES])
def test_dump_equals_cuobjdump_sm90(nvcc_sm90_cubins, name):
    if nvcc_sm90_cubins[name] is None:
        return  # nvcc rejects the file (an error test of the frontend's): nothing to dump
    proc = subprocess.run([sys.executable, "-m", "ptxc", "dump", str(nvcc_sm90_cubins[name])],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    ours, theirs = proc.stdout.splitlines(), oracle.cuobjdump_sass(nvcc_sm90_cubins[name]).splitlines()
    assert ours == theirs, first_difference(ours, theirs)


@pytest.mark.oracle
@pytest.mark.parametrize("name", [cu.stem for cu in SOURCES])
def test_every_sm90_word_decodes_and_encodes_back(nvcc_sm90_cubins, name):
    if nvcc_sm90_cubins[name] is None:
        return
    words = learn_script().cuobjdump_words(nvcc_sm90_cubins[name])
    assert words
    for func, addr, word, text in words:
        raw = word.to_bytes(16, "little")
        instr = decode.decode(raw, addr, SM90)
        assert instr.op != "UNKNOWN", f"{func}+{addr:#x}: no form for {text}"
        assert printer.format_instr(instr, addr, SM90) == text, f"{func}+{addr:#x}"
        assert encode.encode(instr, addr, SM90) == raw, f"{func}+{addr:#x}: {text}"


# ---------------------------------------------------------------------------------------
# The table itself (no oracle needed).
# ---------------------------------------------------------------------------------------
def test_tables_load_by_arch():
    assert SM90.arch == "sm_90" and table.load().arch == "sm_89"
    with pytest.raises(table.TableError, match="sm_75"):
        table.load("sm_75")


def test_sm90_prints_the_descriptor_sm89_does_not():
    ldg = Instr("LDG", ("E",), [R(3)], [table.make_mem(R(2, 2), desc=Reg("UR", 6, width=2))],
                ctrl=Control(stall=1, wbar=2))
    assert printer.format_instr(ldg, 0, SM90) == "LDG.E R3, desc[UR6][R2.64] ;"
    assert printer.format_instr(ldg, 0, table.load("sm_89")) == "LDG.E R3, [R2.64] ;"
    plain = Instr("STG", ("E",), [], [Mem(R(6, 2)), R(9)], ctrl=Control(stall=1))
    text = printer.format_instr(plain, 0, SM90)
    assert text == "STG.E desc[UR4][R6.64], R9 ;"  # no descriptor given: UR4, as ptxas loads it
    word = encode.encode(plain, 0, SM90)
    assert printer.format_instr(decode.decode(word, 0, SM90), 0, SM90) == text


def test_sm90_vadd_words_from_nvcc():
    """Three words of nvcc's sm_90 vadd (cuobjdump's hex), decoded and printed."""
    words = {
        "LDC R1, c[0x0][0x28] ;": (0x00000A00FF017B82, 0x000FE20000000800),
        "S2UR UR4, SR_CTAID.X ;": (0x00000000000479C3, 0x000E300000002500),
        "LDG.E R3, desc[UR4][R2.64] ;": (0x0000000402037981, 0x000EE2000C1E1900),
    }
    for text, (lo, hi) in words.items():
        raw = (lo | hi << 64).to_bytes(16, "little")
        instr = decode.decode(raw, 0, SM90)
        assert printer.format_instr(instr, 0, SM90) == text
        assert encode.encode(instr, 0, SM90) == raw


def test_bf16_immediates_print_as_bfloat16():
    assert printer.format_float(0x3E00, "f16") == "1.5"
    assert printer.format_float(0x3E00, "bf16") == "0.125"
    assert printer.format_float(0xC260, "bf16") == "-56"
    forms = [f for f in SM90.by_op["HFMA2"] if any(o.float_if for o in f.operands)]
    assert forms, "HFMA2.BF16_V2 with immediates should read them as bfloat16"
    spec = next(o for o in forms[0].operands if o.float_if)
    slot, value, kind = spec.float_if[0]
    assert kind == "bf16" and spec.float_for({slot: value}) == "bf16" and spec.float_for({}) == "f16"
    assert printer.format_operand(Imm(0x3E00, "f16"), spec, values={slot: value}) == "0.125"
