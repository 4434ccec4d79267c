"""Turn a kernel's decoded SASS into the flat int64 rows the jitted core runs.

Expects: `decode_all(text)` output, [(addr, Instr)], every instruction of the kernel's
.text; instructions the table cannot decode become OP_UNKNOWN rows that stop a launch
only if they are reached.
Guarantees: one row per instruction (row i is the instruction at byte 16*i), operands in
print order; RZ/URZ sources become immediate 0 (with their -/|| flags), RZ/PT
destinations a scratch register; constant-bank operands stay K_CB until a launch
resolves them (`resolve_cbanks`), because bank 0 holds the launch's parameters.

Each operation's modifiers become bits of F_MOD through one builder per mnemonic
(`BUILDERS`): the mnemonic and its tokens in, (operation id, bits) out.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..sass.ir import CBank, Imm, Instr, Mem, Reg, SpecialReg, Target
from ..sass.table import cbank_index, reg_sel
from . import isa as I


class ProgramError(Exception):
    pass


@dataclass
class Program:
    """One kernel, ready to run: rows, the instructions they came from, sizes."""
    name: str
    rows: np.ndarray                      # int64 [n, NF]
    instrs: list                          # [(addr, Instr)]
    nregs: int                            # R registers used (R0..R{nregs-1}); column nregs is RZ's sink
    unsupported: dict = field(default_factory=dict)   # row -> why it cannot run


SEL_CODES = {"": I.SEL_NONE, "H0_H0": I.SEL_H0H0, "H1_H1": I.SEL_H1H1, "F32": I.SEL_F32, "H1_H0": I.SEL_H1H0,
             "B1": I.SEL_B1, "B2": I.SEL_B2, "B3": I.SEL_B3, "H1": I.SEL_H1, "H0": I.SEL_NONE, "B0": I.SEL_NONE,
             "SIGN": I.SEL_SIGN}
SCALE_CODES = {"": 0, "X4": 2, "X8": 3, "X16": 4}
CMPS = {"F": I.CMP_F, "LT": I.CMP_LT, "EQ": I.CMP_EQ, "LE": I.CMP_LE, "GT": I.CMP_GT, "NE": I.CMP_NE,
        "GE": I.CMP_GE, "NUM": I.CMP_NUM, "NAN": I.CMP_NAN, "LTU": I.CMP_LTU, "EQU": I.CMP_EQU,
        "LEU": I.CMP_LEU, "GTU": I.CMP_GTU, "NEU": I.CMP_NEU, "GEU": I.CMP_GEU, "T": I.CMP_T,
        "MIN": I.CMP_MIN, "MAX": I.CMP_MAX}
BOPS = {"AND": I.BOP_AND, "OR": I.BOP_OR, "XOR": I.BOP_XOR}
ROUNDING = {"RN": I.RND_RN, "RM": I.RND_RM, "RP": I.RND_RP, "RZ": I.RND_RZ,
            "FLOOR": I.RND_RM, "CEIL": I.RND_RP, "TRUNC": I.RND_RZ}
INT_TYPES = {"U8": I.IT_U8, "S8": I.IT_S8, "U16": I.IT_U16, "S16": I.IT_S16, "U32": I.IT_U32,
             "S32": I.IT_S32, "U64": I.IT_U64, "S64": I.IT_S64}
MUFU = {"COS": I.MUFU_COS, "SIN": I.MUFU_SIN, "EX2": I.MUFU_EX2, "LG2": I.MUFU_LG2, "RCP": I.MUFU_RCP,
        "RSQ": I.MUFU_RSQ, "RCP64H": I.MUFU_RCP64H, "RSQ64H": I.MUFU_RSQ64H, "SQRT": I.MUFU_SQRT,
        "TANH": I.MUFU_TANH}
MEM_SIZES = {"U8": (1, 0), "S8": (1, I.M_SIGNED), "U16": (2, 0), "S16": (2, I.M_SIGNED),
             "32": (4, 0), "64": (8, 0), "128": (16, 0)}
ATOM_OPS = {"ADD": I.AT_ADD, "MIN": I.AT_MIN, "MAX": I.AT_MAX, "INC": I.AT_INC, "DEC": I.AT_DEC,
            "AND": I.AT_AND, "OR": I.AT_OR, "XOR": I.AT_XOR, "EXCH": I.AT_EXCH, "CAS": I.AT_CAS}
PRMT_MODES = {"F4E": I.PRMT_F4E, "B4E": I.PRMT_B4E, "RC8": I.PRMT_RC8, "ECL": I.PRMT_ECL, "ECR": I.PRMT_ECR,
              "RC16": I.PRMT_RC16}
REDUX_OPS = {"AND": I.RX_AND, "OR": I.RX_OR, "XOR": I.RX_XOR, "SUM": I.RX_SUM, "MIN": I.RX_MIN,
             "MAX": I.RX_MAX}

# Sources read as 64-bit values (a register pair, or a 64-bit immediate/constant).
WIDE_SRCS = {"DADD": (0, 1), "DMUL": (0, 1), "DFMA": (0, 1, 2), "DSETP": (0, 1)}


# ---------------------------------------------------------------------------------------
# Builders: mnemonic tokens -> (operation id, modifier bits).  `mods` excludes printing
# aliases (IMAD.MOV is IMAD).
# ---------------------------------------------------------------------------------------
def _has(mods, *tokens) -> bool:
    return any(t in mods for t in tokens)


def _rounding(mods) -> int:
    for t in mods:
        if t in ROUNDING:
            return ROUNDING[t]
    return I.RND_RN


def _setp(mods) -> int:
    bits = 0
    for t in mods:
        if t in CMPS:
            bits |= CMPS[t]
        elif t in BOPS:
            bits |= BOPS[t] << I.M_BOP_SHIFT
    if "U32" in mods:
        bits |= I.M_SETP_U32
    if "EX" in mods:
        bits |= I.M_SETP_EX
    if "FTZ" in mods:
        bits |= I.M_FTZ
    return bits


def b_imad(op, mods):
    bits = (I.M_WIDE if "WIDE" in mods else 0) | (I.M_HI if "HI" in mods else 0) \
        | (I.M_U32 if "U32" in mods and ("WIDE" in mods or "HI" in mods) else 0) | (I.M_X if "X" in mods else 0)
    return I.OP_IMAD, bits


FMUL_SCALES = {"D8": -3, "D4": -2, "D2": -1, "M2": 1, "M4": 2, "M8": 3}


def b_float_arith(opid):
    def build(op, mods):
        bits = _rounding(mods) | (I.M_FTZ if "FTZ" in mods else 0) | (I.M_SAT if "SAT" in mods else 0)
        scale = next((FMUL_SCALES[m] for m in mods if m in FMUL_SCALES), 0)
        if scale and opid != I.OP_FMUL:
            raise ProgramError(f"{op}.{'.'.join(mods)}: a result scale on {op}")
        return opid, bits | (scale & 7) << I.M_FSCALE_SHIFT
    return build


def _half_format(mods) -> int:
    """M_BF16 if the instruction's 16-bit float is bf16."""
    return I.M_BF16 if "BF16" in mods else 0


