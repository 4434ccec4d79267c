"""fold_constants: put constant-bank values and immediates straight into operands.

A value loaded by `MOV v, c[0x0][0x160]` (a parameter) or `MOV v, imm` is folded
into each instruction that can encode it there; what "can" means is the
instruction table's business (ptxc.lower.vregs.encodable), not a list kept here:
sm_89 ALU forms take one non-register source, usually in the second slot (or the
third of a three-source op).  A 64-bit source folds when both of its halves are
constants: two consecutive words of a bank (`IMAD.WIDE ..., c[0x0][0x160]`), a
double whose low word is zero (`DMUL R2, R4, 1000`), or zero (RZ).  A negated or
absolute source folds with its flag (a negated integer immediate is negated); a MOV
of a negated or absolute bank value is no constant (its reader's flags would replace
the MOV's: the lost minus of issue 16's division by a parameter).  A fold keeps the
instruction's operation (vregs.keeps_operation: the word's opcode bits 0-8): under one
mnemonic the table has forms of two operations (sm_89's I2F 0x106 and its 64-bit
converter 0x112), and the encoder's first fitting form for `I2F.U32.RP R, c[..]` was
the 64-bit one, a word nvdisasm rejects; the I2F then reads a register.
When two sources want the one slot, the constant bank wins and the immediate is
left for legalize_operands to move into a register, as ptxas does (vadd's
`MOV R7, 0x4` serves all three IMAD.WIDE).  Commutative operations swap a
constant out of the first slot; compares swap and mirror.

Expects: virtual registers; 64-bit pseudo-instructions expanded (every MOV 32-bit).
Guarantees: same values; every operand folded is encodable there, or becomes so
once legalize_operands moves immediates to registers; MOVs of constants that
nothing reads any more are deleted.
"""
from __future__ import annotations

from dataclasses import replace

from ..sass.ir import CBank, Imm, Instr, Reg, RZ
from .vregs import keeps_operation, read_units_among, write_counts

COMMUTATIVE = {"IADD3": (0, 1), "IMAD": (0, 1), "FADD": (0, 1), "FMUL": (0, 1), "FFMA": (0, 1),
               "DADD": (0, 1), "DMUL": (0, 1), "DFMA": (0, 1), "IMNMX": (0, 1), "VIMNMX": (0, 1), "FMNMX": (0, 1)}
MIRRORED = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE",
            "LTU": "GTU", "GTU": "LTU", "LEU": "GEU", "GEU": "LEU", "EQU": "EQU", "NEU": "NEU",
            "NUM": "NUM", "NAN": "NAN"}
COMPARES = {"ISETP", "FSETP", "DSETP"}
NO_FOLD = {"S2R", "CS2R", "BAR", "SHFL", "VOTE", "MATCH", "REDUX", "CALL", "RET", "BRA", "EXIT", "WARPSYNC"}


def fold_constants(func) -> None:
    constants = constant_units(func)
    if not constants:
        return
    for block in func.blocks:
        for instr in block.instrs:
            if instr.op not in NO_FOLD:
                fold_instr(instr, constants, func.arch)
    remove_dead_moves(func, set(constants))


def constant_units(func) -> dict:
    """Virtual 32-bit unit -> the constant an unguarded MOV, its only writer, gives it."""
    moves = [instr for instr in func.instrs() if instr.op == "MOV" and instr.pred is None and instr.dsts
             and instr.dsts[0].width == 1 and instr.dsts[0].virtual]
    if not moves:
        return {}
    writes = write_counts(func, {instr.dsts[0].key() for instr in moves})
    constants = {}
    for instr in moves:
        dst, src = instr.dsts[0], instr.srcs[0]
        if writes.get(dst.key(), 0) != 1:
            continue
        if isinstance(src, CBank) and (src.neg or src.abs):
            continue    # not the bank's value: a reader's own -/|..| would replace these flags
        if isinstance(src, (CBank, Imm)) and getattr(src, "index", None) is None:
            constants[dst.key()] = src if not isinstance(src, Imm) else Imm(src.bits, "int")
        elif isinstance(src, Reg) and src.is_zero and src.file == "R":
            constants[dst.key()] = Imm(0, "int")
    return constants


def candidates(reg: Reg, constants: dict) -> list:
    """What a register source could be replaced by, best first."""
    units = [(reg.file, reg.num + k, reg.virtual) for k in range(reg.width)]
    if not reg.virtual or reg.file != "R" or any(u not in constants for u in units):
        return []
    values = [constants[u] for u in units]
    if reg.width == 1:
        return _variants(values[0], reg)
    if reg.width == 2 and not reg.inv:
        lo, hi = values
        if (isinstance(lo, CBank) and isinstance(hi, CBank) and lo.bank == hi.bank and lo.offset % 8 == 0
                and hi.offset == lo.offset + 4):
            return [replace(lo, neg=reg.neg, abs=reg.abs)]
        if isinstance(lo, Imm) and isinstance(hi, Imm) and lo.bits == 0:
            out = []
            if hi.bits == 0 and not reg.neg and not reg.abs:
                out.append(Reg("R", RZ, width=2))
            out.append(Imm(_float_flags(hi.bits, reg), "f64"))
            return out
    return []


