"""The emulator's numeric vocabulary: operation ids, operand kinds, row fields, modifier
bits and special-register ids, shared by the program compiler (program.py) and the
jitted core (core.py).  Plain integers, so numba folds them as constants.

A program is an int64 array, one row of NF fields per 16-byte instruction:

    F_OP F_MOD                      operation id, its modifier bits (per operation)
    F_GK F_GN F_GI                  guard: file (0 none, 1 P, 2 UP), number, inverted
    F_D0K F_D0 .. F_D2K F_D2        up to three destinations: kind, register number
    F_S0K F_S0 F_S0F .. (6 slots)   sources in print order: kind, value, flags
    F_IMM F_AUX F_AUX2              memory offset, uniform base, extra per operation
    F_STALL F_YIELD F_WBAR F_RBAR F_WAIT   the control word
    F_ADDR                          byte address of the instruction
    F_DW0 F_DW1 F_WB F_NSRC         destination widths, generic write-back, sources to fetch
"""

# ---- row fields -------------------------------------------------------------------------
F_OP, F_MOD, F_GK, F_GN, F_GI = 0, 1, 2, 3, 4
F_D0K, F_D0, F_D1K, F_D1, F_D2K, F_D2 = 5, 6, 7, 8, 9, 10
F_S = 11                      # first source slot; slot i is F_S + 3*i (kind, value, flags)
NSRC = 6
F_IMM = F_S + 3 * NSRC        # 29
F_AUX = F_IMM + 1
F_AUX2 = F_IMM + 2
F_STALL, F_YIELD, F_WBAR, F_RBAR, F_WAIT = 32, 33, 34, 35, 36
F_ADDR = 37
F_DW0, F_DW1 = 38, 39         # widths (registers) of destinations 0 and 1
F_WB = 40                     # 1: the core writes destinations back from its result rows
F_NSRC = 41                   # source slots to fetch into the operand rows
NF = 44

# ---- operand kinds ----------------------------------------------------------------------
K_NONE, K_R, K_IMM, K_UR, K_P, K_UP, K_CB, K_CBX, K_MEM, K_SR, K_B, K_TGT = range(12)

# source flags
FL_NEG, FL_ABS, FL_INV, FL_WIDE = 1, 2, 4, 8
SEL_SHIFT = 4                 # bits 4..7: half selector (SEL_*)
SEL_NONE, SEL_H0H0, SEL_H1H1, SEL_F32, SEL_H1H0, SEL_B1, SEL_B2, SEL_B3, SEL_H1 = 0, 1, 2, 3, 4, 5, 6, 7, 8
SEL_SIGN = 9                  # PLOP3's R.SIGN source: the register's sign bit as a predicate
CBX_UNIFORM = 1 << 12         # an indexed constant (c[0x3][UR7]) whose index is a uniform register
SCALE_SHIFT = 8               # bits 8..11 of a memory operand: log2 of .X4/.X8/.X16
MEM_BASE64 = 1 << 12          # [R2.64]

# ---- operations --------------------------------------------------------------------------
(OP_NOP, OP_MOV, OP_IMAD, OP_IADD3, OP_LEA, OP_SHF, OP_LOP3, OP_PLOP3, OP_ISETP, OP_SEL,
 OP_IMNMX, OP_IABS, OP_POPC, OP_FLO, OP_BREV, OP_PRMT, OP_SGXT, OP_VABSDIFF, OP_VABSDIFF4,
 OP_P2R, OP_S2R, OP_CS2R, OP_B2R,
 OP_FADD, OP_FMUL, OP_FFMA, OP_FMNMX, OP_FSETP, OP_FSEL, OP_FCHK, OP_FRND, OP_MUFU,
 OP_F2I, OP_I2F, OP_F2F, OP_DADD, OP_DMUL, OP_DFMA, OP_DSETP,
 OP_HADD2, OP_HFMA2, OP_HMNMX2, OP_HSETP2, OP_F2FP,
 OP_LDG, OP_STG, OP_LDS, OP_STS, OP_LDL, OP_STL, OP_LD, OP_ST, OP_LDC,
 OP_ATOM, OP_RED,
 OP_SHFL, OP_VOTE, OP_MATCH, OP_REDUX, OP_R2UR,
 OP_BRA, OP_EXIT, OP_CALL, OP_RET, OP_BSSY, OP_BSYNC, OP_BREAK, OP_BMOV, OP_WARPSYNC,
 OP_BAR, OP_KILL, OP_UNKNOWN, OP_R2P, OP_HMUL2, OP_BMSK, OP_QSPC,
 OP_VINT, OP_LEPC) = range(78)