def b_f2i(op, mods):
    """F2I, F2IP (one f32 to an 8-bit integer: fill_row keeps its converted operand)
    and I2I.SAT (an integer saturated to a narrower type: F2I of its exact value)."""
    ints = [INT_TYPES[t] for t in mods if t in INT_TYPES]
    dst = ints[0] if ints else I.IT_S32
    bits = _rounding(mods) | (I.M_FTZ if "FTZ" in mods else 0) | (dst << I.IT_SHIFT) \
        | (I.M_NTZ if "NTZ" in mods else 0)
    if op == "I2I":
        if "SAT" not in mods or len(ints) != 2 or ints[1] not in (I.IT_S32, I.IT_U32):
            raise ProgramError(f"{op}.{'.'.join(mods)} is not emulated (only I2I.*.S32/U32.SAT)")
        return I.OP_F2I, (dst << I.IT_SHIFT) | I.RND_RZ | I.M_SRCINT | (I.M_SRC_S if ints[1] == I.IT_S32 else 0)
    if op == "F2IP" and (dst not in (I.IT_U8, I.IT_S8) or "F32" not in mods):
        raise ProgramError(f"{op}.{'.'.join(mods)} is not emulated (only F2IP.U8/S8.F32)")
    if "F64" in mods:
        bits |= I.M_F64
    if "F16" in mods or "BF16" in mods:          # F2I.S32.F16: the source is a 16-bit float
        bits |= I.M_SRC16 | _half_format(mods)
    return I.OP_F2I, bits


def b_i2f(op, mods):
    src = I.IT_S32
    for t in mods:
        if t in INT_TYPES:
            src = INT_TYPES[t]
    bits = _rounding(mods) | (src << I.IT_SHIFT)
    if "F64" in mods:
        bits |= I.M_DST64
    if "F16" in mods or "BF16" in mods:          # I2F.F16.S32: a 16-bit float result
        bits |= I.M_DST16 | _half_format(mods)
    return I.OP_I2F, bits


def b_f2f(op, mods):
    """F2F.<dst>.<src>: M_BF16 when the destination is bf16 (or the only 16-bit float is),
    M_SRC_BF16 when the source is (F2F.F16.BF16, F2F.BF16.F16: real conversions)."""
    floats = [t for t in mods if t in ("F16", "BF16", "F32", "F64")]
    bits = _rounding(mods) | (I.M_FTZ if "FTZ" in mods else 0) | _half_format(mods)
    if len(floats) == 2 and floats[1] == "BF16":
        bits |= I.M_SRC_BF16
        if floats[0] != "BF16":
            bits &= ~I.M_BF16
    if len(floats) == 2:
        bits |= {"F64": I.M_DST64, "F16": I.M_DST16, "BF16": I.M_DST16}.get(floats[0], 0)
        bits |= {"F64": I.M_F64, "F16": I.M_SRC16, "BF16": I.M_SRC16}.get(floats[1], 0)
    return I.OP_F2F, bits