def _variants(value, reg: Reg) -> list:
    if reg.inv:   # ~x: a complemented immediate (a bank value cannot be complemented)
        if isinstance(value, CBank) or reg.neg or reg.abs:
            return []
        return [Imm(~value.bits & 0xFFFFFFFF, "int")]
    if isinstance(value, CBank):
        return [replace(value, neg=reg.neg, abs=reg.abs)]
    bits = value.bits
    out = []
    if not reg.abs:
        out.append(Imm((-bits if reg.neg else bits) & 0xFFFFFFFF, "int"))
    out.append(Imm(_float_flags(bits, reg), "f32"))
    if bits == 0 and not reg.neg and not reg.abs:
        out.insert(0, Reg("R", RZ))
    return out


def _float_flags(bits: int, reg: Reg) -> int:
    if reg.abs:
        bits &= 0x7FFFFFFF
    if reg.neg:
        bits ^= 0x80000000
    return bits


def fold_instr(instr: Instr, constants: dict, arch: str = "sm_89") -> None:
    """Fold constants into `instr` slot by slot, constant-bank values first."""
    options = []
    for slot, src in enumerate(instr.srcs):
        if isinstance(src, Reg) and (src.file, src.num, src.virtual) in constants:   # (its first unit)
            for value in candidates(src, constants):
                if src.neg and isinstance(value, Imm) and value.bits == 0 and len(instr.dsts) > 1:
                    # `-R` with R = 0 is not the immediate 0 where a carry is written:
                    # a - 0 carries (no borrow), a + 0 does not (sub.s64 x - (y << 52)).
                    continue
                options.append((not isinstance(value, CBank), slot, value))
    if not options:
        return                  # no constant source: nothing to try
    for _, slot, value in sorted(options, key=lambda o: (o[0], o[1])):
        if not (isinstance(instr.srcs[slot], Reg) and instr.srcs[slot].virtual):
            continue   # folded already (an earlier, better candidate of the same slot)
        trial = _with(instr, slot, value)
        if _acceptable(instr, trial, value, arch):
            _adopt(instr, trial)
            continue
        swapped = _swapped(trial)
        if swapped is not None and _acceptable(instr, swapped, value, arch):
            _adopt(instr, swapped)


def _acceptable(instr: Instr, trial: Instr, value, arch: str) -> bool:
    """Whether `trial` (`instr` with `value` folded in) encodes as the operation `instr` is."""
    if keeps_operation(instr, trial, arch):
        return True
    # The bank wins the slot: an immediate elsewhere may move into a register.
    if isinstance(value, CBank):
        others = [k for k, op in enumerate(trial.srcs) if isinstance(op, Imm) and _is_plain_imm_slot(trial, k)]
        if others:
            probe = Instr(trial.op, trial.mods, trial.dsts,
                          [Reg("R", 0, virtual=True) if k in others else op for k, op in enumerate(trial.srcs)],
                          trial.pred)
            return keeps_operation(instr, probe, arch)
    return False


def _is_plain_imm_slot(instr: Instr, k: int) -> bool:
    """Immediates that are data (not a LUT, shift count of LEA, ...): they can live in a register."""
    if instr.op in ("LOP3", "PLOP3") and k >= 3:
        return False
    if instr.op == "LEA" and k == len(instr.srcs) - 1 - (1 if "X" in instr.mods else 0):
        return False
    return True


def _with(instr: Instr, slot: int, value) -> Instr:
    srcs = list(instr.srcs)
    srcs[slot] = value
    return Instr(instr.op, instr.mods, list(instr.dsts), srcs, instr.pred, instr.ctrl, instr.comment)


def _swapped(instr: Instr) -> Instr | None:
    """The same operation with its first two sources exchanged, if that is allowed."""
    if instr.op in COMMUTATIVE and len(instr.srcs) >= 2:
        if instr.op == "IMAD" and ("HI" in instr.mods or "X" in instr.mods):
            return None
        srcs = list(instr.srcs)
        srcs[0], srcs[1] = srcs[1], srcs[0]
        return Instr(instr.op, instr.mods, list(instr.dsts), srcs, instr.pred, instr.ctrl, instr.comment)
    if instr.op in COMPARES and instr.mods and instr.mods[0] in MIRRORED and "EX" not in instr.mods:
        srcs = list(instr.srcs)
        srcs[0], srcs[1] = srcs[1], srcs[0]
        return Instr(instr.op, (MIRRORED[instr.mods[0]],) + instr.mods[1:], list(instr.dsts), srcs, instr.pred,
                     instr.ctrl, instr.comment)
    return None


def _adopt(instr: Instr, trial: Instr) -> None:
    instr.mods, instr.srcs = trial.mods, trial.srcs


def remove_dead_moves(func, keys: set) -> None:
    """The MOVs writing `keys` (constant units: each written by one unguarded MOV of a
    constant, which reads no register) that nothing reads.  Removing them removes no
    read, so one pass finds them all."""
    readers = read_units_among(func, keys)
    for block in func.blocks:
        block.instrs = [i for i in block.instrs
                        if not (i.op == "MOV" and i.dsts and i.dsts[0].key() in keys
                                and i.dsts[0].key() not in readers)]
