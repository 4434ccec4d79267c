"""SASS encoding against NVIDIA's tools: the table (ptxc/sass/sm_89.json), encoder,
decoder and printer.

RUN: pytest tests/test_sass_encoding.py
CHECK (oracle): every word ptxas and nvcc write decodes, re-encodes to the same 16 bytes
and prints as cuobjdump -sass prints it (whole listings, column for column); every form's
instructions built in Python print, once encoded, as `nvdisasm -b SM89` prints them; the
seed vadd kernel written by hand in SASS IR encodes to nvcc's own words.
"""
from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.sass import decode, encode, printer, table
from ptxc.sass.ir import CBank, Control, Imm, Instr, Mem, P, R, Reg, SpecialReg, Target, UR

ROOT = Path(__file__).resolve().parent.parent
CTRL_MASK = table.CTRL_MASK


@lru_cache(maxsize=None)
def learn_script():
    """scripts/learn_sm89_table.py: its probe kernels and batched nvdisasm."""
    spec = importlib.util.spec_from_file_location("learn_sm89_table", ROOT / "scripts" / "learn_sm89_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cubins():
    """The probe kernels compiled by ptxas and the seed vadd compiled by nvcc."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        yield {
            "probes": learn_script().compile_probes(tmp, learn_script().PROBES),
            "vadd": oracle.nvcc_cubin(ROOT / "testsuite" / "vadd.cu", tmp / "vadd.cubin"),
        }


# ---------------------------------------------------------------------------------------
# (1) What NVIDIA's tools write: decode -> encode -> print.
# ---------------------------------------------------------------------------------------
@pytest.mark.oracle
@pytest.mark.parametrize("which", ["probes", "vadd"])
def test_tool_words_round_trip(cubins, which):
    words = learn_script().cuobjdump_words(cubins[which])
    assert words
    for func, addr, word, text in words:
        raw = word.to_bytes(16, "little")
        instr = decode.decode(raw, addr)
        assert instr.op != "UNKNOWN", f"{func}+{addr:#x}: no form for {text}"
        assert printer.format_instr(instr, addr) == text, f"{func}+{addr:#x}"
        assert encode.encode(instr, addr) == raw, f"{func}+{addr:#x}: {text}"


@pytest.mark.oracle
@pytest.mark.parametrize("which", ["probes", "vadd"])
def test_listing_matches_cuobjdump(cubins, which):
    functions: dict = {}
    for func, addr, word, _ in learn_script().cuobjdump_words(cubins[which]):
        functions.setdefault(func, []).append((addr, decode.decode(word.to_bytes(16, "little"), addr)))
    assert printer.format_file(functions.items()) == oracle.cuobjdump_sass(cubins[which])


@pytest.mark.oracle
def test_format_cubin_reads_text_sections(cubins):
    """`ptxc dump`'s printer, given the cubins ptxas and nvcc wrote."""
    from ptxc.cubin.reader import read_cubin
    for path in cubins.values():
        assert printer.format_cubin(read_cubin(path.read_bytes())) == oracle.cuobjdump_sass(path)


# ---------------------------------------------------------------------------------------
# (2) Instructions built in Python: encode, then nvdisasm must print what ptxc prints.
# ---------------------------------------------------------------------------------------
def seed_instrs() -> list[Instr]:
    """The instructions of the seed kernel path, each in the forms lowering will use."""
    c = Control(stall=2, yield_bit=1)
    return [
        Instr("MOV", (), [R(1)], [CBank(0, 0x28)], ctrl=c),
        Instr("MOV", (), [R(7)], [Imm(4)], ctrl=c),
        *[Instr("S2R", (), [R(3)], [SpecialReg(f"SR_{sr}")], ctrl=c)
          for sr in ("TID.X", "TID.Y", "TID.Z", "CTAID.X", "CTAID.Y", "CTAID.Z", "LANEID")],
        Instr("IMAD", (), [R(6)], [R(6), CBank(0, 0), R(3)], ctrl=c),
        Instr("IMAD", (), [R(0)], [R(0), R(3), R(5)], ctrl=c),
        Instr("IMAD", (), [R(0)], [R(0), Imm(0x3039), R(5)], ctrl=c),
        Instr("IMAD", ("MOV", "U32"), [R(1)], [R(255), R(255), CBank(0, 0x28)], ctrl=c),
        Instr("IMAD", ("SHL", "U32"), [R(4)], [R(24), Imm(8), R(255)], ctrl=c),
        Instr("IMAD", ("IADD",), [R(5)], [R(2), Imm(1), R(5)], ctrl=c),
        Instr("IMAD", ("U32",), [R(3)], [R(255), R(255), Imm(8)], ctrl=c),  # prints IMAD.MOV.U32
        Instr("IMAD", ("WIDE",), [R(2, 2)], [R(6), R(7), CBank(0, 0x160)], ctrl=Control(2, 1, reuse=3)),
        Instr("IMAD", ("WIDE", "U32"), [R(2, 2)], [R(0), R(3), R(4, 2)], ctrl=c),
        Instr("IMAD", ("WIDE",), [R(2, 2)], [R(0), Imm(4), R(4, 2)], ctrl=c),
        *[Instr("ISETP", (cmp, "AND"), [P(0), P(7)], [R(6), CBank(0, 0x178), P(7)], ctrl=c)
          for cmp in ("LT", "EQ", "LE", "GT", "NE", "GE")],
        Instr("ISETP", ("GE", "U32", "OR"), [P(1), P(7)], [R(4), R(6), Reg("P", 2, inv=True)], ctrl=c),
        Instr("ISETP", ("NE", "XOR"), [P(1), P(7)], [R(4), Imm(5), P(7)], ctrl=c),
        Instr("ISETP", ("GE", "AND", "EX"), [P(0), P(7)], [R(5), CBank(0, 0x16c), P(7), P(0)], ctrl=c),
        Instr("EXIT", ctrl=Control(5, 1)),
        Instr("EXIT", pred=P(0), ctrl=Control(5, 1)),
        Instr("EXIT", pred=Reg("P", 0, inv=True), ctrl=Control(5, 1)),
        Instr("NOP", ctrl=Control(0, 0)),
        Instr("ULDC", ("64",), [UR(4, 2)], [CBank(0, 0x118)], ctrl=c),
        Instr("ULDC", (), [UR(5)], [CBank(0, 0x178)], ctrl=c),
        *[Instr("LDG", ("E",) + size, [R(4)], [Mem(R(2, 2), off)], ctrl=Control(4, 1, wbar=2))
          for size in ((), ("64",), ("128",), ("U8",), ("S8",), ("U16",), ("S16",)) for off in (0, 0x10, -4)],
        *[Instr("STG", ("E",) + size, [], [Mem(R(6, 2), 0x20), R(8)], ctrl=Control(1, 1, rbar=1))
          for size in ((), ("64",), ("128",), ("U8",), ("U16",))],
        # generic addresses (no state space): LD/ST, .E like LDG/STG, volatile .STRONG.SYS
        *[Instr("LD", ("E",) + size, [R(4)], [Mem(R(2, 2), off)], ctrl=Control(4, 1, wbar=2))
          for size in ((), ("64",), ("128",), ("U8",), ("S8",), ("U16",), ("S16",), ("STRONG", "SYS"),
                       ("64", "STRONG", "SYS")) for off in (0, 0x7c, -4)],
        *[Instr("ST", ("E",) + size, [], [Mem(R(6, 2), 0x20), R(8)], ctrl=Control(1, 1, rbar=1))
          for size in ((), ("64",), ("128",), ("U8",), ("U16",), ("STRONG", "SYS"), ("EF",))],
        Instr("FADD", (), [R(9)], [R(4), R(3)], ctrl=c),
        Instr("FADD", (), [R(9)], [Reg("R", 4, neg=True), Reg("R", 3, abs=True)], ctrl=c),
        Instr("FADD", (), [R(9)], [R(4), Imm(0x3F000000, "f32")], ctrl=c),
        Instr("FADD", (), [R(9)], [R(4), CBank(0, 0x174)], ctrl=c),
        Instr("IADD3", (), [R(14), P(0)], [R(6), CBank(0, 0x170), R(255)], ctrl=c),
        Instr("IADD3", (), [R(14)], [R(0), R(8), R(9)], ctrl=c),
        Instr("IADD3", ("X",), [R(15)], [R(255), R(7), R(255), P(0), Reg("P", 7, inv=True)], ctrl=c),
        Instr("LEA", (), [R(8), P(0)], [R(12), R(4), Imm(2)], ctrl=c),
        Instr("LEA", ("HI", "X"), [R(9)], [R(12), R(5), R(255), Imm(2), P(0)], ctrl=c),
        Instr("SHF", ("L", "U32"), [R(13)], [R(14), Imm(3), R(255)], ctrl=c),
        Instr("SHF", ("R", "S32", "HI"), [R(6)], [R(255), Imm(5), R(24)], ctrl=c),
        Instr("LOP3", ("LUT",), [R(10)], [R(10), R(11), R(255), Imm(0x3C), Reg("P", 7, inv=True)], ctrl=c),
        Instr("SEL", (), [R(8)], [R(255), Imm(1), P(3)], ctrl=c),
        Instr("FMUL", (), [R(14)], [R(7), R(0)], ctrl=c),
        Instr("FFMA", (), [R(15)], [R(7), R(0), R(8)], ctrl=c),
        *half_instrs(c),
    ]


def half_instrs(c: Control) -> list[Instr]:
    """The half-precision forms isel_float selects: .H0_H0 halves of f16 values, -RZ and
    |a| for neg/abs, HSETP2 of one half and of both, F2FP's rounding, F2F from f64."""
    def h(num, **flags):
        return Reg("R", num, sel="H0_H0", **flags)
    return [
        Instr("HMUL2", (), [R(9)], [h(4), h(5)], ctrl=c),
        Instr("HMUL2", ("FTZ", "SAT"), [R(9)], [R(4), R(5)], ctrl=c),
        Instr("HADD2", ("FTZ",), [R(9)], [h(4), h(5, neg=True)], ctrl=c),
        Instr("HADD2", (), [R(9)], [h(4, abs=True), h(255, neg=True)], ctrl=c),
        Instr("HADD2", ("F32",), [R(9)], [Reg("R", 255, neg=True), h(4)], ctrl=c),
        Instr("HFMA2", ("SAT",), [R(9)], [h(4), h(5), h(6)], ctrl=c),
        Instr("HMNMX2", (), [R(9)], [h(4), h(5), Reg("P", 7, inv=True)], ctrl=c),
        Instr("HSETP2", ("LT", "AND"), [P(0), P(7)], [h(4), h(5), P(7)], ctrl=c),
        Instr("HSETP2", ("GEU", "OR"), [P(0), P(1)], [R(4), R(5), P(2)], ctrl=c),
        Instr("F2FP", ("F16", "F32", "PACK_AB", "RZ"), [R(9)], [R(255), R(4)], ctrl=c),
        Instr("F2F", ("F16", "F64"), [R(9)], [R(4, 2)], ctrl=c),
    ]


def branch_instrs() -> list[tuple[int, Instr]]:
    return [(0x100, Instr("BRA", (), [], [Target(addr=0x100)], ctrl=Control(0, 0))),
            (0x40, Instr("BRA", (), [], [Target(addr=0x400)], pred=P(1), ctrl=Control(5, 1))),
            (0x400, Instr("BRA", (), [], [Target(addr=0x20)], ctrl=Control(5, 1)))]


@pytest.mark.oracle
def test_built_instrs_print_as_nvdisasm():
    learn = learn_script()
    tbl = table.load()
    rng = random.Random(2024)
    placed = [(16 * n, i) for n, i in enumerate(seed_instrs())]
    hand_made = len(placed)
    for form in tbl.forms:  # every form, random fields
        for _ in range(8):
            addr = 16 * len(placed)
            placed.append((addr, table.random_instr(form, rng, addr)))
    words = [int.from_bytes(encode.encode(i, a), "little") for a, i in placed]
    texts = learn.nvdisasm_batch(words)
    illegal = 0
    for n, ((addr, instr), text) in enumerate(zip(placed, texts)):
        if text is None:
            assert n >= hand_made, f"nvdisasm rejects {printer.format_instr(instr, addr)}"
            illegal += 1
            continue
        assert printer.format_instr(instr, addr) == text
    assert illegal < len(placed) // 20


@pytest.mark.oracle
def test_branch_targets_are_pc_relative():
    learn = learn_script()
    placed = branch_instrs()
    # nvdisasm reads a raw file from address 0: put each branch at its own address.
    words = [0] * (max(a for a, _ in placed) // 16 + 1)
    filler = encode.encode(Instr("NOP", ctrl=Control(0, 0)), 0)
    words = [int.from_bytes(filler, "little")] * len(words)
    for addr, instr in placed:
        words[addr // 16] = int.from_bytes(encode.encode(instr, addr), "little")
    texts = learn.nvdisasm_batch(words)
    for addr, instr in placed:
        assert texts[addr // 16] == printer.format_instr(instr, addr)


@pytest.mark.oracle
def test_vadd_written_in_ir_encodes_to_nvcc_words(cubins):
    """nvcc's vadd, typed as SASS IR: the same opcode and operand bits (the control words
    are the scheduler's business and are compared separately)."""
    c = Control()
    ir = [
        Instr("MOV", (), [R(1)], [CBank(0, 0x28)], ctrl=c),
        Instr("S2R", (), [R(6)], [SpecialReg("SR_CTAID.X")], ctrl=c),
        Instr("S2R", (), [R(3)], [SpecialReg("SR_TID.X")], ctrl=c),
        Instr("IMAD", (), [R(6)], [R(6), CBank(0, 0x0), R(3)], ctrl=c),
        Instr("ISETP", ("GE", "AND"), [P(0), P(7)], [R(6), CBank(0, 0x178), P(7)], ctrl=c),
        Instr("EXIT", pred=P(0), ctrl=c),
        Instr("MOV", (), [R(7)], [Imm(4)], ctrl=c),
        Instr("ULDC", ("64",), [UR(4, 2)], [CBank(0, 0x118)], ctrl=c),
        Instr("IMAD", ("WIDE",), [R(4, 2)], [R(6), R(7), CBank(0, 0x168)], ctrl=c),
        Instr("IMAD", ("WIDE",), [R(2, 2)], [R(6), R(7), CBank(0, 0x160)], ctrl=c),
        Instr("LDG", ("E",), [R(4)], [Mem(R(4, 2))], ctrl=c),
        Instr("LDG", ("E",), [R(3)], [Mem(R(2, 2))], ctrl=c),
        Instr("IMAD", ("WIDE",), [R(6, 2)], [R(6), R(7), CBank(0, 0x170)], ctrl=c),
        Instr("FADD", (), [R(9)], [R(4), R(3)], ctrl=c),
        Instr("STG", ("E",), [], [Mem(R(6, 2)), R(9)], ctrl=c),
        Instr("EXIT", ctrl=c),
        Instr("BRA", (), [], [Target(addr=0x100)], ctrl=c),
    ] + [Instr("NOP", ctrl=c)] * 15
    ours = encode.encode_all(ir)
    words = learn_script().cuobjdump_words(cubins["vadd"])
    assert len(words) == len(ir)
    for n, (_, addr, word, text) in enumerate(words):
        mine = int.from_bytes(ours[16 * n: 16 * n + 16], "little")
        assert mine & ~CTRL_MASK == word & ~CTRL_MASK, f"{addr:#x}: {text}"
        theirs = decode.decode(word.to_bytes(16, "little"), addr)
        assert Control.unpack(word >> 105).pack() == theirs.ctrl.pack()


# ---------------------------------------------------------------------------------------
# Without the oracle: the table agrees with itself.
# ---------------------------------------------------------------------------------------
def test_every_form_round_trips_through_its_own_fields():
    tbl = table.load()
    rng = random.Random(89)
    for form in tbl.forms:
        for n in range(20):
            instr = table.random_instr(form, rng, 16 * n)
            raw = encode.encode(instr, 16 * n)
            again = decode.decode(raw, 16 * n)
            assert again.op != "UNKNOWN", form.name
            assert encode.encode(again, 16 * n) == raw, form.name
            assert printer.format_instr(again, 16 * n) == printer.format_instr(instr, 16 * n), form.name


def test_table_covers_the_seed_path():
    ops = set(table.load().by_op)
    for op in ("MOV", "S2R", "IMAD", "ISETP", "EXIT", "BRA", "NOP", "ULDC", "LDG", "STG", "FADD",
               "IADD3", "LEA", "SHF", "LOP3", "SEL", "FMUL", "FFMA"):
        assert op in ops
    for instr in seed_instrs():
        encode.encode(instr, 0)


def test_unknown_word_prints_and_survives():
    raw = bytes(range(16))
    instr = decode.decode(raw, 0)
    assert instr.op == "UNKNOWN"
    assert printer.format_instr(instr, 0) == f"UNKNOWN 0x{raw[::-1].hex()} ;"
    assert encode.encode(instr, 0) == raw
    with pytest.raises(decode.DecodeError):
        decode.decode_strict(raw, 0)


def test_encoder_refuses_what_it_cannot_encode():
    with pytest.raises(encode.EncodeError, match="virtual"):
        encode.encode(Instr("MOV", (), [Reg("R", 3, virtual=True)], [Imm(1)]), 0)
    with pytest.raises(encode.EncodeError, match="no sm_89 form"):
        encode.encode(Instr("FROB", (), [R(1)], [R(2)]), 0)
    with pytest.raises(encode.EncodeError):
        encode.encode(Instr("MOV", (), [R(1)], [CBank(0, 0x2a)]), 0)  # not word aligned
    with pytest.raises(encode.EncodeError, match="only for"):
        encode.encode(Instr("IMAD", ("MOV",), [R(1)], [R(2), R(3), R(4)]), 0)


def test_format_ir_shows_virtual_registers():
    instr = Instr("IMAD", ("WIDE",), [Reg("R", 4, virtual=True, width=2)],
                  [Reg("R", 1, virtual=True), Imm(4), CBank(0, 0x160)], pred=Reg("P", 0, virtual=True))
    assert printer.format_ir(instr) == "@%p0 IMAD.WIDE %r4.64, %r1, 0x4, c[0x0][0x160] ;"


def test_format_ir_prints_a_virtual_address_pair_once():
    """Regression: a virtual pair as an address printed its width twice, [%r30.64.64]
    (the pair says .64 already); physical pairs print [R30.64] as nvdisasm does."""
    load = Instr("LD", ("E",), [Reg("R", 43, virtual=True)], [Mem(Reg("R", 30, virtual=True, width=2), 0x7c)])
    assert printer.format_ir(load) == "LD.E %r43, [%r30.64+0x7c] ;"
    store = Instr("ST", ("E",), [], [Mem(R(30, 2)), R(34)])
    assert printer.format_ir(store) == "ST.E [R30.64], R34 ;"


GENERIC_LIT = ["select_generic_ldst.ptx", "select_generic_ordering.ptx"]


@pytest.mark.oracle
@pytest.mark.parametrize("name", GENERIC_LIT)
def test_generic_accesses_select_what_ptxas_selects(tmp_path, name):
    """Generic ld/st (no state space): ptxc's LD/ST are the forms ptxas writes for the
    same PTX (mnemonic, modifiers, offset; registers are the allocator's business), the
    descriptor is loaded as ptxas loads it, and cuobjdump reads ptxc's cubin as ptxc
    prints it."""
    import re
    from ptxc.cubin.reader import read_cubin
    ptx = ROOT / "testsuite" / "lower" / name
    theirs = oracle.ptxas(ptx, tmp_path / "theirs.cubin")
    ours = tmp_path / "ours.cubin"
    subprocess.run([sys.executable, "-m", "ptxc", str(ptx), "-o", str(ours)], check=True)

    def accesses(cubin):
        texts = [t for _, _, _, t in learn_script().cuobjdump_words(cubin)]
        shapes = [re.sub(r"\bR\d+", "R", t) for t in texts if re.match(r"(LD|ST|ULDC)\b", t)]
        return sorted(shapes)
    assert accesses(ours) == accesses(theirs)
    assert printer.format_cubin(read_cubin(ours.read_bytes())) == oracle.cuobjdump_sass(ours)


def test_importing_sass_is_light():
    code = ("import sys; "
            "import ptxc.sass.encode, ptxc.sass.decode, ptxc.sass.printer, ptxc.sass.table as t2; "
            "t2.load(); assert 'numba' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.oracle
def test_imad_shl_alias_matches_nvdisasm_for_every_power_of_two(tmp_path):
    """Regression: 0x10000 printed as IMAD.SHL.U32 where nvdisasm says IMAD.U32."""
    from ptxc import oracle
    from ptxc.sass.decode import decode
    from ptxc.sass.printer import format_instr
    base = bytearray(bytes.fromhex("2478140800000100ff008e0700e20f04"))  # IMAD R20, R8, imm, RZ
    words = []
    for k in range(1, 32):
        word = bytearray(base)
        word[4:8] = (1 << k).to_bytes(4, "little")
        words.append(bytes(word))
    (tmp_path / "pow2.bin").write_bytes(b"".join(words))
    theirs = [line.split("*/", 1)[1].split("/*")[0].strip().rstrip(" ;")
              for line in oracle.nvdisasm_raw(tmp_path / "pow2.bin").splitlines() if "IMAD" in line]
    ours = [format_instr(decode(w, 16 * k), 16 * k).strip().rstrip(" ;") for k, w in enumerate(words)]
    assert ours == theirs