def b_f2fp(op, mods):
    """F2FP[.RELU][.SATFINITE].{F16,BF16}.F32.{PACK_AB,MERGE_C}[.RZ...]: two f32 to a
    pair of 16-bit floats (PACK_AB: operand 1 to the high half, operand 2 to the low)."""
    if "E5M2" in mods or "E4M3" in mods:
        raise ProgramError(f"{op}.{'.'.join(mods)}: fp8 conversions are not emulated")
    return I.OP_F2FP, _rounding(mods) | _half_format(mods) | (I.M_RELU if "RELU" in mods else 0) \
        | (I.M_SATFINITE if "SATFINITE" in mods else 0) | (I.M_MERGE_C if "MERGE_C" in mods else 0)


def _bf16(mods) -> int:
    """M_BF16 for the bfloat16 forms (.BF16_V2 of the half pipe, .BF16 of F2FP/F2F)."""
    return I.M_BF16 if "BF16_V2" in mods or "BF16" in mods else 0


def _half_arith(mods) -> int:
    return ((I.M_FTZ if "FTZ" in mods else 0) | (I.M_DST64 if "F32" in mods else 0)
            | (I.M_SAT if "SAT" in mods else 0) | (I.M_RELU if "RELU" in mods else 0) | _bf16(mods))


def b_mem(opid):
    def build(op, mods):
        size, signed = 4, 0
        for t in mods:
            if t in MEM_SIZES:
                size, signed = MEM_SIZES[t]
        return opid, size | signed
    return build


def b_atom(space):
    def build(op, mods):
        kind, size, typ = I.AT_ADD, 4, I.AT_U32
        for t in mods:
            if t in ATOM_OPS:
                kind = ATOM_OPS[t]
        if "POPC" in mods and "INC" in mods:
            kind = I.AT_POPC_INC
        if "CAST" in mods:
            kind = I.AT_CAST
        if "64" in mods:
            size, typ = 8, I.AT_U64
        if "S32" in mods:
            typ = I.AT_S32
        if "S64" in mods:
            size, typ = 8, I.AT_S64
        if "F32" in mods:
            typ = I.AT_F32
        if "F64" in mods:
            size, typ = 8, I.AT_F64
        if "F16x2" in mods:
            typ = I.AT_F16X2
        if "BF16x2" in mods:
            typ = I.AT_BF16X2
        bits = size | kind << I.AT_SHIFT | typ << I.AT_TYPE_SHIFT    # float atomics always flush subnormals
        opid = I.OP_RED if op in ("RED", "REDG") else I.OP_ATOM
        return opid, bits | space << 16
    return build


def b_shf(op, mods):
    bits = (I.M_SHF_R if "R" in mods else 0) | (I.M_SHF_W if "W" in mods else 0) \
        | (I.M_SHF_HI if "HI" in mods else 0) | (I.M_SHF_64 if _has(mods, "U64", "S64") else 0) \
        | (I.M_SHF_S if _has(mods, "S32", "S64") else 0)
    return I.OP_SHF, bits


def b_lea(op, mods):
    return I.OP_LEA, (I.M_HI if "HI" in mods else 0) | (I.M_X if "X" in mods else 0) \
        | (I.M_SX32 if "SX32" in mods else 0)


def b_mufu(op, mods):
    for t in mods:
        if t in MUFU:
            return I.OP_MUFU, MUFU[t] | (I.M_MUFU_F16 if "F16" in mods else 0)
    raise ProgramError(f"MUFU function of {op}.{'.'.join(mods)}")


def b_bar(op, mods):
    if "RED" in mods:
        kind = {"POPC": I.BAR_RED_POPC, "AND": I.BAR_RED_AND, "OR": I.BAR_RED_OR}[
            next(t for t in mods if t in ("POPC", "AND", "OR"))]
    elif "ARV" in mods:
        kind = I.BAR_ARV
    else:
        kind = I.BAR_SYNC
    return I.OP_BAR, kind


def b_shfl(op, mods):
    return I.OP_SHFL, {"IDX": I.SHFL_IDX, "UP": I.SHFL_UP, "DOWN": I.SHFL_DOWN, "BFLY": I.SHFL_BFLY}[mods[0]]


def b_vote(op, mods):
    return I.OP_VOTE, {"ALL": I.VOTE_ALL, "ANY": I.VOTE_ANY, "EQ": I.VOTE_EQ}[mods[0]]


def b_redux(op, mods):
    kind = next((REDUX_OPS[t] for t in mods if t in REDUX_OPS), I.RX_AND)
    return I.OP_REDUX, kind | (I.M_RX_SIGNED if "S32" in mods else 0)