# Memory spaces of OP_ATOM / OP_RED / OP_LD / OP_ST.
SPACE_GENERIC, SPACE_GLOBAL, SPACE_SHARED, SPACE_LOCAL = 0, 1, 2, 3

# ---- modifier bits, per operation ---------------------------------------------------------
# IMAD
M_WIDE, M_HI, M_U32, M_X = 1, 2, 4, 8
# IADD3: M_X; LEA: M_HI, M_X, M_SX32
M_SX32 = 16
# SHF: direction, wrap, high half, 64-bit type, signed
M_SHF_R, M_SHF_W, M_SHF_HI, M_SHF_64, M_SHF_S = 1, 2, 4, 8, 16
# setp: comparison in bits 0..3, boolean op in bits 4..5, U32 bit 6, EX bit 7, FTZ bit 8
CMP_F, CMP_LT, CMP_EQ, CMP_LE, CMP_GT, CMP_NE, CMP_GE, CMP_NUM, CMP_NAN = 0, 1, 2, 3, 4, 5, 6, 7, 8
CMP_LTU, CMP_EQU, CMP_LEU, CMP_GTU, CMP_NEU, CMP_GEU, CMP_T = 9, 10, 11, 12, 13, 14, 15
CMP_MIN, CMP_MAX = 16, 17       # DSETP.MIN / DSETP.MAX (fmin/fmax select + NaN)
BOP_AND, BOP_OR, BOP_XOR = 0, 1, 2
M_CMP_MASK = 31
M_BOP_SHIFT = 5
M_SETP_U32, M_SETP_EX, M_FTZ = 1 << 7, 1 << 8, 1 << 9
# float arithmetic: rounding in bits 0..1, FTZ, SAT
RND_RN, RND_RM, RND_RP, RND_RZ = 0, 1, 2, 3
M_RND_MASK = 3
M_SAT = 1 << 10
M_F64 = 1 << 11               # FRND.F64, F2I.F64 source, I2F.F64 destination
# FMUL.D8/D4/D2/M2/M4/M8: the product times 2^e, e in -3..3, as 3 bits (two's complement) from bit 12
M_FSCALE_SHIFT = 12
# FRND modes share the rounding field (RN, FLOOR=RM, CEIL=RP, TRUNC=RZ).
# MUFU functions
(MUFU_COS, MUFU_SIN, MUFU_EX2, MUFU_LG2, MUFU_RCP, MUFU_RSQ, MUFU_RCP64H, MUFU_RSQ64H,
 MUFU_SQRT, MUFU_TANH) = range(10)
# conversions: integer type codes (size | signed)
IT_U8, IT_S8, IT_U16, IT_S16, IT_U32, IT_S32, IT_U64, IT_S64 = range(8)
# F2I: dst int type bits 12..14; I2F: src int type bits 12..14
IT_SHIFT = 12
# F2F: source f64 bit (M_F64), destination f64 bit; f16 source / destination
M_DST64 = 1 << 15
M_SRC16, M_DST16 = 1 << 16, 1 << 17
M_BF16 = 1 << 18              # the 16-bit float (source or destination) is bf16, not f16
# F2FP: .RELU (negative results become +0), .SATFINITE (overflow to the largest finite
# number), .MERGE_C (one conversion into the low half; the high half kept from operand 2)
M_RELU, M_SATFINITE, M_MERGE_C = 1 << 19, 1 << 22, 1 << 23
# numeric-semantics flags (ptxc/emu/fp.py's NaN rules), above the bits the others use:
# M_NAN: FMNMX.NAN / HMNMX2.NAN (a NaN operand gives the canonical NaN);
# M_NTZ: F2I[P].NTZ (a NaN gives 0; without it, the destination's sign bit);
# M_SRC_BF16: F2F's 16-bit source is bf16 (M_BF16 then names the destination's format);
# M_SRCINT: I2I.SAT, run as F2I of the source integer's exact value (bits 12..14: the
# destination type, M_SRC_S: the source is signed 32-bit, else unsigned)
M_NAN, M_NTZ, M_SRC_BF16, M_SRCINT, M_SRC_S = 1 << 40, 1 << 41, 1 << 42, 1 << 43, 1 << 44
# PRMT's modes (bits 0..2): the default byte-select nibbles, and the PTX ISA's
# .f4e .b4e .rc8 .ecl .ecr .rc16, which read only the selector's low two bits
# MUFU.EX2.F16 and friends: the operand and result are f16 (the low half), beside the function
M_MUFU_F16 = 1 << 40
PRMT_IDX, PRMT_F4E, PRMT_B4E, PRMT_RC8, PRMT_ECL, PRMT_ECR, PRMT_RC16 = range(7)
# WARPSYNC.EXCLUSIVE: the threads of each mask go on as a group of their own (sm_90's code
# for per-half-warp masks: the VOTE after it sees only its half), one group at a time
M_EXCLUSIVE = 1
WAIT_EXCLUSIVE = 1 << 32      # in a waiting thread's waitv, beside its 32-bit mask
# memory: size in bytes in bits 0..4, signed bit 5
M_SIGNED = 1 << 5
# ULDC.U8/.S8/.U16/.S16 (a MOV from the constant bank): keep the low byte / half, M_SIGNED extends
M_MOV_B8, M_MOV_B16 = 1 << 6, 1 << 7
# atomics: operation in bits 8..11, type in bits 12..14, size in bits 0..4
(AT_ADD, AT_MIN, AT_MAX, AT_INC, AT_DEC, AT_AND, AT_OR, AT_XOR, AT_EXCH, AT_CAS,
 AT_POPC_INC, AT_CAST) = range(12)
