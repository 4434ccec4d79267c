"""Helpers shared by the passes: which registers an operand names, halves of pairs,
and rewriting operands.  Virtual registers are numbered per file; a 64-bit value is
a width-2 register whose high half is number+1 (allocated as an aligned pair)."""
from __future__ import annotations

from dataclasses import replace
from itertools import chain

from ..sass.ir import CBank, Mem, Reg, ZERO_REG


def regs_in(operand) -> list[Reg]:
    """Registers an operand reads (a memory operand reads its base registers)."""
    if isinstance(operand, Reg):
        return [] if operand.is_zero else [operand]
    if isinstance(operand, Mem):
        return [r for r in (operand.base, operand.ubase) if r is not None and not r.is_zero]
    if isinstance(operand, CBank) and isinstance(operand.index, Reg):    # c[0x3][R10]
        return [] if operand.index.is_zero else [operand.index]
    return []


def reg_operands(instr):
    """Every register operand of an instruction that analysis.map_regs maps:
    destinations, sources, their address bases and constant-bank indices, the guard."""
    for op in chain(instr.dsts, instr.srcs):
        if isinstance(op, Reg):
            yield op
        elif isinstance(op, Mem):
            if op.base is not None:
                yield op.base
            if op.ubase is not None:
                yield op.ubase
        elif isinstance(getattr(op, "index", None), Reg):
            yield op.index
    if instr.pred is not None:
        yield instr.pred


def half(reg: Reg, which: int) -> Reg:
    """The low (0) or high (1) 32-bit half of a width-2 register."""
    # Reg(...) with every field: what replace(reg, num=..., width=1) builds, without its cost
    return Reg(reg.file, reg.num + which, reg.virtual, 1, reg.neg, reg.abs, reg.inv, reg.sel)


def units(reg: Reg) -> list[tuple]:
    """The 32-bit register units a register covers, as (file, num, virtual) keys."""
    if reg.width == 1:                  # most registers: no loop
        return [(reg.file, reg.num, reg.virtual)]
    return [(reg.file, reg.num + k, reg.virtual) for k in range(reg.width)]


def substitute(operand, mapping: dict):
    """Replace registers per `mapping` (key() -> operand), keeping operand modifiers."""
    if isinstance(operand, Reg) and operand.key() in mapping:
        new = mapping[operand.key()]
        if isinstance(new, Reg):
            # the use's width: a 32-bit read of a 64-bit value's low register reads the
            # new value's low register, not the whole pair
            return replace(new, width=operand.width, neg=operand.neg ^ new.neg, abs=operand.abs or new.abs,
                           inv=operand.inv ^ new.inv)
        return new
    if isinstance(operand, Mem) and operand.base is not None and operand.base.key() in mapping:
        new = mapping[operand.base.key()]
        if isinstance(new, Reg):
            return replace(operand, base=replace(new, width=operand.base.width))
    if isinstance(operand, CBank) and isinstance(operand.index, Reg) and operand.index.key() in mapping:
        new = mapping[operand.index.key()]
        if isinstance(new, Reg):
            return replace(operand, index=replace(new, width=operand.index.width))
    return operand


def uses(func) -> dict:
    """Map each register key to the instructions that read it."""
    table: dict = {}
    for instr in func.instrs():
        for op in list(instr.srcs) + ([instr.pred] if instr.pred is not None else []):
            for reg in regs_in(op):
                table.setdefault(reg.key(), []).append(instr)
    return table


def defs(func) -> dict:
    """Map each register key to the instructions that write it."""
    table: dict = {}
    for instr in func.instrs():
        for op in instr.dsts:
            if isinstance(op, Reg) and not op.is_zero:
                table.setdefault(op.key(), []).append(instr)
    return table


# ---- encodability ------------------------------------------------------------------------

_PROBE_NUM = {"R": {1: 2, 2: 2, 4: 4}, "P": {1: 0}, "UR": {1: 6, 2: 6, 4: 8}, "UP": {1: 0}, "B": {1: 0}}
_encodable_cache: dict = {}


def _probe_reg(reg: Reg) -> Reg:
    if not reg.virtual:
        return reg
    return replace(reg, num=_PROBE_NUM.get(reg.file, {}).get(reg.width, 0), virtual=False)


def _signature(op):
    if isinstance(op, Reg):
        return ("R", op.file, op.width, op.neg, op.abs, op.inv, op.sel, op.is_zero)
    if isinstance(op, Mem):
        return ("M", _signature(op.base) if op.base is not None else None,
                _signature(op.ubase) if op.ubase is not None else None, op.offset)
    if getattr(op, "index", None) is not None:
        return ("C", op.bank, op.offset, op.neg, op.abs, _signature(op.index))
    return op