def b_vint(kind):
    """sm_90's VIADD / VIMNMX / VIMNMX3 / VIADDMNMX (isa.V_*)."""
    def build(op, mods):
        bits = kind
        if "U32" in mods or "U16x2" in mods:
            bits |= I.M_U32
        if any(t in mods for t in ("16x2", "U16x2", "S16x2")):
            bits |= I.V_16X2
        if "RELU" in mods:
            if bits & I.M_U32:
                raise ProgramError(f"{op}.{'.'.join(mods)}: RELU of an unsigned min/max")
            bits |= I.V_RELU
        return I.OP_VINT, bits
    return build


def b_simple(opid, bits_of=None):
    def build(op, mods):
        return opid, (bits_of(mods) if bits_of else 0)
    return build


BUILDERS = {
    "NOP": b_simple(I.OP_NOP), "YIELD": b_simple(I.OP_NOP), "MEMBAR": b_simple(I.OP_NOP),
    "ERRBAR": b_simple(I.OP_NOP), "CCTL": b_simple(I.OP_NOP), "FENCE": b_simple(I.OP_NOP),
    "DEPBAR": b_simple(I.OP_NOP), "NANOSLEEP": b_simple(I.OP_NOP),
    "MOV": b_simple(I.OP_MOV, lambda m: I.M_WIDE if "64" in m else 0),
    "UMOV": b_simple(I.OP_MOV, lambda m: I.M_WIDE if "64" in m else 0),
    "ULDC": b_simple(I.OP_MOV, lambda m: (I.M_WIDE if "64" in m else 0)
                     | (I.M_MOV_B8 if "U8" in m or "S8" in m else 0) | (I.M_MOV_B16 if "U16" in m or "S16" in m else 0)
                     | (I.M_SIGNED if "S8" in m or "S16" in m else 0)),
    "IMAD": b_imad, "UIMAD": b_imad,
    "IADD3": b_simple(I.OP_IADD3, lambda m: I.M_X if "X" in m else 0),
    "UIADD3": b_simple(I.OP_IADD3, lambda m: I.M_X if "X" in m else 0),
    "LEA": b_lea, "ULEA": b_lea,
    "SHF": b_shf, "USHF": b_shf,
    "LOP3": b_simple(I.OP_LOP3), "ULOP3": b_simple(I.OP_LOP3),
    "PLOP3": b_simple(I.OP_PLOP3), "UPLOP3": b_simple(I.OP_PLOP3),
    "ISETP": b_simple(I.OP_ISETP, _setp), "UISETP": b_simple(I.OP_ISETP, _setp),
    "SEL": b_simple(I.OP_SEL), "USEL": b_simple(I.OP_SEL),
    "IMNMX": b_simple(I.OP_IMNMX, lambda m: I.M_U32 if "U32" in m else 0),
    "IABS": b_simple(I.OP_IABS),
    "POPC": b_simple(I.OP_POPC), "UPOPC": b_simple(I.OP_POPC),
    # FLO is signed unless it says .U32 (cuobjdump prints `FLO R7, R6` for bfind.s32)
    "FLO": b_simple(I.OP_FLO, lambda m: (1 if "SH" in m else 0) | (0 if "U32" in m else 2)),
    "UFLO": b_simple(I.OP_FLO, lambda m: (1 if "SH" in m else 0) | (0 if "U32" in m else 2)),
    "BREV": b_simple(I.OP_BREV), "UBREV": b_simple(I.OP_BREV),
    "PRMT": b_simple(I.OP_PRMT, lambda m: PRMT_MODES[m[0]] if m else I.PRMT_IDX),
    "UPRMT": b_simple(I.OP_PRMT, lambda m: PRMT_MODES[m[0]] if m else I.PRMT_IDX),
    "SGXT": b_simple(I.OP_SGXT, lambda m: (1 if "U32" in m else 0) | (2 if "W" in m else 0)),
    "VABSDIFF": b_simple(I.OP_VABSDIFF, lambda m: I.M_U32 if "U32" in m else 0),
    "VABSDIFF4": b_simple(I.OP_VABSDIFF4, lambda m: I.M_U32 if "U8" in m else 0),
    "P2R": b_simple(I.OP_P2R), "R2P": b_simple(I.OP_R2P),
    "S2R": b_simple(I.OP_S2R), "CS2R": b_simple(I.OP_CS2R), "S2UR": b_simple(I.OP_S2R),
    "B2R": b_simple(I.OP_B2R),
    "FADD": b_float_arith(I.OP_FADD), "FMUL": b_float_arith(I.OP_FMUL), "FFMA": b_float_arith(I.OP_FFMA),
    "FMNMX": b_simple(I.OP_FMNMX, lambda m: (I.M_FTZ if "FTZ" in m else 0) | (I.M_NAN if "NAN" in m else 0)),
    "FSETP": b_simple(I.OP_FSETP, _setp),
    "FSEL": b_simple(I.OP_FSEL),
    "FCHK": b_simple(I.OP_FCHK),
    "FRND": b_simple(I.OP_FRND, lambda m: _rounding(m) | (I.M_FTZ if "FTZ" in m else 0)
                     | (I.M_F64 if "F64" in m else 0)),
    "MUFU": b_mufu,
    "F2I": b_f2i, "F2IP": b_f2i, "I2I": b_f2i, "I2F": b_i2f, "I2FP": b_i2f, "F2F": b_f2f,
    "DADD": b_float_arith(I.OP_DADD), "DMUL": b_float_arith(I.OP_DMUL), "DFMA": b_float_arith(I.OP_DFMA),
    "DSETP": b_simple(I.OP_DSETP, _setp),
    "HADD2": b_simple(I.OP_HADD2, _half_arith),
    "HFMA2": b_simple(I.OP_HFMA2, _half_arith),
    "HMNMX2": b_simple(I.OP_HMNMX2, lambda m: _bf16(m) | (I.M_NAN if "NAN" in m else 0)),
    "HMUL2": b_simple(I.OP_HMUL2, _half_arith),
    "BMSK": b_simple(I.OP_BMSK, lambda m: 1 if "W" in m else 0),
    # QSPC.E.S / .L / .G: is a generic address in the shared / local / global window
    "QSPC": b_simple(I.OP_QSPC, lambda m: I.SPACE_SHARED if "S" in m else I.SPACE_LOCAL if "L" in m
                     else I.SPACE_GLOBAL),
    "HSETP2": b_simple(I.OP_HSETP2, lambda m: _setp(m) | _bf16(m)),
    "F2FP": b_f2fp,
    "LDG": b_mem(I.OP_LDG), "STG": b_mem(I.OP_STG), "LDS": b_mem(I.OP_LDS), "STS": b_mem(I.OP_STS),
    "LDL": b_mem(I.OP_LDL), "STL": b_mem(I.OP_STL), "LD": b_mem(I.OP_LD), "ST": b_mem(I.OP_ST),
    "LDC": b_mem(I.OP_LDC),
    "ATOM": b_atom(I.SPACE_GENERIC), "ATOMG": b_atom(I.SPACE_GLOBAL), "ATOMS": b_atom(I.SPACE_SHARED),
    "RED": b_atom(I.SPACE_GLOBAL),
    "SHFL": b_shfl, "VOTE": b_vote, "VOTEU": b_vote,
    "MATCH": b_simple(I.OP_MATCH, lambda m: I.MATCH_ALL if "ALL" in m else I.MATCH_ANY),
    "REDUX": b_redux, "R2UR": b_simple(I.OP_R2UR),
    "BRA": b_simple(I.OP_BRA, lambda m: (I.M_CONV if "CONV" in m else 0) | (I.M_DIV if "DIV" in m else 0)),
    "EXIT": b_simple(I.OP_EXIT), "CALL": b_simple(I.OP_CALL, lambda m: I.M_ABS if "ABS" in m else 0),
    "LEPC": b_simple(I.OP_LEPC), "RET": b_simple(I.OP_RET),
    "BRX": b_simple(I.OP_CALL, lambda m: I.M_JUMP), "JMX": b_simple(I.OP_CALL, lambda m: I.M_JUMP),
    "BSSY": b_simple(I.OP_BSSY), "BSYNC": b_simple(I.OP_BSYNC), "BREAK": b_simple(I.OP_BREAK),
    "BMOV": b_simple(I.OP_BMOV, lambda m: I.M_CLEAR if "CLEAR" in m else 0),
    "WARPSYNC": b_simple(I.OP_WARPSYNC, lambda m: I.M_EXCLUSIVE if "EXCLUSIVE" in m else 0), "BAR": b_bar, "KILL": b_simple(I.OP_KILL),
    "BPT": b_simple(I.OP_KILL, lambda m: 1),
    # ---- sm_90 ----
    "VIADD": b_vint(I.V_ADD), "VIMNMX": b_vint(I.V_MNMX), "VIMNMX3": b_vint(I.V_MNMX3),
    "VIADDMNMX": b_vint(I.V_ADDMNMX),
    "REDG": b_atom(I.SPACE_GLOBAL),                 # sm_89's RED on global memory
    "CGAERRBAR": b_simple(I.OP_NOP),                # ERRBAR for the cluster: no errors pending here
    # WARPSYNC.COLLECTIVE Rmask, end ... ENDCOLLECTIVE: the lanes of the mask synchronize
    # (WARPSYNC's wait) and run the region up to ENDCOLLECTIVE as one group, then go on
    # at `end` (the instruction after ENDCOLLECTIVE).  The min-PC scheduler already runs
    # lanes that arrived together as one group through straight-line code, so the
    # opening is WARPSYNC and the closing a NOP.  WARPSYNC.ALL waits for every lane.
    "ENDCOLLECTIVE": b_simple(I.OP_NOP),
}

