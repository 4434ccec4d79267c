#!/usr/bin/env python3
"""Learn ptxas's code for the PTX operations that expand into long sequences.

    python scripts/learn_mathlib.py            # writes ptxc/lower/mathlib_sm89.json
    python scripts/learn_mathlib.py --show div.rn.f32
    python scripts/learn_mathlib.py --arch sm_90   # writes ptxc/lower/mathlib_sm90.json

Correctly rounded division, reciprocal and square root, integer division and
remainder, and the approximations with range fixups are not one instruction on
sm_89: ptxas writes a fast path and, for the rare inputs it cannot handle, a slow
path in a subroutine.  Rather than re-derive those sequences, ptxc takes them from
the pinned ptxas: for each operation this script compiles a kernel that loads the
operands, applies the operation once and stores the result, and keeps what ptxas
put between the loads and the store, the subroutine included, as raw instruction
words (decoded by ptxc.sass.decode at compile time, so nothing is re-typed by hand):

- inputs: the registers the loads wrote (operand index, 32-bit word, register, width);
- output: the register the store read;
- code: the words in address order, minus the kernel's own frame (the loads, the
  store, EXIT, the parameter reads, R1, ULDC), with every branch target as a label;
  `CALL.REL.NOINC sub` becomes `BRA sub` and `RET.REL.NODEC` a `BRA` back to the
  instruction after the call, so the subroutine is inlined after the fast path
  (one call site per operation).

ptxc/lower/isel_math.py instantiates a sequence with fresh virtual registers, one
per register (or aligned pair) the sequence uses.  Every instruction of every
sequence must decode with the instruction table; the script checks that and that
encode(decode(word)) gives the word back.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ptxc import oracle  # noqa: E402
from ptxc.cubin.reader import read_cubin  # noqa: E402
from ptxc.sass.decode import decode  # noqa: E402
from ptxc.sass.encode import encode  # noqa: E402
from ptxc.sass.ir import CBank, Mem, Reg, Target  # noqa: E402
from ptxc.sass.printer import format_instr  # noqa: E402
from ptxc.sass.table import load  # noqa: E402
from ptxc.sass.target import TARGETS, target  # noqa: E402

ARCH = "sm_89"                     # --arch changes it


def out_path(arch: str) -> Path:
    return ROOT / "ptxc" / "lower" / target(arch).mathlib_file



# operation -> (destination type, source types)
F32_1, F32_2 = ("f32", ("f32",)), ("f32", ("f32", "f32"))
F64_1, F64_2 = ("f64", ("f64",)), ("f64", ("f64", "f64"))
OPERATIONS = {
    "div.rn.f32": F32_2, "div.rn.ftz.f32": F32_2, "div.full.f32": F32_2, "div.full.ftz.f32": F32_2,
    "div.approx.f32": F32_2, "div.approx.ftz.f32": F32_2,
    "div.rz.f32": F32_2, "div.rm.f32": F32_2, "div.rp.f32": F32_2,
    "rcp.rn.f32": F32_1, "rcp.rn.ftz.f32": F32_1, "rcp.approx.f32": F32_1,
    "rcp.rz.f32": F32_1, "rcp.rm.f32": F32_1, "rcp.rp.f32": F32_1,
    "sqrt.rn.f32": F32_1, "sqrt.rn.ftz.f32": F32_1, "sqrt.approx.f32": F32_1, "sqrt.approx.ftz.f32": F32_1,
    "rsqrt.approx.f32": F32_1, "ex2.approx.f32": F32_1, "lg2.approx.f32": F32_1,
    "div.rn.f64": F64_2, "div.rz.f64": F64_2, "div.rm.f64": F64_2, "div.rp.f64": F64_2,
    "rcp.rn.f64": F64_1, "sqrt.rn.f64": F64_1, "rsqrt.approx.f64": F64_1, "rsqrt.approx.ftz.f64": F64_1,
    "rcp.approx.ftz.f64": F64_1,
    "min.f64": F64_2, "max.f64": F64_2,
    "div.u32": ("u32", ("u32", "u32")), "div.s32": ("s32", ("s32", "s32")),
    "rem.u32": ("u32", ("u32", "u32")), "rem.s32": ("s32", ("s32", "s32")),
    "div.u64": ("u64", ("u64", "u64")), "div.s64": ("s64", ("s64", "s64")),
    "rem.u64": ("u64", ("u64", "u64")), "rem.s64": ("s64", ("s64", "s64")),
    "mul.hi.u64": ("u64", ("u64", "u64")), "mul.hi.s64": ("s64", ("s64", "s64")),
    "cvt.rn.f16.f32": ("f16", ("f32",)), "cvt.f32.f16": ("f32", ("f16",)),
    "cvt.rn.f16.f64": ("f16", ("f64",)), "cvt.f64.f16": ("f64", ("f16",)),
    "add.f16": ("f16", ("f16", "f16")), "sub.f16": ("f16", ("f16", "f16")), "mul.f16": ("f16", ("f16", "f16")),
    "fma.rn.f16": ("f16", ("f16", "f16", "f16")), "neg.f16": ("f16", ("f16",)), "abs.f16": ("f16", ("f16",)),
    "add.f16x2": ("f16x2", ("f16x2", "f16x2")), "sub.f16x2": ("f16x2", ("f16x2", "f16x2")),
    "mul.f16x2": ("f16x2", ("f16x2", "f16x2")), "fma.rn.f16x2": ("f16x2", ("f16x2", "f16x2", "f16x2")),
    "max.f16x2": ("f16x2", ("f16x2", "f16x2")), "min.f16x2": ("f16x2", ("f16x2", "f16x2")),
    "max.f16": ("f16", ("f16", "f16")), "min.f16": ("f16", ("f16", "f16")),
}

KERNEL = """.version 9.5
.target {arch}
.address_size 64
.visible .entry k(.param .u64 p0, .param .u64 p1)
{{
{regs}
\t.reg .b64 %ad<3>;
\tld.param.u64 %ad1, [p0];
\tld.param.u64 %ad2, [p1];
{loads}
\t{op} %d, {sources};
\tst.global.{dtype} [%ad2], %d;
\tret;
}}
"""



def _bits(type_: str) -> int:
    return 16 if type_ in ("f16", "bf16") else 64 if type_.endswith("64") else 32


def _memory_type(type_: str) -> str:
    return {"f16": "b16", "f16x2": "b32"}.get(type_, type_)


def kernel_source(op: str, dtype: str, stypes: tuple) -> str:
    regs = [f"\t.reg .b{_bits(dtype)} %d;"] + [f"\t.reg .b{_bits(t)} %s{k};" for k, t in enumerate(stypes)]
    loads = "\n".join(f"\tld.global.{_memory_type(t)} %s{k}, [%ad1+{8 * k}];" for k, t in enumerate(stypes))
    return KERNEL.format(arch=ARCH, regs="\n".join(regs), loads=loads, op=op, dtype=_memory_type(dtype),
                         sources=", ".join(f"%s{k}" for k in range(len(stypes))))


def compile_words(source: str, work: Path) -> list[tuple[int, bytes]]:
    ptx, cubin = work / "k.ptx", work / "k.cubin"
    ptx.write_text(source)
    oracle.ptxas(ptx, cubin, ARCH)
    text = read_cubin(cubin.read_bytes(), str(cubin)).kernel("k").text
    return [(a, text[a:a + 16]) for a in range(0, len(text), 16)]


def _reads_param(instr) -> bool:
    base = target(ARCH).param_base
    window = range(base, base + 0x10)
    return any(isinstance(op, CBank) and op.bank == 0 and op.offset in window for op in instr.srcs)


def _writes_r1(instr) -> bool:
    return any(isinstance(op, Reg) and op.file == "R" and op.num == 1 for op in instr.dsts)


def extract(op: str, words: list[tuple[int, bytes]]) -> dict:
    table = load(ARCH)
    decoded = [(a, w, decode(w, a, table)) for a, w in words]
    unknown = [format_instr(i) for _, _, i in decoded if i.op == "UNKNOWN"]
    if unknown:   # the instruction table lacks a form: leave the operation out, say so
        print(f"{op}: skipped, words the instruction table does not know: {unknown}", file=sys.stderr)
        return None
    inputs, output, code = [], None, []
    call_returns = {}
    for addr, word, instr in decoded:
        if instr.op == "LDG":
            mem = instr.srcs[0]
            width = instr.dsts[0].width
            inputs.append([mem.offset // 8, (mem.offset % 8) // 4, instr.dsts[0].num, width])
            continue
        if instr.op == "STG":
            output = [instr.srcs[1].num, instr.srcs[1].width]
            continue
        if instr.op in ("EXIT", "NOP", "ULDC") or _reads_param(instr) or _writes_r1(instr):
            continue
        if instr.op == "BRA" and instr.srcs[-1].addr == addr:
            continue   # the trap at the end
        if instr.op == "CALL":
            call_returns[instr.srcs[-1].addr] = addr + 16
        code.append((addr, word, instr))
    returns = sorted(set(call_returns.values()))
    if len(call_returns) > 1:
        raise SystemExit(f"{op}: more than one call site")
    targets = sorted({i.srcs[-1].addr for _, _, i in code if i.op in ("BRA", "CALL")} | set(returns))
    sub_start = min(call_returns, default=None)
    main = [c for c in code if sub_start is None or c[0] < sub_start]
    sub = [c for c in code if sub_start is not None and c[0] >= sub_start]
    lines = []

    def emit(seq, low, high):
        """Instructions with the labels of targets in (low, their address]; then the
        labels of the targets up to `high` that no kept instruction is at."""
        prev = low
        for addr, word, instr in seq:
            lines.extend(f"L{t:x}:" for t in targets if prev < t <= addr)
            prev = addr
            entry = {"hex": word.hex(), "text": format_instr(instr)}
            if instr.op in ("BRA", "CALL"):
                entry["target"] = f"L{instr.srcs[-1].addr:x}"
            if instr.op == "RET":
                entry["target"] = f"L{returns[0]:x}"
            lines.append(entry)
        lines.extend(f"L{t:x}:" for t in targets if prev < t <= high)

    emit(main, -1, (sub_start or 1 << 30) - 1)
    if sub:
        lines.append({"text": "BRA Lend", "target": "Lend"})
        emit(sub, sub_start - 1, 1 << 30)
        lines.append("Lend:")
    for a, w, i in decoded:
        if encode(i, a, table) != w:
            print(f"{op}: skipped, {format_instr(i)} does not encode back to its word", file=sys.stderr)
            return None
    return {"inputs": inputs, "output": output, "code": lines}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", help="print one operation's sequence and exit")
    parser.add_argument("--arch", default="sm_89", choices=tuple(TARGETS))
    args = parser.parse_args()
    global ARCH
    ARCH = args.arch
    out = out_path(ARCH)
    work = Path(tempfile.mkdtemp(prefix="ptxc-mathlib-"))
    ops = {args.show: OPERATIONS[args.show]} if args.show else OPERATIONS
    table = {}
    for op, (dtype, stypes) in ops.items():
        found = extract(op, compile_words(kernel_source(op, dtype, stypes), work))
        if found is None:
            continue
        table[op] = found
        if args.show:
            t = table[op]
            print("inputs", t["inputs"], "output", t["output"])
            for line in t["code"]:
                print(line if isinstance(line, str) else "    " + line["text"] +
                      (f"   -> {line['target']}" if "target" in line else ""))
            return 0
    version = oracle.run("ptxas", "--version").stdout.strip().splitlines()[-1]
    out.write_text(json.dumps({"comment": "generated by scripts/learn_mathlib.py; do not edit",
                               "learned_from": version, "operations": table}, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}: {len(table)} operations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