# On a target whose code reads constant banks only through LDC/ULDC (the record's
# cbank_via_ldc, as ptxas's sm_90 code does), a `c[bank][offset]` source of any other
# instruction stands for the register that load_cbank_operands loads it into, so it is
# encodable wherever a register is.
CBANK_LOADS = {"LDC", "ULDC"}


# The opcode field is the word's bits 0-11: bits 9-11 say which kinds of source the word
# holds (register, immediate, constant bank, uniform register: the table's templates of
# one instruction differ only there, I2F's 0x306 / 0x906 / 0xb06), bits 0-8 the operation.
# One mnemonic can name two operations (I2F 0x106 and I2F's 64-bit converter 0x112, F2I,
# FRND, HFMA2 and HFMA2.MMA, IMAD and IMAD.WIDE): folding a constant into a slot changes
# the source kinds of the instruction, never its operation (keeps_operation).
OPERATION_BITS = 0x1FF


def encodable(instr, arch: str = "sm_89") -> bool:
    """Whether `arch`'s table has a form for `instr` (virtual registers stand for any
    register of their file and width; immediates are range-checked)."""
    return operation(instr, arch) is not None


def keeps_operation(before, after, arch: str = "sm_89") -> bool:
    """Whether `after` (`before` with other sources: a constant folded in) encodes, and as
    the same operation as `before` where that encodes.  The encoder takes the first form
    that fits; a form of another operation under the same mnemonic (sm_89's 64-bit I2F
    0xb12 for `I2F.U32.RP R0, c[0x0][0x178]`, a word nvdisasm rejects) is not the
    instruction `before` was."""
    op = operation(after, arch)
    if op is None:
        return False
    was = operation(before, arch)
    return was is None or was == op


def operation(instr, arch: str = "sm_89") -> int | None:
    """The operation bits (OPERATION_BITS) of the word `arch`'s encoder writes for `instr`,
    None if its table has no form for it (virtual registers stand for any register of
    their file and width; immediates are range-checked)."""
    key = (arch, instr.op, instr.mods, instr.pred is not None, tuple(map(_signature, [*instr.dsts, *instr.srcs])))
    found = _encodable_cache.get(key, False)
    if found is False:
        from ..sass.encode import encode        # here: the cache answers most questions
        from ..sass.ir import Instr
        from ..sass.table import TableError, load
        from ..sass.target import target
        via_ldc = target(arch).cbank_via_ldc and instr.op not in CBANK_LOADS

        def probe(op):
            if via_ldc and isinstance(op, CBank) and op.index is None:
                return Reg("R", 2, neg=op.neg, abs=op.abs)
            if isinstance(op, Reg):
                return _probe_reg(op)
            if isinstance(op, Mem):
                return replace(op, base=_probe_reg(op.base) if op.base is not None else None,
                               ubase=_probe_reg(op.ubase) if op.ubase is not None else None)
            if getattr(op, "index", None) is not None:
                return replace(op, index=_probe_reg(op.index))
            return op
        copy = Instr(instr.op, instr.mods, [probe(o) for o in instr.dsts], [probe(o) for o in instr.srcs],
                     _probe_reg(instr.pred) if instr.pred is not None else None)
        try:
            found = int.from_bytes(encode(copy, 0, load(arch))[:2], "little") & OPERATION_BITS
        except (TableError, ValueError, KeyError, TypeError):
            found = None
        _encodable_cache[key] = found
    return found


def unit_defs(func) -> dict:
    """Map each 32-bit register unit to the instructions that write it."""
    table: dict = {}
    get = table.get
    zero = ZERO_REG.get
    for block in func.blocks:
        for instr in block.instrs:
            for op in instr.dsts:
                if isinstance(op, Reg):
                    file, num, virtual = op.file, op.num, op.virtual
                    if not virtual and num == zero(file):
                        continue            # RZ, PT: no unit
                    for k in range(op.width):
                        unit = (file, num + k, virtual)
                        entry = get(unit)
                        if entry is None:
                            table[unit] = [instr]
                        else:
                            entry.append(instr)
    return table


def write_counts(func, keys: set) -> dict:
    """For the virtual units of `keys`: how many instructions write each, as
    len(unit_defs(func)[unit]) counts them (units never written are left out)."""
    counts: dict = {}
    get = counts.get
    for block in func.blocks:
        for instr in block.instrs:
            for op in instr.dsts:
                if isinstance(op, Reg) and op.virtual:
                    if op.width == 1:           # most registers: no loop
                        unit = (op.file, op.num, True)
                        if unit in keys:
                            counts[unit] = get(unit, 0) + 1
                        continue
                    for k in range(op.width):
                        unit = (op.file, op.num + k, True)
                        if unit in keys:
                            counts[unit] = get(unit, 0) + 1
    return counts