ALIASES = ("MOV", "IADD", "SHL")

# Operations that write their destinations themselves (or have none).
NO_WRITEBACK = {I.OP_NOP, I.OP_STG, I.OP_STS, I.OP_STL, I.OP_ST, I.OP_RED, I.OP_BRA, I.OP_EXIT,
                I.OP_CALL, I.OP_RET, I.OP_BSSY, I.OP_BSYNC, I.OP_BREAK, I.OP_BMOV, I.OP_WARPSYNC,
                I.OP_BAR, I.OP_KILL, I.OP_UNKNOWN, I.OP_REDUX, I.OP_R2UR, I.OP_R2P}   # IMAD.MOV, IMAD.IADD, IMAD.SHL print IMAD


def op_and_bits(instr: Instr) -> tuple[int, int]:
    mods = tuple(instr.mods)
    if instr.op == "IMAD" and mods and mods[0] in ALIASES:
        mods = mods[1:]
    builder = BUILDERS.get(instr.op)
    if builder is None:
        raise ProgramError(f"{instr.name} is not emulated")
    invalid = [t for t in mods if t.startswith(INVALID_TOKENS)]
    if invalid:   # nvdisasm's name for a value the hardware does not define: nothing to run
        raise ProgramError(f"{instr.name}: {invalid[0]} is an encoding nvdisasm calls invalid, not emulated")
    try:
        return builder(instr.op, mods)
    except (KeyError, StopIteration, IndexError, ValueError) as err:   # a modifier the builder has no case for
        raise ProgramError(f"{instr.name}: this combination of modifiers is not emulated") from err