# AT_CAST (ATOMS.CAST.SPIN d, [a], cmp, new): stores new if [a] == cmp; d = 1 if it stored
AT_SHIFT = 8
AT_U32, AT_S32, AT_U64, AT_S64, AT_F32, AT_F64, AT_F16X2, AT_BF16X2 = range(8)
AT_TYPE_SHIFT = 12
# SHFL modes
SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_BFLY = 0, 1, 2, 3
# VOTE modes
VOTE_ALL, VOTE_ANY, VOTE_EQ = 0, 1, 2
# MATCH modes
MATCH_ANY, MATCH_ALL = 0, 1
# REDUX operations (M_U32 bit 4 clear = signed for MIN/MAX)
RX_AND, RX_OR, RX_XOR, RX_SUM, RX_MIN, RX_MAX = range(6)
M_RX_SIGNED = 16
# BAR: bits 0..1 kind
BAR_SYNC, BAR_ARV, BAR_RED_POPC, BAR_RED_AND, BAR_RED_OR = range(5)
# BMOV: direction
BMOV_TO_B, BMOV_FROM_B = 0, 1
M_CLEAR = 4
# BRA: .CONV (taken when the warp runs converged with the mask operand); sm_90's .DIV
# (taken when it does not: the slow path of a warp-synchronous operation)
M_CONV = 1
M_DIV = 4
# BRX / JMX run as OP_CALL with this bit: an indirect jump (no return address)
M_JUMP = 2
# CALL.ABS.NOINC Rtarget: the register pair is an absolute address (a system call's: SYS_BASE + ...)
M_ABS = 4

# ---- system calls (the CUDA driver's `.extern .func`s a cubin calls through CALL.ABS) ------
# The loader gives the undefined symbol `name` the address SYS_BASE + SYS_STRIDE * id; a
# CALL.ABS.NOINC to it runs the service (core.py) and returns to R20:R21.  Each call
# appends a record to the launch's system-call log (rows after row 0, which holds the
# count and the records dropped for want of room): its kind, block and thread, the
# argument registers (R4:R5, R6:R7, R8, R10:R11, R12:R13 as 64-bit values) and, for
# vprintf, the first SYS_BUF_WORDS 64-bit words of the argument buffer (the GPU's printf
# takes at most 32 arguments after the format) as they were at the call.
SYS_BASE = 0x7FFD_0000_0000
SYS_STRIDE = 16
SYS_VPRINTF, SYS_ASSERTFAIL = 1, 2
SYSCALLS = {"vprintf": SYS_VPRINTF, "__assertfail": SYS_ASSERTFAIL}
SYS_NCALLS = 3
SL_KIND, SL_BLOCK, SL_THREAD, SL_PC, SL_ARGS, SL_NBUF = 0, 1, 2, 3, 4, 9
SL_BUF = 10
SYS_BUF_WORDS = 32
SL_COLS = SL_BUF + SYS_BUF_WORDS
SYS_ARG_REGS = (4, 6, 8, 10, 12)
SYS_RETURN_REG = 20           # R20:R21: the return address
# MOV variants handled by one operation
M_UNIFORM_DST = 1 << 20       # the result goes to a uniform register (UMOV, UIADD3, ...)
# PRMT modes are not modelled beyond the default (index) mode.
# sm_90's integer ops (OP_VINT): VIADD a+b; VIMNMX mnmx(a, b); VIMNMX3 mnmx(a, b, c);
# VIADDMNMX mnmx(a+b, c).  Kind in bits 0..1; M_U32 (bit 2) unsigned compares; the
# last source (a predicate) picks min when true, max when false (as IMNMX's);
# .RELU clamps the result at 0 (signed); .16x2 / .S16x2 / .U16x2 work on both halves.
V_ADD, V_MNMX, V_MNMX3, V_ADDMNMX = 0, 1, 2, 3
V_RELU, V_16X2 = 16, 32