def pressure_bound(func, file: str) -> int:
    """An upper bound on the units of register file `file` live after an instruction
    together with the ones it writes (analysis.liveness), from one scan, with no
    liveness: a unit whose every read and write is in one block, the first of them an
    unguarded write that does not read it, is live only from that write to its last
    read (no path reaches a read of it without passing the write first); every other
    unit is counted as live everywhere."""
    from .analysis import is_guarded, read_regs
    block_of: dict = {}         # unit -> its block (block-local units)
    span: dict = {}             # unit -> (first, last) instruction index, block-local units
    spread: set = set()         # units counted as live everywhere
    written_at = []
    index = 0
    direct = file in ("P", "UP")    # predicates are never inside an address: read_regs, directly
    for b, block in enumerate(func.blocks):
        for instr in block.instrs:
            if direct:
                reads = {u for r in instr.srcs if isinstance(r, Reg) and r.file == file and not r.is_zero
                         for u in units(r)}
                if instr.pred is not None and instr.pred.file == file and not instr.pred.is_zero:
                    reads.update(units(instr.pred))
            else:
                reads = {u for r in read_regs(instr) if r.file == file for u in units(r)}
            writes = {u for r in instr.dsts if isinstance(r, Reg) and r.file == file and not r.is_zero
                      for u in units(r)}
            written_at.append(len(writes))
            for u in reads | writes:
                if u in spread:
                    continue
                if u not in span:
                    if u in reads or is_guarded(instr):
                        spread.add(u)       # read first, or a write that may not happen
                    else:
                        span[u], block_of[u] = (index, index), b
                elif block_of[u] != b:
                    spread.add(u)
                    del span[u]
                else:
                    span[u] = (span[u][0], index)
            index += 1
    if not written_at:
        return 0
    starts, ends = [0] * (index + 1), [0] * (index + 1)
    for first, last in span.values():      # live after first .. last - 1
        starts[first] += 1
        ends[last] += 1
    best, live = 0, len(spread)
    for i in range(index):
        live += starts[i] - ends[i]
        best = max(best, live + written_at[i])
    return best


def read_units(func) -> set:
    """Every 32-bit register unit some instruction reads (guards included)."""
    out = set()
    add = out.add
    for block in func.blocks:
        for instr in block.instrs:
            for op in instr.srcs:
                if isinstance(op, Reg):
                    if op.width == 1:       # most operands: a 32-bit register, no list
                        if not op.is_zero:
                            add((op.file, op.num, op.virtual))
                        continue
                    regs = (op,)
                elif isinstance(op, Mem):
                    regs = (op.base, op.ubase)
                else:
                    index = getattr(op, "index", None)
                    regs = (index,) if isinstance(index, Reg) else ()
                for r in regs:
                    if r is not None and not r.is_zero:
                        for k in range(r.width):
                            add((r.file, r.num + k, r.virtual))
            pred = instr.pred
            if pred is not None and not pred.is_zero:
                for k in range(pred.width):
                    add((pred.file, pred.num + k, pred.virtual))
    return out


def read_units_among(func, keys) -> set:
    """read_units(func) & keys, without collecting the units outside `keys`."""
    out = set()
    add = out.add
    for block in func.blocks:
        for instr in block.instrs:
            for op in instr.srcs:
                if isinstance(op, Reg):
                    if op.width == 1:       # most operands: a 32-bit register, no list
                        unit = (op.file, op.num, op.virtual)
                        if unit in keys and not op.is_zero:
                            add(unit)
                        continue
                    regs = (op,)
                elif isinstance(op, Mem):
                    regs = (op.base, op.ubase)
                else:
                    index = getattr(op, "index", None)
                    regs = (index,) if isinstance(index, Reg) else ()
                for r in regs:
                    if r is not None and not r.is_zero:
                        for k in range(r.width):
                            unit = (r.file, r.num + k, r.virtual)
                            if unit in keys:
                                add(unit)
            pred = instr.pred
            if pred is not None and not pred.is_zero:
                for k in range(pred.width):
                    unit = (pred.file, pred.num + k, pred.virtual)
                    if unit in keys:
                        add(unit)
    return out


def instr_read_units(instr) -> list:
    """The 32-bit register units one instruction reads (guard included), as read_units
    counts them; a unit may appear more than once."""
    out = []
    append = out.append
    for op in instr.srcs:
        if isinstance(op, Reg):
            if op.width == 1:       # most operands: a 32-bit register, no list
                if not op.is_zero:
                    append((op.file, op.num, op.virtual))
                continue
            regs = (op,)
        elif isinstance(op, Mem):
            regs = (op.base, op.ubase)
        else:
            index = getattr(op, "index", None)
            regs = (index,) if isinstance(index, Reg) else ()
        for reg in regs:
            if reg is not None and not reg.is_zero:
                out += units(reg)
    pred = instr.pred
    if pred is not None and not pred.is_zero:
        out += units(pred)
    return out