# How nvdisasm prints a field value it knows no name for (`MUFU.INVALID7`, `LD.???0`,
# `R2.INVALID2`): the learned tables keep such values (they decode), the emulator refuses them.
INVALID_TOKENS = ("INVALID", "???")


# ---------------------------------------------------------------------------------------
# Operands.
# ---------------------------------------------------------------------------------------
def _reg_flags(reg: Reg) -> int:
    return (I.FL_NEG if reg.neg else 0) | (I.FL_ABS if reg.abs else 0) | (I.FL_INV if reg.inv else 0) \
        | SEL_CODES.get(reg_sel(reg), 0) << I.SEL_SHIFT


def encode_src(op, wide: bool) -> tuple[int, int, int]:
    """(kind, value, flags) of one source operand."""
    wide_flag = I.FL_WIDE if wide else 0
    if isinstance(op, Reg):
        flags = _reg_flags(op) | wide_flag
        if op.file == "R":
            return (I.K_IMM, 0, flags) if op.num == 255 else (I.K_R, op.num, flags)
        if op.file == "UR":
            return (I.K_IMM, 0, flags) if op.num == 63 else (I.K_UR, op.num, flags)
        if op.file == "P":
            return I.K_P, op.num, flags
        if op.file == "UP":
            return I.K_UP, op.num, flags
        if op.file == "B":
            return I.K_B, op.num, flags
        raise ProgramError(f"register file {op.file}")
    if isinstance(op, Imm):
        if op.kind == "f64" and wide:       # the high word of a double (MUFU.RCP64H's is the word itself)
            return I.K_IMM, _signed64((op.bits & 0xFFFFFFFF) << 32), wide_flag
        value = op.bits & (0xFFFFFFFFFFFFFFFF if wide else 0xFFFFFFFF)
        if wide and op.kind == "int" and op.bits < 0:
            value = op.bits
        return I.K_IMM, _signed64(value), wide_flag
    if isinstance(op, CBank):
        flags = (I.FL_NEG if op.neg else 0) | (I.FL_ABS if op.abs else 0) | (I.FL_INV if op.inv else 0) | wide_flag
        index = cbank_index(op)
        if index is not None:
            if index.file == "UR":
                flags |= I.CBX_UNIFORM
            return I.K_CBX, op.bank << 16 | (op.offset & 0xFFFF), flags | (index.num << 16)
        return I.K_CB, op.bank << 16 | (op.offset & 0xFFFF), flags
    if isinstance(op, SpecialReg):
        if op.name not in I.SPECIAL_REGS:
            raise ProgramError(f"special register {op.name} is not emulated")
        return I.K_SR, I.SPECIAL_REGS[op.name], 0
    if isinstance(op, Target):
        return I.K_TGT, op.addr // 16, 0
    raise ProgramError(f"operand {op!r}")


def _signed64(value: int) -> int:
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >> 63 else value