# ---- special registers ---------------------------------------------------------------------
SPECIAL_REGS = {
    "SR_TID.X": 0, "SR_TID.Y": 1, "SR_TID.Z": 2,
    "SR_CTAID.X": 3, "SR_CTAID.Y": 4, "SR_CTAID.Z": 5,
    "SR_LANEID": 6, "SR_EQMASK": 7, "SR_LTMASK": 8, "SR_LEMASK": 9, "SR_GTMASK": 10,
    "SR_GEMASK": 11, "SRZ": 12, "SR_CLOCKLO": 13, "SR_CLOCKHI": 14, "SR_GLOBALTIMERLO": 15,
    "SR_GLOBALTIMERHI": 16, "SR_VIRTUALSMID": 17, "SR_NTID": 18, "SR_SWINHI": 19, "SR_SWINLO": 20,
    "SR_LMEMHIOFF": 21, "SR_VIRTID": 22, "SR_CLOCK": 23, "SR_WARPERRORSTATUS": 24,
    "SR_TID": 25, "PR": 26,
    # sm_90: the CTA's rank in its cluster (CGA).  A launch without clusters is a cluster
    # of one CTA: 0.  nvcc forms shared addresses as (SR_CgaCtaId << 24) + offset.
    "SR_CgaCtaId": 27,
}

# ---- errors the core reports (err[0]) --------------------------------------------------------
E_OK, E_OOB, E_MISALIGNED, E_MAX_STEPS, E_DEADLOCK, E_BAD_PC, E_UNSUPPORTED, E_CBANK, \
    E_BARRIER_DIVERGENT, E_TRAP, E_WARPSYNC_SELF, E_ASSERT, E_SYSCALL = range(13)
# err fields
ERR_CODE, ERR_BLOCK, ERR_THREAD, ERR_PC, ERR_ADDR, ERR_SIZE, ERR_SPACE, ERR_WRITE = range(8)

# thread status
ST_RUN, ST_EXITED, ST_BAR, ST_BSYNC, ST_WSYNC, ST_ABSENT = range(6)

# ---- the core's configuration vector (cfg) and hazard-table layout ---------------------------
C_GX, C_GY, C_GZ, C_BX, C_BY, C_BZ = 0, 1, 2, 3, 4, 5
C_NTHREADS, C_NWARPS, C_NREGS, C_SHARED, C_LOCAL, C_MAXSTEPS = 6, 7, 8, 9, 10, 11
C_GBASE, C_HEAP, C_SWIN, C_LWIN, C_HAZARDS, C_SLICE, C_BLOCK0, C_BLOCK1 = 12, 13, 14, 15, 16, 17, 18, 19
C_NALLOC = 20
NCFG = 24

WINDOW = 1 << 32       # size of the shared and local windows in the generic address space
# hazard units: R0..R255, P0..P7 at 256, UR0..UR63 at 264, UP0..UP7 at 328
NUNITS = 336
HZ_SB, HZ_STALL, HZ_WAR = 1, 2, 3
# hazard table columns: consumer class, variable latency, reads (unit | role << 10), writes (unit | key << 10),
# the in-order queue the instruction's class belongs to (-1: none)
HZ_CLS, HZ_VAR, HZ_NR, HZ_R, HZ_NW, HZ_W, HZ_Q = 0, 1, 2, 3, 11, 12, 16
HZ_COLS = 17
