"""sm_90's LD has a 64-bit form that prints its descriptor (`LD.E R10, desc[UR4][R8.64+0x8]`)
and a 32-bit one (`LD.E R10, [R8+0x8]`) with the same modifiers: the width of the base
register decides which one an instruction is encoded and printed with.  (The learner's
verification of sm_90.json failed on this until ptxc.sass.table.operand_fits stopped
letting a 32-bit base match a form whose address is fixed 64-bit.)  nvdisasm says how
each word prints."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.sass import decode, encode, printer, table
from ptxc.sass.ir import Control, Instr, Mem, R

ROOT = Path(__file__).resolve().parent.parent
needs_nvdisasm = pytest.mark.skipif(not oracle.available("nvdisasm"), reason="nvdisasm is not installed")


def _learner():
    name = "learn_sm89_table"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look themselves up there
        spec.loader.exec_module(module)
    return sys.modules[name]


def _loads(width: int) -> list[Instr]:
    c = Control(2, 1)
    return [Instr("LD", ("E",), [R(10)], [Mem(R(8, width), 8)], ctrl=c),
            Instr("LD", ("E", "64"), [R(10, 2)], [Mem(R(8, width), -0x10)], ctrl=c),
            Instr("LD", ("E", "U8", "STRONG", "GPU"), [R(11)], [Mem(R(6, width), 0)], ctrl=c)]


def test_base_width_picks_the_ld_form():
    """A regression guard on ptxc alone (no oracle): the two widths choose different forms,
    and each word round-trips.  How each prints is nvdisasm's word, in the test below."""
    tbl = table.load("sm_90")
    narrow, wide = (table.match_form(tbl, _loads(width)[0])[0].name for width in (1, 2))
    assert narrow != wide
    for width in (1, 2):
        instr = _loads(width)[0]
        word = encode.encode(instr, 0, tbl)
        assert encode.encode(decode.decode(word, 0, tbl), 0, tbl) == word


@pytest.mark.oracle
@needs_nvdisasm
def test_ld_of_either_width_prints_as_nvdisasm(monkeypatch):
    learn = _learner()
    monkeypatch.setattr(learn, "NVDISASM_ARCH", "SM90")
    tbl = table.load("sm_90")
    instrs = _loads(1) + _loads(2)
    words = [encode.encode(i, 16 * n, tbl) for n, i in enumerate(instrs)]
    texts = learn.nvdisasm_batch([int.from_bytes(w, "little") for w in words])
    for n, (instr, word, text) in enumerate(zip(instrs, words, texts)):
        assert text is not None, f"nvdisasm rejects {printer.format_instr(instr, 16 * n, tbl)}"
        assert printer.format_instr(instr, 16 * n, tbl) == text
        again = decode.decode(word, 16 * n, tbl)
        assert printer.format_instr(again, 16 * n, tbl) == text
        assert encode.encode(again, 16 * n, tbl) == word
    assert "desc[" not in texts[0] and "desc[UR4][R8.64+0x8]" in texts[3]