def encode_dst(op, nregs: int) -> tuple[int, int]:
    if not isinstance(op, Reg):
        raise ProgramError(f"destination {op!r}")
    if op.file == "R":
        return I.K_R, nregs if op.num == 255 else op.num
    if op.file == "UR":
        return I.K_UR, 64 if op.num == 63 else op.num
    if op.file == "P":
        return I.K_P, 8 if op.num == 7 else op.num
    if op.file == "UP":
        return I.K_UP, 8 if op.num == 7 else op.num
    if op.file == "B":
        return I.K_B, op.num
    raise ProgramError(f"register file {op.file}")


def _merge_half_immediates(srcs: list) -> list:
    """HADD2/HFMA2 print an f16 pair as two immediates, high half first: one packed value."""
    out = []
    i = 0
    while i < len(srcs):
        a = srcs[i]
        if isinstance(a, Imm) and a.kind == "f16" and i + 1 < len(srcs) and isinstance(srcs[i + 1], Imm):
            out.append(Imm((a.bits & 0xFFFF) << 16 | (srcs[i + 1].bits & 0xFFFF)))
            i += 2
        else:
            out.append(a)
            i += 1
    return out


def count_registers(instrs) -> int:
    """R registers the code names (R0 up to the highest, pairs and quads counted whole)."""
    top = 0
    for _addr, instr in instrs:
        for op in list(instr.dsts) + list(instr.srcs):
            regs = []
            if isinstance(op, Reg):
                regs = [op]
            elif isinstance(op, Mem):
                regs = [op.base] if op.base is not None else []
            elif isinstance(op, CBank) and cbank_index(op) is not None:
                regs = [cbank_index(op)]
            for r in regs:
                if r.file == "R" and r.num != 255:
                    top = max(top, r.num + max(r.width, 1))
    return max(top, 1)


def wide_slots(instr: Instr, mods: tuple) -> set:
    """Source positions holding 64-bit values, for operands that are not registers
    (a register says so by its width): constants and immediates read as 64 bits."""
    op = instr.op
    if op in WIDE_SRCS:
        return set(WIDE_SRCS[op])
    if op in ("IMAD", "UIMAD") and ("WIDE" in mods or "HI" in mods):
        return {2}          # the addend of IMAD.WIDE and of IMAD.HI is a register pair
    if op in ("ULDC", "MOV", "UMOV") and "64" in mods:
        return {0}
    if op == "CALL" and "ABS" in mods:
        return {0}          # CALL.ABS.NOINC R2: the 64-bit address in R2:R3
    floats = [t for t in mods if t in ("F16", "F32", "F64")]
    if op == "F2I" and "F64" in mods:
        return {0}
    if op == "F2F" and len(floats) == 2 and floats[1] == "F64":
        return {0}
    if op in ("I2F", "I2FP") and ("S64" in mods or "U64" in mods):
        return {0}
    if op == "FRND" and "F64" in mods:
        return {0}
    if op in ("ATOM", "ATOMG", "ATOMS", "RED", "REDG") and any(t in mods for t in ("64", "F64", "S64", "U64")):
        return {1, 2}       # 64-bit data (and compare) operands, whatever width the listing shows
    return set()


def compile_program(name: str, instrs: list) -> Program:
    nregs = count_registers(instrs)
    rows = np.zeros((len(instrs), I.NF), dtype=np.int64)
    unsupported = {}
    for i, (addr, instr) in enumerate(instrs):
        try:
            fill_row(rows[i], addr, instr, nregs)
        except ProgramError as err:
            rows[i, :] = 0
            rows[i, I.F_OP] = I.OP_UNKNOWN
            rows[i, I.F_ADDR] = addr
            unsupported[i] = str(err)
    return Program(name, rows, instrs, nregs, unsupported)


def fill_row(row: np.ndarray, addr: int, instr: Instr, nregs: int) -> None:
    row[I.F_ADDR] = addr
    ctrl = instr.ctrl
    row[I.F_STALL], row[I.F_YIELD], row[I.F_WBAR], row[I.F_RBAR], row[I.F_WAIT] = \
        ctrl.stall, ctrl.yield_bit, ctrl.wbar, ctrl.rbar, ctrl.wait
    if instr.op == "UNKNOWN":
        raise ProgramError("the instruction table has no form for this word")
    opid, bits = op_and_bits(instr)
    if opid == I.OP_MOV and any(isinstance(src, CBank) and cbank_index(src) is not None for src in instr.srcs):
        # ULDC UR5, c[0x3][UR7]: an indexed constant load on the uniform datapath
        opid, bits = b_mem(I.OP_LDC)(instr.op, instr.mods)
    if instr.op.startswith("U") and instr.op != "VOTEU":       # the uniform datapath: once per warp
        bits |= I.M_UNIFORM_DST
    row[I.F_OP], row[I.F_MOD] = opid, bits
    if instr.pred is not None:
        row[I.F_GK] = 2 if instr.pred.file == "UP" else 1
        row[I.F_GN], row[I.F_GI] = instr.pred.num, int(instr.pred.inv)
    for k, dst in enumerate(instr.dsts[:3]):
        if isinstance(dst, SpecialReg) and dst.name == "PR":     # R2P PR, ...: all predicates
            continue
        kind, num = encode_dst(dst, nregs)
        row[I.F_D0K + 2 * k], row[I.F_D0 + 2 * k] = kind, num
        if k < 2:
            row[I.F_DW0 + k] = max(getattr(dst, "width", 1), 1) if dst.file in ("R", "UR") else 1
            if dst.file == "R" and opid == I.OP_ATOM and (bits & 31) == 8:
                row[I.F_DW0 + k] = 2     # ATOMG.E.MAX.S64, .ADD.F64: the old value is a pair, whatever the listing says
    row[I.F_WB] = 0 if opid in NO_WRITEBACK else 1
    if opid == I.OP_LEPC:
        row[I.F_DW0] = 2     # LEPC R14: the 64-bit address in R14:R15
    srcs = list(instr.srcs)
    if instr.op in ("HADD2", "HFMA2"):
        srcs = _merge_half_immediates(srcs)
    if instr.op == "F2IP":
        # F2IP.U8.F32 Rd, RZ, Rb, RZ (ptxas's cvt.rni/rzi.u8.f32): Rb converted into the low
        # byte; other operands than RZ pack more values, not seen, so not guessed
        if len(srcs) != 3 or any(not (isinstance(x, Reg) and x.file == "R" and x.num == 255) for x in (srcs[0], srcs[2])):
            raise ProgramError(f"{instr.name} with operands other than RZ, Rb, RZ is not emulated")
        srcs = [srcs[1]]
    if instr.op == "WARPSYNC" and not srcs:          # WARPSYNC.ALL: the whole warp
        srcs = [Imm(0xFFFFFFFF)]
    for op in instr.operands:
        for part in (op, getattr(op, "base", None), getattr(op, "ubase", None)):
            if isinstance(part, Reg) and reg_sel(part).startswith(INVALID_TOKENS):
                raise ProgramError(f"{instr.name}: selector {reg_sel(part)} is an encoding nvdisasm calls invalid, "
                                   "not emulated")
    wide = wide_slots(instr, tuple(instr.mods))
    slot = 0
    for j, src in enumerate(srcs):
        if isinstance(src, Mem):
            _fill_mem(row, slot, src)
            # .E: a 64-bit global (or generic) address, whether or not it prints .64
            # (ATOMG.E.CAS prints [R4] for the pair R4:R5)
            if "E" in instr.mods and instr.op in ("LDG", "STG", "ATOMG", "ATOM", "RED", "REDG", "LD", "ST", "QSPC"):
                row[I.F_S + 3 * slot + 2] |= I.MEM_BASE64
        elif isinstance(src, Target):
            row[I.F_AUX2] = src.addr // 16
            row[I.F_S + 3 * slot] = I.K_TGT
        else:
            is_wide = j in wide or (isinstance(src, Reg) and src.width >= 2)
            kind, value, flags = encode_src(src, is_wide)
            row[I.F_S + 3 * slot], row[I.F_S + 3 * slot + 1], row[I.F_S + 3 * slot + 2] = kind, value, flags
        slot += 1
        if slot > I.NSRC:
            raise ProgramError("too many operands")
    row[I.F_NSRC] = slot


def _fill_mem(row, slot: int, mem: Mem) -> None:
    base = mem.base
    flags = 0
    if base is None or (base.file == "R" and base.num == 255):
        value = -1
    else:
        value = base.num
        if base.width == 2:
            flags |= I.MEM_BASE64
        flags |= SCALE_CODES.get(reg_sel(base), 0) << I.SCALE_SHIFT
    row[I.F_S + 3 * slot], row[I.F_S + 3 * slot + 1], row[I.F_S + 3 * slot + 2] = I.K_MEM, value, flags
    row[I.F_IMM] = mem.offset
    row[I.F_AUX] = -1 if mem.ubase is None or mem.ubase.num == 63 else mem.ubase.num


def resolve_cbanks(rows: np.ndarray, banks: dict) -> np.ndarray:
    """A copy of `rows` with every plain constant-bank source replaced by its value (an
    immediate): `banks` maps bank number -> bytes.  Indexed ones (LDC) stay."""
    out = rows.copy()
    for slot in range(I.NSRC):
        kcol, vcol, fcol = I.F_S + 3 * slot, I.F_S + 3 * slot + 1, I.F_S + 3 * slot + 2
        for i in np.nonzero(out[:, kcol] == I.K_CB)[0]:
            bank, offset = int(out[i, vcol]) >> 16, int(out[i, vcol]) & 0xFFFF
            wide = bool(out[i, fcol] & I.FL_WIDE)
            data = banks.get(bank, b"")
            size = 8 if wide else 4
            chunk = data[offset:offset + size]
            chunk = chunk + bytes(size - len(chunk))
            out[i, kcol] = I.K_IMM
            out[i, vcol] = _signed64(int.from_bytes(chunk, "little"))
    return out
