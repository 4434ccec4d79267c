"""The jitted SASS interpreter: one numba function, `run_grid`, runs a whole launch.

Order of execution (deterministic):
- blocks run one after another in linear order, x fastest, then y, then z;
- inside a block, warps take turns in order of their number; a warp runs until all its
  lanes have exited or wait at a barrier, or for `slice` instructions, then the next
  warp takes its turn; a block ends when every warp is done;
- inside a warp, the lanes whose PC is lowest run together (the "min-PC" rule: with
  structured code it reconverges lanes where ptxas expects, at BSYNC); lanes that wait
  at BSYNC Bn (or WARPSYNC mask) resume together when every lane of Bn's mask (or of the
  mask) that has not exited waits there too;
- within one instruction, lanes go in order 0..31: among lanes that store to the same
  address, or do atomics on it, the highest lane's store lands last.

Registers are int64 arrays holding 32-bit values (0..2^32-1), 64-bit operands being
register pairs; predicates are uint8 (P7 = PT reads 1, writes to PT go to slot 8).
Memory is three byte arrays with 16/32-bit views: global (one heap, allocations at
`gbase + offset`), shared (per block) and local (per thread).  Errors stop the launch
with err[] filled (see isa.ERR_*); the caller turns that into a report.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import fp
from .fp import M32, bits32, bits64, f32, f64
from .isa import *  # noqa: F401,F403  (the numeric vocabulary)

@njit(cache=True)
def _iflags(x, f):
    if f & FL_INV:
        x = ~x & M32
    if f & FL_NEG:
        x = (-x) & M32
    return x


@njit(cache=True)
def _addend(x, f):
    """An adder's source with its flags: -x adds ~x + 1 (a 33-bit amount: 2^32 for
    x = 0), so that the carry out is the one a subtraction chain needs."""
    if f & FL_INV:
        x = ~x & M32
    if f & FL_NEG:
        x = (~x & M32) + 1
    return x


@njit(cache=True)
def _fflags(x, f):
    if f & FL_ABS:
        x &= 0x7FFFFFFF
    if f & FL_NEG:
        x ^= 0x80000000
    return x


@njit(cache=True)
def _dflags(x, f):
    if f & FL_ABS:
        x &= 0x7FFFFFFFFFFFFFFF
    if f & FL_NEG:
        x ^= fp.SIGN64
    return x


@njit(cache=True)
def _sext32(x):
    x &= M32
    return x - 4294967296 if x >= 2147483648 else x


@njit(cache=True)
def _ult64(a, b):
    """Unsigned a < b for 64-bit patterns held in int64."""
    return (a ^ fp.SIGN64) < (b ^ fp.SIGN64)


@njit(cache=True)
def _popc(x):
    x = x & M32
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F
    return ((x * 0x01010101) & M32) >> 24


@njit(cache=True)
def _flo(x, signed):
    x &= M32
    if signed and x >= 2147483648:
        x = ~x & M32
    if x == 0:
        return -1
    n = 31
    while (x >> n) & 1 == 0:
        n -= 1
    return n


@njit(cache=True)
def _brev(x):
    r = 0
    for i in range(32):
        r |= ((x >> i) & 1) << (31 - i)
    return r


@njit(cache=True)
def _lut3(lut, a, b, c):
    r = 0
    if lut & 0x01:
        r |= ~a & ~b & ~c
    if lut & 0x02:
        r |= ~a & ~b & c
    if lut & 0x04:
        r |= ~a & b & ~c
    if lut & 0x08:
        r |= ~a & b & c
    if lut & 0x10:
        r |= a & ~b & ~c
    if lut & 0x20:
        r |= a & ~b & c
    if lut & 0x40:
        r |= a & b & ~c
    if lut & 0x80:
        r |= a & b & c
    return r & M32


@njit(cache=True)
def _icmp(a, b, cmp, unsigned):
    if not unsigned:
        a = _sext32(a)
        b = _sext32(b)
    if cmp == CMP_LT:
        return a < b
    if cmp == CMP_EQ:
        return a == b
    if cmp == CMP_LE:
        return a <= b
    if cmp == CMP_GT:
        return a > b
    if cmp == CMP_NE:
        return a != b
    if cmp == CMP_GE:
        return a >= b
    if cmp == CMP_T:
        return True
    return False


@njit(cache=True)
def _bop(x, y, bop):
    if bop == BOP_AND:
        return x & y
    if bop == BOP_OR:
        return x | y
    return x ^ y


@njit(cache=True)
def _shf(lo, s, hi, mod):
    bits = 64 if mod & M_SHF_64 else 32
    s &= M32
    if mod & M_SHF_W:
        s &= bits - 1
    elif s > bits:
        s = bits
    x = ((hi & M32) << 32) | (lo & M32)
    if mod & M_SHF_R:
        if s >= 64:
            r = (x >> 63) if mod & M_SHF_S else 0
            if mod & M_SHF_S:
                r = -1 if x < 0 else 0
        elif mod & M_SHF_S:
            r = x >> s
        else:
            r = (x >> s) & ((1 << (64 - s)) - 1) if s > 0 else x
    else:
        r = x << s if s < 64 else 0
    if mod & M_SHF_HI:
        return (r >> 32) & M32
    return r & M32


@njit(cache=True)
def _prmt(a, sel, b, mode):
    """PRMT: bytes of the pair {b, a} (a: bytes 0..3).  PRMT_IDX: each selector nibble
    picks a byte (bit 3: replicate its sign); the other modes (PTX ISA, prmt) use the
    selector's low two bits n: f4e byte i = x[n+i], b4e x[n-i] (mod 8), rc8 x[n],
    ecl x[max(i, n)], ecr x[min(i, n)], rc16 x[2*(n&1) + (i&1)]."""
    x = ((b & M32) << 32) | (a & M32)
    n = sel & 3
    r = 0
    for i in range(4):
        if mode == PRMT_IDX:
            nib = (sel >> (4 * i)) & 0xF
            byte = (x >> (8 * (nib & 7))) & 0xFF
            if nib & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            if mode == PRMT_F4E:
                k = (n + i) & 7
            elif mode == PRMT_B4E:
                k = (n - i) & 7
            elif mode == PRMT_RC8:
                k = n
            elif mode == PRMT_ECL:
                k = i if i > n else n
            elif mode == PRMT_ECR:
                k = i if i < n else n
            else:
                k = 2 * (n & 1) + (i & 1)
            byte = (x >> (8 * k)) & 0xFF
        r |= byte << (8 * i)
    return r


@njit(cache=True)
def _sreg(sid, t, lane, bx, by, cx, cy, cz, nthreads, clock):
    if sid == 0:
        return t % bx
    if sid == 1:
        return (t // bx) % by
    if sid == 2:
        return t // (bx * by)
    if sid == 3:
        return cx
    if sid == 4:
        return cy
    if sid == 5:
        return cz
    if sid == 6:
        return lane
    if sid == 7:
        return np.int64(1) << lane
    if sid == 8:
        return (np.int64(1) << lane) - 1
    if sid == 9:
        return (np.int64(2) << lane) - 1
    if sid == 10:
        return (~((np.int64(2) << lane) - 1)) & M32
    if sid == 11:
        return (~((np.int64(1) << lane) - 1)) & M32
    if sid == 13 or sid == 23 or sid == 15:
        return clock & M32
    if sid == 14 or sid == 16:
        return (clock >> 32) & M32
    if sid == 25:
        return (t % bx) | ((t // bx) % by) << 16 | (t // (bx * by)) << 26
    return np.int64(0)


@njit(cache=True)
def _vmm(a, b, use_min, unsigned, bits):
    """min (use_min) or max of two `bits`-wide integers, signed unless `unsigned`."""
    x, y = a, b
    if not unsigned:
        top = np.int64(1) << (bits - 1)
        if x >= top:
            x -= top << 1
        if y >= top:
            y -= top << 1
    if use_min:
        return a if x <= y else b
    return a if x >= y else b


@njit(cache=True)
def _vint1(a, b, c, use_min, mod, bits):
    """One lane (32 bits) or one half (16 bits) of VIADD / VIMNMX / VIMNMX3 / VIADDMNMX:
    operands are `bits`-wide patterns, additions wrap, .RELU clamps at 0 (signed)."""
    m = (np.int64(1) << bits) - 1
    kind = mod & 3
    unsigned = (mod & M_U32) != 0
    if kind == V_ADD:
        return (a + b) & m
    if kind == V_MNMX:
        r = _vmm(a, b, use_min, unsigned, bits)
    elif kind == V_MNMX3:
        r = _vmm(_vmm(a, b, use_min, unsigned, bits), c, use_min, unsigned, bits)
    else:
        r = _vmm((a + b) & m, c, use_min, unsigned, bits)
    if (mod & V_RELU) and r >= (np.int64(1) << (bits - 1)):
        r = np.int64(0)
    return r


@njit(cache=True)
def _vneg(x, f, halves):
    """An operand's `-` (two's complement) of the whole word, or of each half."""
    if not (f & FL_NEG):
        return x & M32
    if halves:
        return ((-(x >> 16)) & 0xFFFF) << 16 | ((-x) & 0xFFFF)
    return (-x) & M32


@njit(cache=True)
def _half(x, sel, hi):
    """f16 bits of one half of operand x under selector sel (hi: the upper lane)."""
    if sel == SEL_H0H0:
        return x & 0xFFFF
    if sel == SEL_H1H1:
        return (x >> 16) & 0xFFFF
    if sel == SEL_H1H0:
        return (x >> 16) & 0xFFFF if not hi else x & 0xFFFF
    return (x >> 16) & 0xFFFF if hi else x & 0xFFFF


@njit(cache=True)
def _hval(x, f, hi, bf16=False):
    """float64 value of one half of a (possibly F32-selected) operand, flags applied;
    `bf16`: the halves are bfloat16."""
    sel = (f >> SEL_SHIFT) & 0xF
    if sel == SEL_F32:
        v = np.float64(f32(x))
    elif bf16:
        v = fp.bf2f(_half(x, sel, hi))
    else:
        v = fp.h2f(_half(x, sel, hi))
    if f & FL_ABS:
        v = abs(v)
    if f & FL_NEG:
        v = -v
    return v


@njit(cache=True)
def _hval16(x, f, fmt):
    """float64 value of the 16-bit float (f16 or bf16) in a register's low half (or
    the half its selector names), flags applied."""
    sel = (f >> SEL_SHIFT) & 0xF
    v = fp.half_value((x >> 16) & 0xFFFF if sel == SEL_H1 or sel == SEL_H1H1 else x & 0xFFFF, fmt)
    if f & FL_ABS:
        v = abs(v)
    if f & FL_NEG:
        v = -v
    return v


@njit(cache=True)
def _find_alloc(allocs, n, off, size):
    lo, hi = 0, n - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) >> 1
        if allocs[mid, 0] <= off:
            found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    if found >= 0 and off + size <= allocs[found, 0] + allocs[found, 1]:
        return found
    return -1


@njit(cache=True)
def _atomic(kind, typ, old, val, val2, size):
    """The value an atomic leaves in memory (bits; 64-bit for size 8)."""
    if kind == AT_ADD:
        if typ == AT_F32:
            return fp.fadd32(old, val, 0, True, False)
        if typ == AT_F64:
            # the atomic unit's adder returns a NaN operand as it is (fp's NaN rules)
            if fp.is_nan64(old):
                return old
            if fp.is_nan64(val):
                return val
            return fp.dadd(old, val, 0)
        if typ == AT_F16X2 or typ == AT_BF16X2:     # .noftz: each half rounded to nearest, subnormals kept
            bf = typ == AT_BF16X2
            r = np.int64(0)
            for half in range(2):
                x = fp.half_value(old >> (16 * half), fp.BF16 if bf else fp.F16)
                y = fp.half_value(val >> (16 * half), fp.BF16 if bf else fp.F16)
                s_, t_ = fp.two_sum(x, y)
                r |= np.int64(fp.round_half(s_, t_, 0, bf)) << (16 * half)
            return r
        r = old + val
        return r & M32 if size == 4 else r
    if kind == AT_POPC_INC:
        return (old + 1) & M32
    if kind == AT_MIN or kind == AT_MAX:
        if size == 4:
            if typ == AT_S32:
                a, b = _sext32(old), _sext32(val)
            else:
                a, b = old & M32, val & M32
            less = a < b
        else:
            less = old < val if typ == AT_S64 else _ult64(old, val)
        if kind == AT_MIN:
            return old if less else val
        return val if less else old
    if kind == AT_INC:
        return 0 if (old & M32) >= (val & M32) else (old + 1) & M32
    if kind == AT_DEC:
        return val & M32 if (old & M32) == 0 or (old & M32) > (val & M32) else (old - 1) & M32
    if kind == AT_AND:
        return old & val
    if kind == AT_OR:
        return old | val
    if kind == AT_XOR:
        return old ^ val
    if kind == AT_EXCH:
        return val
    if kind == AT_CAS or kind == AT_CAST:
        return val2 if old == val else old
    return old


@njit(cache=True)
def _fail(err, code, blk, t, pc, addr, size, space, write):
    err[ERR_CODE] = code
    err[ERR_BLOCK] = blk
    err[ERR_THREAD] = t
    err[ERR_PC] = pc
    err[ERR_ADDR] = addr
    err[ERR_SIZE] = size
    err[ERR_SPACE] = space
    err[ERR_WRITE] = write


@njit(cache=True)
def _syscall(kind, syslog, regs, t, blk, pc, lo8, heap8, local_size, lwin, gbase):
    """Log one system call of thread t (isa.SYS_*; the layout beside SL_COLS) and
    return what it gives back in R4: vprintf the number of arguments its format
    names (the CUDA guide: printf returns the number of arguments parsed), 0 else."""
    n = syslog[0, 0]
    if n + 1 >= syslog.shape[0]:
        syslog[0, 1] += 1                 # no room: the GPU's printf buffer drops it too
        return np.int64(0)
    row = n + 1
    syslog[0, 0] = n + 1
    syslog[row, SL_KIND] = kind
    syslog[row, SL_BLOCK] = blk
    syslog[row, SL_THREAD] = t
    syslog[row, SL_PC] = pc
    for k in range(5):
        r = SYS_ARG_REGS[k]
        if r + 1 < regs.shape[0]:
            syslog[row, SL_ARGS + k] = (regs[r, t] & M32) | ((regs[r + 1, t] & M32) << 32)
    if kind != SYS_VPRINTF:
        return np.int64(0)
    nheap = heap8.shape[0]
    buf = syslog[row, SL_ARGS + 1]
    words = 0
    for j in range(SYS_BUF_WORDS):
        x = np.int64(0)
        ok = False
        a = buf + 8 * j
        if a >= lwin and a < lwin + WINDOW:
            off = a - lwin
            if off + 8 <= local_size:
                base = t * local_size + off
                for b in range(8):
                    x |= np.int64(lo8[base + b]) << (8 * b)
                ok = True
        elif a >= gbase and a - gbase + 8 <= nheap:
            base = a - gbase
            for b in range(8):
                x |= np.int64(heap8[base + b]) << (8 * b)
            ok = True
        if not ok:
            break
        syslog[row, SL_BUF + j] = x
        words += 1
    syslog[row, SL_NBUF] = words
    fmt = syslog[row, SL_ARGS]
    count = np.int64(0)
    if fmt == 0:
        return np.int64(-1)
    i = fmt - gbase
    while i >= 0 and i < nheap and heap8[i] != 0:
        if heap8[i] == 37:                                  # '%'
            if i + 1 < nheap and heap8[i + 1] == 37:
                i += 2
                continue
            count += 1
        i += 1
    return min(count, np.int64(32))


@njit(cache=True)
def _hz_record(hz_out, hz_count, pc, unit, kind, src, have, need):
    n = hz_count[0]
    if n < hz_out.shape[0]:
        hz_out[n, 0] = pc
        hz_out[n, 1] = unit
        hz_out[n, 2] = kind
        hz_out[n, 3] = src
        hz_out[n, 4] = have
        hz_out[n, 5] = need
    hz_count[0] = n + 1


@njit(cache=True)
def run_grid(prog, cfg, cbank, heap8, heap16, heap32, allocs,
             sh8, sh16, sh32, lo8, lo16, lo32,
             regs, preds, uregs, upreds, bregs, pcs, status, waitv, bar_result,
             hz, hz_lat, hz_state, hz_out, hz_count, stats, err, syslog):
    """Run blocks cfg[C_BLOCK0] .. cfg[C_BLOCK1]-1 of a launch.  regs is [register,
    thread] (register-major: a warp's lanes are adjacent), preds [predicate, thread]."""
    gx, gy = cfg[C_GX], cfg[C_GY]
    bx, by = cfg[C_BX], cfg[C_BY]
    nthreads = cfg[C_NTHREADS]
    nwarps = cfg[C_NWARPS]
    nregs = cfg[C_NREGS]
    shared_size = cfg[C_SHARED]
    local_size = cfg[C_LOCAL]
    max_steps = cfg[C_MAXSTEPS]
    gbase = cfg[C_GBASE]
    swin = cfg[C_SWIN]
    lwin = cfg[C_LWIN]
    hazards = cfg[C_HAZARDS] != 0
    slice_len = cfg[C_SLICE]
    nalloc = cfg[C_NALLOC]
    nprog = prog.shape[0]
    cb_words = cbank.shape[1]
    steps = stats[0]
    thread_steps = stats[1]
    clo = np.int64(0)
    chi = np.int64(0)
    SRC = np.zeros((NSRC, 32), dtype=np.int64)    # source operands, low words
    SRCH = np.zeros((NSRC, 32), dtype=np.int64)   # high words of 64-bit sources
    OUT = np.zeros((7, 32), dtype=np.int64)       # d0 words 0..3, d1 words 4..5, d2 word 6
    ADDR = np.zeros(32, dtype=np.int64)
    SPACE = np.zeros(32, dtype=np.int64)
    wstate = np.zeros(nwarps, dtype=np.int64)     # 0 running, 1 at a barrier, 2 done
    hz_sb = hz_state[0]
    hz_rsb = hz_state[1]
    hz_issue = hz_state[2]
    hz_key = hz_state[3]
    hz_src = hz_state[4]
    hz_cyc = hz_state[5]
    hz_rown = hz_state[6]      # write scoreboard of the instruction that set a read scoreboard
    hz_rsrc = hz_state[7]      # and that instruction
    hz_lanes = hz_state[8]     # the lanes whose register the pending write-scoreboard producer writes
    hz_rlanes = hz_state[9]    # the lanes whose register the pending read-scoreboard reader reads
    stop = False

    for blk in range(cfg[C_BLOCK0], cfg[C_BLOCK1]):
        cx = blk % gx
        cy = (blk // gx) % gy
        cz = blk // (gx * gy)
        # ---- a fresh block ----
        for r in range(regs.shape[0]):
            for t in range(nthreads):
                regs[r, t] = 0
        for p in range(preds.shape[0]):
            for t in range(nthreads):
                preds[p, t] = 1 if p == 7 else 0
        for t in range(nwarps * 32):
            status[t] = ST_RUN if t < nthreads else ST_ABSENT
            pcs[t] = 0
        for w in range(nwarps):
            wstate[w] = 0
            for r in range(uregs.shape[1]):
                uregs[w, r] = 0
            for p in range(upreds.shape[1]):
                upreds[w, p] = 1 if p == 7 else 0
            for b in range(16):
                bregs[w, b] = 0
            if hazards:
                hz_cyc[w, 0] = 0
                for u in range(NUNITS):
                    hz_sb[w, u] = 0
                    hz_rsb[w, u] = 0
                    hz_rown[w, u] = 0
                    hz_key[w, u] = -1
        for i in range(shared_size):
            sh8[i] = 0
        for i in range(nthreads * local_size):
            lo8[i] = 0
        # ---- run the warps in turn until all are done ----
        while True:
            progressed = False
            for w in range(nwarps):
                if wstate[w] != 0:
                    continue
                tb = w * 32
                need = True
                mask = np.int64(0)
                parked = np.int64(0)
                pc = np.int64(0)
                wsteps = 0
                while True:
                    if need:
                        # ---- lanes waiting at BSYNC / WARPSYNC whose partners all arrived go on ----
                        exited = np.int64(0)
                        waiting = False
                        for lane in range(32):
                            st = status[tb + lane]
                            if st == ST_EXITED or st == ST_ABSENT:
                                exited |= np.int64(1) << lane
                            elif st == ST_BSYNC or st == ST_WSYNC:
                                waiting = True
                        if waiting:
                            # WARPSYNC: a thread goes on once every thread of its own mask
                            # waits at a WARPSYNC (found first, then all released together)
                            # (WARPSYNC.EXCLUSIVE: only the first such group; the next goes on
                            # when this one next leaves the scheduler a choice)
                            release = np.int64(0)
                            group = np.int64(-1)
                            for lane in range(32):
                                t = tb + lane
                                if status[t] == ST_WSYNC:
                                    need_mask = waitv[t] & ~exited & M32
                                    ok = True
                                    for l2 in range(32):
                                        if (need_mask >> l2) & 1 and status[tb + l2] != ST_WSYNC:
                                            ok = False
                                            break
                                    if ok and waitv[t] & WAIT_EXCLUSIVE:
                                        if group < 0:
                                            group = waitv[t]
                                        ok = waitv[t] == group
                                    if ok:
                                        release |= np.int64(1) << lane
                            for lane in range(32):
                                if (release >> lane) & 1:
                                    status[tb + lane] = ST_RUN
                                    pcs[tb + lane] += 1
                            for lane in range(32):
                                t = tb + lane
                                st = status[t]
                                if st == ST_BSYNC:
                                    need_mask = bregs[w, waitv[t]] & ~exited
                                    ok = True
                                    for l2 in range(32):
                                        if (need_mask >> l2) & 1:
                                            s2 = status[tb + l2]
                                            if s2 != st or (st == ST_BSYNC and waitv[tb + l2] != waitv[t]):
                                                ok = False
                                                break
                                    if ok:
                                        wv = waitv[t]
                                        for l2 in range(32):
                                            t2 = tb + l2
                                            if status[t2] == st and (((need_mask >> l2) & 1) or l2 == lane) \
                                                    and (st != ST_BSYNC or waitv[t2] == wv):
                                                status[t2] = ST_RUN
                                                pcs[t2] += 1
                        # ---- the lanes at the lowest PC run next ----
                        pc = np.int64(1) << 62
                        for lane in range(32):
                            t = tb + lane
                            if status[t] == ST_RUN and pcs[t] < pc:
                                pc = pcs[t]
                        if pc == np.int64(1) << 62:
                            at_bar = False
                            stuck = -1
                            for lane in range(32):
                                st = status[tb + lane]
                                if st == ST_BAR:
                                    at_bar = True
                                elif (st == ST_BSYNC or st == ST_WSYNC) and stuck < 0:
                                    stuck = lane
                            if at_bar:
                                wstate[w] = 1
                            elif stuck >= 0:
                                _fail(err, E_DEADLOCK, blk, tb + stuck, pcs[tb + stuck], 0, 0, 0, 0)
                                stop = True
                            else:
                                wstate[w] = 2
                            break
                        mask = np.int64(0)
                        parked = np.int64(0)
                        for lane in range(32):
                            t = tb + lane
                            if status[t] == ST_RUN:
                                if pcs[t] == pc:
                                    mask |= np.int64(1) << lane
                                else:
                                    parked |= np.int64(1) << lane
                        need = False
                        if hazards:
                            hz_cyc[w, 0] += 64
                    if wsteps >= slice_len:
                        for lane in range(32):
                            if (mask >> lane) & 1:
                                pcs[tb + lane] = pc
                        break
                    lane0 = 0
                    while not (mask >> lane0) & 1:
                        lane0 += 1
                    if pc < 0 or pc >= nprog:
                        _fail(err, E_BAD_PC, blk, tb + lane0, pc, pc * 16, 0, 0, 0)
                        stop = True
                        break
                    steps += 1
                    wsteps += 1
                    progressed = True
                    thread_steps += _popc(mask)
                    if steps > max_steps:
                        _fail(err, E_MAX_STEPS, blk, tb + lane0, pc, 0, 0, 0, 0)
                        stop = True
                        break
                    op = prog[pc, F_OP]
                    mod = prog[pc, F_MOD]
                    gk = prog[pc, F_GK]
                    if gk == 0:
                        emask = mask
                    elif gk == 1:
                        gn = prog[pc, F_GN]
                        gi = prog[pc, F_GI]
                        emask = np.int64(0)
                        for lane in range(32):
                            if (preds[gn, tb + lane] ^ gi) != 0:
                                emask |= np.int64(1) << lane
                        emask &= mask
                    else:
                        emask = mask if (upreds[w, prog[pc, F_GN]] ^ prog[pc, F_GI]) != 0 else np.int64(0)
                    if mod & M_UNIFORM_DST:
                        emask = emask & (-emask)
                    # ---- the hazard checker (one check per issue) ----
                    if hazards:
                        cyc = hz_cyc[w, 0]
                        wait = prog[pc, F_WAIT]
                        if wait != 0:
                            for u in range(NUNITS):
                                hz_sb[w, u] &= ~wait
                                # waiting for an instruction's result implies its reads are done
                                if (hz_rsb[w, u] & wait) != 0 or (hz_rown[w, u] & wait) != 0:
                                    hz_rsb[w, u] = 0
                                    hz_rown[w, u] = 0
                        cls = hz[pc, HZ_CLS]
                        for k in range(hz[pc, HZ_NR]):
                            e = hz[pc, HZ_R + k]
                            u = e & 1023
                            role = e >> 10
                            if hz_sb[w, u] != 0 and (hz_lanes[w, u] & emask) != 0:
                                # (lanes of another group of a divergent warp read their own registers)
                                _hz_record(hz_out, hz_count, pc, u, HZ_SB, hz_src[w, u], 0, 0)
                            elif hz_key[w, u] >= 0 and cls >= 0:
                                need_c = hz_lat[hz_key[w, u], cls, role]
                                if cyc - hz_issue[w, u] < need_c:
                                    _hz_record(hz_out, hz_count, pc, u, HZ_STALL, hz_src[w, u],
                                               cyc - hz_issue[w, u], need_c)
                        var = hz[pc, HZ_VAR]
                        wbar = prog[pc, F_WBAR]
                        for k in range(hz[pc, HZ_NW]):
                            e = hz[pc, HZ_W + k]
                            u = e & 1023
                            if hz_rsb[w, u] != 0 and (hz_rlanes[w, u] & emask) != 0:
                                # (lanes of another group of a divergent warp write their own
                                # registers: the pending read is of the reader's lanes)
                                # an overwrite queued behind the reader on one in-order queue
                                # (SHFL after SHFL) cannot land before the read
                                q = hz[pc, HZ_Q]
                                if q < 0 or hz[hz_rsrc[w, u], HZ_Q] != q:
                                    _hz_record(hz_out, hz_count, pc, u, HZ_WAR, hz_rsrc[w, u], 0, 0)
                                hz_rsb[w, u] = 0
                            if var != 0:
                                hz_sb[w, u] = (np.int64(1) << wbar) if wbar != 7 else 0
                                hz_lanes[w, u] = emask if u < 264 else np.int64(-1)   # UR/UP: warp-wide
                                hz_key[w, u] = -1
                            else:
                                hz_sb[w, u] = 0
                                hz_key[w, u] = e >> 10
                            hz_issue[w, u] = cyc
                            hz_src[w, u] = pc
                        rbar = prog[pc, F_RBAR]
                        if rbar != 7:
                            for k in range(hz[pc, HZ_NR]):
                                u = hz[pc, HZ_R + k] & 1023
                                if u < 256:        # registers read late (not the guard, not predicates)
                                    hz_rlanes[w, u] = emask if hz_rsb[w, u] == 0 else hz_rlanes[w, u] | emask
                                    hz_rsb[w, u] |= np.int64(1) << rbar
                                    hz_rown[w, u] = (np.int64(1) << wbar) if wbar != 7 else 0
                                    hz_rsrc[w, u] = pc
                        stall = prog[pc, F_STALL]
                        hz_cyc[w, 0] = cyc + (stall if stall > 0 else 1)
                    npc = pc + 1
                    # ---- fetch the register/immediate/predicate sources of all 32 lanes ----
                    for s in range(prog[pc, F_NSRC]):
                        k = prog[pc, F_S + 3 * s]
                        v = prog[pc, F_S + 3 * s + 1]
                        f = prog[pc, F_S + 3 * s + 2]
                        if k == K_R:
                            for lane in range(32):
                                SRC[s, lane] = regs[v, tb + lane]
                            if f & FL_WIDE:
                                for lane in range(32):
                                    SRCH[s, lane] = regs[v + 1, tb + lane]
                        elif k == K_IMM:
                            x = v & M32
                            y = (v >> 32) & M32
                            for lane in range(32):
                                SRC[s, lane] = x
                                SRCH[s, lane] = y
                        elif k == K_UR:
                            x = uregs[w, v]
                            y = uregs[w, v + 1]
                            for lane in range(32):
                                SRC[s, lane] = x
                                SRCH[s, lane] = y
                        elif k == K_P:
                            inv = (f >> 2) & 1
                            for lane in range(32):
                                SRC[s, lane] = preds[v, tb + lane] ^ inv
                        elif k == K_UP:
                            x = upreds[w, v] ^ ((f >> 2) & 1)
                            for lane in range(32):
                                SRC[s, lane] = x
                    f0 = prog[pc, F_S + 2]
                    f1 = prog[pc, F_S + 5]
                    f2 = prog[pc, F_S + 8]
                    d0k = prog[pc, F_D0K]
                    # =====================================================================
                    # Integer and logic
                    # =====================================================================
                    if op == OP_IMAD:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = _iflags(SRC[0, lane], f0)
                                b = _iflags(SRC[1, lane], f1)
                                cin = SRC[3, lane] if mod & M_X else 0
                                if mod & M_WIDE:
                                    c = (SRCH[2, lane] << 32) | SRC[2, lane]
                                    if f2 & FL_INV:
                                        c = ~c
                                    if f2 & FL_NEG:     # IMAD.WIDE.U32 R8, R7, R10, -R8: -c adds ~c + 1
                                        c = ~c
                                    if mod & M_U32:
                                        p = a * b
                                    else:
                                        p = _sext32(a) * _sext32(b)
                                    lo = (p & M32) + (c & M32) + cin + (1 if f2 & FL_NEG else 0)
                                    hi = ((p >> 32) & M32) + ((c >> 32) & M32) + (lo >> 32)
                                    OUT[0, lane] = lo & M32
                                    OUT[1, lane] = hi & M32
                                    OUT[4, lane] = hi >> 32
                                elif mod & M_HI:
                                    # IMAD.HI d, a, b, c: the high word of a*b + the pair c:c+1
                                    c = (SRCH[2, lane] << 32) | SRC[2, lane]
                                    if f2 & FL_INV:
                                        c = ~c
                                    if f2 & FL_NEG:
                                        c = ~c         # -c adds ~c + 1, as IADD3 does, so the carry is right
                                    if mod & M_U32:
                                        p = a * b
                                    else:
                                        p = _sext32(a) * _sext32(b)
                                    lo = (p & M32) + (c & M32) + cin + (1 if f2 & FL_NEG else 0)
                                    hi = ((p >> 32) & M32) + ((c >> 32) & M32) + (lo >> 32)
                                    OUT[0, lane] = hi & M32
                                    OUT[4, lane] = (hi >> 32) & 1
                                else:
                                    c = _iflags(SRC[2, lane], f2)
                                    sm = ((a * b) & M32) + c + cin
                                    OUT[0, lane] = sm & M32
                                    OUT[4, lane] = (sm >> 32) & 1
                    elif op == OP_MOV:
                        for lane in range(32):
                            OUT[0, lane] = SRC[0, lane]
                            OUT[1, lane] = SRCH[0, lane]
                        if mod & (M_MOV_B8 | M_MOV_B16):
                            for lane in range(32):
                                x = SRC[0, lane] & (0xFF if mod & M_MOV_B8 else 0xFFFF)
                                if mod & M_SIGNED:
                                    top = 0x80 if mod & M_MOV_B8 else 0x8000
                                    if x >= top:
                                        x |= M32 ^ (2 * top - 1)
                                OUT[0, lane] = x
                    elif op == OP_IADD3:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = _addend(SRC[0, lane], f0)
                                b = _addend(SRC[1, lane], f1)
                                c = _addend(SRC[2, lane], f2)
                                sm = a + b + c
                                if mod & M_X:
                                    sm += SRC[3, lane] + SRC[4, lane]
                                carry = sm >> 32
                                OUT[0, lane] = sm & M32
                                OUT[4, lane] = 1 if carry >= 1 else 0
                                OUT[6, lane] = 1 if carry >= 2 else 0
                    elif op == OP_LOP3:
                        lut = SRC[3, 0]
                        pred_dst = d0k == K_P or d0k == K_UP
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                r = _lut3(lut, _iflags(SRC[0, lane], f0), _iflags(SRC[1, lane], f1),
                                          _iflags(SRC[2, lane], f2))
                                if pred_dst:
                                    OUT[0, lane] = (1 if r != 0 else 0) | SRC[4, lane]
                                    OUT[4, lane] = r
                                else:
                                    OUT[0, lane] = r
                    elif op == OP_PLOP3:
                        lut0 = SRC[3, 0]
                        lut1 = SRC[4, 0]
                        for lane in range(32):
                            # a register source (R.SIGN, ptxas's add.sat) reads as its sign bit
                            a = (SRC[0, lane] >> 31) & 1 if ((f0 >> SEL_SHIFT) & 15) == SEL_SIGN else SRC[0, lane] & 1
                            b = (SRC[1, lane] >> 31) & 1 if ((f1 >> SEL_SHIFT) & 15) == SEL_SIGN else SRC[1, lane] & 1
                            c = (SRC[2, lane] >> 31) & 1 if ((f2 >> SEL_SHIFT) & 15) == SEL_SIGN else SRC[2, lane] & 1
                            idx = (a << 2) | (b << 1) | c
                            OUT[0, lane] = (lut0 >> idx) & 1
                            OUT[4, lane] = (lut1 >> idx) & 1
                    elif op == OP_ISETP:
                        cmp = mod & M_CMP_MASK
                        bop = (mod >> M_BOP_SHIFT) & 3
                        unsigned = (mod & M_SETP_U32) != 0
                        ex = (mod & M_SETP_EX) != 0
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = _iflags(SRC[0, lane], f0)
                                b = _iflags(SRC[1, lane], f1)
                                pacc = SRC[2, lane]
                                if ex:
                                    low = SRC[3, lane] == 1
                                    eq = a == b
                                    if cmp == CMP_EQ:
                                        res = eq and low
                                    elif cmp == CMP_NE:
                                        res = (not eq) or low
                                    elif cmp == CMP_LT or cmp == CMP_LE:
                                        res = _icmp(a, b, CMP_LT, unsigned) or (eq and low)
                                    elif cmp == CMP_GT or cmp == CMP_GE:
                                        res = _icmp(a, b, CMP_GT, unsigned) or (eq and low)
                                    else:
                                        res = cmp == CMP_T
                                else:
                                    res = _icmp(a, b, cmp, unsigned)
                                r = 1 if res else 0
                                OUT[0, lane] = _bop(r, pacc, bop)
                                OUT[4, lane] = _bop(r ^ 1, pacc, bop)
                    elif op == OP_LEA:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = _iflags(SRC[0, lane], f0)
                                b = _addend(SRC[1, lane], f1)
                                cin = 0
                                if (mod & M_HI) and not (mod & M_SX32):
                                    # LEA.HI d, a, b, c, s: high word of (c:a << s), plus b
                                    c = _iflags(SRC[2, lane], f2)
                                    sh = SRC[3, lane] & 63
                                    x = ((c & M32) << 32) | (a & M32)
                                    part = ((x << sh) >> 32) & M32
                                    if mod & M_X:
                                        cin = SRC[4, lane]
                                elif mod & M_HI:
                                    sh = SRC[2, lane] & 63
                                    part = ((_sext32(a) << sh) >> 32) & M32
                                    if mod & M_X:
                                        cin = SRC[3, lane]
                                else:
                                    sh = SRC[2, lane] & 63
                                    # -a: the shifted value negated as an adder does
                                    part = _addend((_iflags(SRC[0, lane], f0 & ~FL_NEG) << sh) & M32, f0 & FL_NEG)
                                    if mod & M_X:
                                        cin = SRC[3, lane]
                                sm = part + b + cin
                                OUT[0, lane] = sm & M32
                                OUT[4, lane] = (sm >> 32) & 1
                    elif op == OP_SHF:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                OUT[0, lane] = _shf(SRC[0, lane], SRC[1, lane], SRC[2, lane], mod)
                    elif op == OP_SEL:
                        for lane in range(32):
                            if SRC[2, lane]:
                                OUT[0, lane] = _iflags(SRC[0, lane], f0)
                            else:
                                OUT[0, lane] = _iflags(SRC[1, lane], f1)
                    elif op == OP_FSEL:
                        for lane in range(32):
                            if SRC[2, lane]:
                                OUT[0, lane] = _fflags(SRC[0, lane], f0)
                            else:
                                OUT[0, lane] = _fflags(SRC[1, lane], f1)
                    elif op == OP_IMNMX:
                        for lane in range(32):
                            a = _iflags(SRC[0, lane], f0)
                            b = _iflags(SRC[1, lane], f1)
                            if mod & M_U32:
                                less = a < b
                            else:
                                less = _sext32(a) < _sext32(b)
                            if SRC[2, lane]:
                                OUT[0, lane] = a if less else b
                            else:
                                OUT[0, lane] = b if less else a
                    elif op == OP_VINT:
                        # sm_90: VIADD a, b / VIMNMX a, b, p / VIMNMX3 a, b, c, p / VIADDMNMX a, b, c, p
                        kind = mod & 3
                        halves = (mod & V_16X2) != 0
                        psrc = 2 if kind == V_MNMX else 3
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = _vneg(SRC[0, lane], f0, halves)
                                b = _vneg(SRC[1, lane], f1, halves)
                                c = _vneg(SRC[2, lane], f2, halves) if kind >= V_MNMX3 else np.int64(0)
                                use_min = kind != V_ADD and SRC[psrc, lane] != 0
                                if halves:
                                    r = _vint1(a & 0xFFFF, b & 0xFFFF, c & 0xFFFF, use_min, mod, 16) | \
                                        _vint1(a >> 16, b >> 16, c >> 16, use_min, mod, 16) << 16
                                else:
                                    r = _vint1(a, b, c, use_min, mod, 32)
                                OUT[0, lane] = r
                    elif op == OP_IABS or op == OP_POPC or op == OP_FLO or op == OP_BREV:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = _iflags(SRC[0, lane], f0)
                                if op == OP_IABS:
                                    r = abs(_sext32(a)) & M32
                                elif op == OP_POPC:
                                    r = _popc(a)
                                elif op == OP_FLO:
                                    n = _flo(a, (mod & 2) != 0)
                                    if n < 0:
                                        r = M32
                                    elif mod & 1:
                                        r = 31 - n
                                    else:
                                        r = n
                                else:
                                    r = _brev(a)
                                OUT[0, lane] = r
                    elif op == OP_PRMT:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                OUT[0, lane] = _prmt(SRC[0, lane], SRC[1, lane], SRC[2, lane], mod & 7)
                    elif op == OP_SGXT:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = SRC[0, lane]
                                nb = SRC[1, lane]
                                if nb >= 32 or nb == 0:
                                    r = a if nb >= 32 else 0
                                else:
                                    r = a & ((np.int64(1) << nb) - 1)
                                    if not (mod & 1) and (r >> (nb - 1)) & 1:
                                        r |= (~((np.int64(1) << nb) - 1)) & M32
                                OUT[0, lane] = r
                    elif op == OP_VABSDIFF or op == OP_VABSDIFF4:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = SRC[0, lane]
                                b = SRC[1, lane]
                                c = SRC[2, lane]
                                if op == OP_VABSDIFF:
                                    if mod & M_U32:
                                        r = abs(a - b) + c
                                    else:
                                        r = abs(_sext32(a) - _sext32(b)) + c
                                else:
                                    r = 0
                                    for i in range(4):
                                        x = (a >> (8 * i)) & 0xFF
                                        y = (b >> (8 * i)) & 0xFF
                                        if not (mod & M_U32):
                                            x = x - 256 if x >= 128 else x
                                            y = y - 256 if y >= 128 else y
                                        r |= (abs(x - y) & 0xFF) << (8 * i)
                                    r = r + c
                                OUT[0, lane] = r & M32
                    elif op == OP_P2R:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                m = SRC[2, lane] & 0x7F
                                pr = np.int64(0)
                                for p in range(7):
                                    pr |= np.int64(preds[p, tb + lane]) << p
                                OUT[0, lane] = (pr & m) | (SRC[1, lane] & ~m & M32)
                    elif op == OP_R2P:
                        m = SRC[1, 0] & 0x7F
                        sel = (f0 >> SEL_SHIFT) & 15
                        shift = 8 * (sel - SEL_B1 + 1) if sel >= SEL_B1 else 0
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                x = SRC[0, lane] >> shift
                                for p in range(7):
                                    if (m >> p) & 1:
                                        preds[p, tb + lane] = (x >> p) & 1
                    elif op == OP_S2R or op == OP_CS2R:
                        sid = prog[pc, F_S + 1]
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                x = _sreg(sid, tb + lane, lane, bx, by, cx, cy, cz, nthreads, steps)
                                if op == OP_CS2R and (sid == 13 or sid == 23 or sid == 15):
                                    x = steps
                                elif sid == 19:           # SR_SWINHI: the shared window's high word
                                    x = swin >> 32
                                elif sid == 20:           # SR_SWINLO
                                    x = swin & M32
                                OUT[0, lane] = x & M32
                                OUT[1, lane] = (x >> 32) & M32 if op == OP_CS2R else 0
                    elif op == OP_B2R:
                        for lane in range(32):
                            OUT[0, lane] = bar_result[0]
                            OUT[4, lane] = 1 if bar_result[0] != 0 else 0
                    # =====================================================================
                    # Floating point
                    # =====================================================================
                    elif op == OP_FADD:
                        rnd = mod & M_RND_MASK
                        ftz = (mod & M_FTZ) != 0
                        sat = (mod & M_SAT) != 0
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                OUT[0, lane] = fp.fadd32(_fflags(SRC[0, lane], f0), _fflags(SRC[1, lane], f1),
                                                         rnd, ftz, sat)
                    elif op == OP_FMUL:
                        rnd = mod & M_RND_MASK
                        ftz = (mod & M_FTZ) != 0
                        sat = (mod & M_SAT) != 0
                        scale = (mod >> M_FSCALE_SHIFT) & 7
                        if scale >= 4:
                            scale -= 8
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                OUT[0, lane] = fp.fmul32(_fflags(SRC[0, lane], f0), _fflags(SRC[1, lane], f1),
                                                         rnd, ftz, sat, scale)
                    elif op == OP_FFMA:
                        rnd = mod & M_RND_MASK
                        ftz = (mod & M_FTZ) != 0
                        sat = (mod & M_SAT) != 0
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                OUT[0, lane] = fp.ffma32(_fflags(SRC[0, lane], f0), _fflags(SRC[1, lane], f1),
                                                         _fflags(SRC[2, lane], f2), rnd, ftz, sat)
                    elif op == OP_FMNMX:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                OUT[0, lane] = fp.fmnmx32(_fflags(SRC[0, lane], f0), _fflags(SRC[1, lane], f1),
                                                          SRC[2, lane] == 1, (mod & M_FTZ) != 0, (mod & M_NAN) != 0)
                    elif op == OP_FSETP or op == OP_DSETP or op == OP_HSETP2:
                        cmp = mod & M_CMP_MASK
                        bop = (mod >> M_BOP_SHIFT) & 3
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                pacc = SRC[2, lane]
                                if op == OP_FSETP:
                                    a = _fflags(SRC[0, lane], f0)
                                    b = _fflags(SRC[1, lane], f1)
                                    if mod & M_FTZ:
                                        a = fp.ftz32(a)
                                        b = fp.ftz32(b)
                                    r = 1 if fp.fcompare(np.float64(f32(a)), np.float64(f32(b)), cmp) else 0
                                    r2 = r ^ 1
                                elif op == OP_DSETP:
                                    a = _dflags((SRCH[0, lane] << 32) | SRC[0, lane], f0)
                                    b = _dflags((SRCH[1, lane] << 32) | SRC[1, lane], f1)
                                    if cmp == CMP_MIN or cmp == CMP_MAX:
                                        take, isnan = fp.dmnmx_select(a, b, cmp == CMP_MIN)
                                        r = 1 if take else 0
                                        r2 = 1 if isnan else 0
                                    else:
                                        r = 1 if fp.fcompare(f64(a), f64(b), cmp) else 0
                                        r2 = r ^ 1
                                else:
                                    a = SRC[0, lane]
                                    b = SRC[1, lane]
                                    bf = (mod & M_BF16) != 0
                                    r = 1 if fp.fcompare(_hval(a, f0, False, bf), _hval(b, f1, False, bf), cmp) else 0
                                    r2 = 1 if fp.fcompare(_hval(a, f0, True, bf), _hval(b, f1, True, bf), cmp) else 0
                                OUT[0, lane] = _bop(r, pacc, bop)
                                OUT[4, lane] = _bop(r2, pacc, bop)
                    elif op == OP_FCHK:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = _fflags(SRC[0, lane], f0)
                                b = _fflags(SRC[1, lane], f1)
                                OUT[0, lane] = 1 if fp.fchk_divide(a, b) else 0
                    elif op == OP_FRND:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                if mod & M_F64:
                                    raw = (SRCH[0, lane] << 32) | SRC[0, lane]
                                    x = f64(_dflags(raw, f0))
                                    r = fp.nan_result64(raw, 0, 0) if x != x else bits64(fp.frnd(x, mod & M_RND_MASK))
                                    OUT[0, lane] = r & M32
                                    OUT[1, lane] = (r >> 32) & M32
                                else:
                                    a = _fflags(SRC[0, lane], f0)
                                    if mod & M_FTZ:
                                        a = fp.ftz32(a)
                                    x = np.float64(f32(a))
                                    if x != x:
                                        OUT[0, lane] = fp.NAN32
                                    elif x == 0.0:
                                        OUT[0, lane] = a
                                    else:
                                        OUT[0, lane] = fp.round32(fp.frnd(x, mod & M_RND_MASK), 0.0, 0)
                    elif op == OP_MUFU:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                if mod & M_MUFU_F16:
                                    OUT[0, lane] = fp.mufu16(mod & 15, SRC[0, lane] & 0xFFFF)
                                else:
                                    OUT[0, lane] = fp.mufu(mod, _fflags(SRC[0, lane], f0))
                    elif op == OP_F2I:
                        itype = (mod >> IT_SHIFT) & 7
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                if mod & M_SRCINT:      # I2I.SAT: the integer's exact value
                                    x = np.float64(_sext32(SRC[0, lane]) if mod & M_SRC_S else SRC[0, lane] & M32)
                                elif mod & M_F64:
                                    x = f64(_dflags((SRCH[0, lane] << 32) | SRC[0, lane], f0))
                                elif mod & M_SRC16:
                                    x = _hval16(SRC[0, lane], f0, fp.BF16 if mod & M_BF16 else fp.F16)
                                else:
                                    a = _fflags(SRC[0, lane], f0)
                                    if mod & M_FTZ:
                                        a = fp.ftz32(a)
                                    x = np.float64(f32(a))
                                r = fp.float_to_int(x, mod & M_RND_MASK, itype, (mod & M_NTZ) != 0)
                                OUT[0, lane] = r & M32
                                OUT[1, lane] = (r >> 32) & M32
                    elif op == OP_I2F:
                        itype = (mod >> IT_SHIFT) & 7
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                if itype >= IT_U64:
                                    a = (SRCH[0, lane] << 32) | SRC[0, lane]
                                else:
                                    a = _iflags(SRC[0, lane], f0)
                                    sel = (f0 >> SEL_SHIFT) & 15     # .H1, .B1..B3: a part of the register
                                    if sel == SEL_H1:
                                        a >>= 16
                                    elif sel >= SEL_B1 and sel <= SEL_B3:
                                        a >>= 8 * (sel - SEL_B1 + 1)
                                if mod & M_DST64:
                                    r = fp.int_to_f64(a, itype, mod & M_RND_MASK)
                                elif mod & M_DST16:
                                    hi, lo = fp.int_value(a, itype)
                                    s_, t_ = fp.two_sum(hi, lo)
                                    r = np.int64(fp.round16(s_, t_, mod & M_RND_MASK,
                                                            fp.BF16 if mod & M_BF16 else fp.F16, False))
                                else:
                                    r = fp.int_to_f32(a, itype, mod & M_RND_MASK)
                                OUT[0, lane] = r & M32
                                OUT[1, lane] = (r >> 32) & M32
                    elif op == OP_F2F:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                src_bf16 = (mod & M_SRC_BF16) != 0      # (M_BF16: the destination's format)
                                if mod & M_F64:
                                    x = f64(_dflags((SRCH[0, lane] << 32) | SRC[0, lane], f0))
                                elif mod & M_SRC16:
                                    x = _hval16(SRC[0, lane], f0, fp.BF16 if src_bf16 else fp.F16)
                                else:
                                    a = _fflags(SRC[0, lane], f0)
                                    if mod & M_FTZ:
                                        a = fp.ftz32(a)
                                    x = np.float64(f32(a))
                                if x != x and mod & M_DST64:     # the payload, widened (fp's NaN rules)
                                    if mod & M_SRC16:
                                        r = fp.widen_nan64(SRC[0, lane] & 0xFFFF, 7 if src_bf16 else 10)
                                    else:
                                        r = fp.widen_nan64(SRC[0, lane] & M32, 23)
                                elif x != x and mod & M_F64:    # f64 to a narrower float: sign, top of payload, quieted
                                    r = fp.narrow_nan((SRCH[0, lane] << 32) | SRC[0, lane],
                                                      (fp.BF16 if mod & M_BF16 else fp.F16) if mod & M_DST16 else -1)
                                elif mod & M_DST64:
                                    r = bits64(x)
                                elif mod & M_DST16:
                                    r = np.int64(fp.round16(x, 0.0, mod & M_RND_MASK,
                                                            fp.BF16 if mod & M_BF16 else fp.F16, False))
                                else:
                                    r = fp.round32(x, 0.0, mod & M_RND_MASK)
                                    if mod & M_FTZ:
                                        r = fp.ftz32(r)
                                OUT[0, lane] = r & M32
                                OUT[1, lane] = (r >> 32) & M32
                    elif op == OP_DADD or op == OP_DMUL or op == OP_DFMA:
                        rnd = mod & M_RND_MASK
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                ra = (SRCH[0, lane] << 32) | SRC[0, lane]
                                rb = (SRCH[1, lane] << 32) | SRC[1, lane]
                                rc = np.int64(0)
                                a = _dflags(ra, f0)
                                b = _dflags(rb, f1)
                                if op == OP_DADD:
                                    r = fp.dadd(a, b, rnd)
                                elif op == OP_DMUL:
                                    r = fp.dmul(a, b, rnd)
                                else:
                                    rc = (SRCH[2, lane] << 32) | SRC[2, lane]
                                    r = fp.dfma(a, b, _dflags(rc, f2), rnd)
                                if fp.is_nan64(r):
                                    r = fp.nan_result64(ra, rb, rc)
                                OUT[0, lane] = r & M32
                                OUT[1, lane] = (r >> 32) & M32
                    elif op == OP_LEPC:
                        # LEPC Rd: the instruction's own address (sm_90's LEPC Rd, T: T's)
                        v = (prog[pc, F_AUX2] if prog[pc, F_S] == K_TGT else pc) * 16
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                OUT[0, lane] = v & M32
                                OUT[4, lane] = 0
                                OUT[1, lane] = v >> 32
                    elif op == OP_QSPC:
                        # the predicate: is the 64-bit generic address in the window of the
                        # space asked (mod); the register result (RZ in ptxas's code) is 0
                        qbase = prog[pc, F_S + 1]
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                t = tb + lane
                                addr = np.int64(0)
                                if qbase >= 0:
                                    addr = regs[qbase, t] | (regs[qbase + 1, t] << 32)
                                addr += prog[pc, F_IMM]
                                if mod == SPACE_SHARED:
                                    inside = addr >= swin and addr < swin + WINDOW
                                elif mod == SPACE_LOCAL:
                                    inside = addr >= lwin and addr < lwin + WINDOW
                                else:
                                    inside = not (addr >= swin and addr < swin + WINDOW) and \
                                        not (addr >= lwin and addr < lwin + WINDOW)
                                OUT[0, lane] = 1 if inside else 0
                                OUT[4, lane] = 0
                    elif op == OP_BMSK:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                pos = SRC[0, lane] & M32
                                width = SRC[1, lane] & M32
                                if mod & 1:
                                    pos &= 31
                                    width &= 31
                                else:
                                    pos = min(pos, 32)
                                    width = min(width, 32)
                                OUT[0, lane] = (((np.int64(1) << width) - 1) << pos) & M32
                    elif op == OP_HADD2 or op == OP_HFMA2 or op == OP_HMNMX2 or op == OP_HMUL2:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                a = SRC[0, lane]
                                b = SRC[1, lane]
                                c = SRC[2, lane]
                                r = np.int64(0)
                                bf = (mod & M_BF16) != 0
                                ftz = (mod & M_FTZ) != 0 and op != OP_HMNMX2
                                for half in range(2):
                                    hi = half == 1
                                    x = _hval(a, f0, hi, bf)
                                    y = _hval(b, f1, hi, bf)
                                    if ftz:
                                        x = fp.ftz_half(x, bf)
                                        y = fp.ftz_half(y, bf)
                                    e = 0.0
                                    if op == OP_HMNMX2:
                                        if (mod & M_NAN) and (x != x or y != y):
                                            sm = math.nan       # min/max.NaN: the canonical NaN
                                        elif x != x:
                                            sm = y
                                        elif y != y:
                                            sm = x
                                        else:
                                            sm = min(x, y) if c == 1 else max(x, y)
                                    elif op == OP_HADD2:
                                        sm, e = fp.two_sum(x, y)
                                    elif op == OP_HMUL2:
                                        sm = x * y
                                    else:
                                        z = _hval(c, f2, hi, bf)
                                        sm, e = fp.two_sum(x * y, fp.ftz_half(z, bf) if ftz else z)
                                    if mod & M_SAT:
                                        sm = 0.0 if not (sm > 0.0) else (1.0 if sm > 1.0 else sm)
                                        e = 0.0
                                    if mod & M_DST64:   # .F32: one f32 result from the low lane
                                        if half == 0:
                                            r = fp.round32(sm, e, 0)
                                    else:
                                        if mod & M_RELU and not (sm > 0.0 or (sm == 0.0 and e > 0.0)) and sm == sm:
                                            sm, e = 0.0, 0.0
                                        h = fp.round_half(sm, e, RND_RN, bf)
                                        if ftz:
                                            h = fp.ftz16(h, bf)
                                        r |= np.int64(h) << (16 * half)
                                OUT[0, lane] = r
                    elif op == OP_F2FP:
                        fmt = fp.BF16 if mod & M_BF16 else fp.F16
                        rnd = mod & M_RND_MASK
                        sat = (mod & M_SATFINITE) != 0
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                xa = np.float64(f32(_fflags(SRC[0, lane], f0)))
                                xb = np.float64(f32(_fflags(SRC[1, lane], f1)))
                                if mod & M_RELU:        # negative (and -0) to +0; NaN stays NaN
                                    xa = 0.0 if xa <= 0.0 else xa
                                    xb = 0.0 if xb <= 0.0 else xb
                                ha = fp.round16(xa, 0.0, rnd, fmt, sat)
                                if mod & M_MERGE_C:     # one conversion, into the low half
                                    OUT[0, lane] = (SRC[1, lane] & 0xFFFF0000) | ha
                                else:
                                    hb = fp.round16(xb, 0.0, rnd, fmt, sat)
                                    OUT[0, lane] = (np.int64(ha) << 16) | hb
                    # =====================================================================
                    # Memory
                    # =====================================================================
                    elif (op == OP_LDG or op == OP_STG or op == OP_LD or op == OP_ST or op == OP_LDS
                          or op == OP_STS or op == OP_LDL or op == OP_STL or op == OP_ATOM or op == OP_RED):
                        atomic = op == OP_ATOM or op == OP_RED
                        size = mod & 31
                        store = op == OP_STG or op == OP_ST or op == OP_STS or op == OP_STL or op == OP_RED
                        if op == OP_LDG or op == OP_STG:
                            space0 = SPACE_GLOBAL
                        elif op == OP_LDS or op == OP_STS:
                            space0 = SPACE_SHARED
                        elif op == OP_LDL or op == OP_STL:
                            space0 = SPACE_LOCAL
                        elif atomic:
                            space0 = (mod >> 16) & 3
                        else:
                            space0 = SPACE_GENERIC
                        base = prog[pc, F_S + 1]
                        off_imm = prog[pc, F_IMM]
                        ub = prog[pc, F_AUX]
                        scale = (f0 >> SCALE_SHIFT) & 15
                        wide_base = (f0 & MEM_BASE64) != 0
                        # addresses, spaces and bounds for every active lane first
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                t = tb + lane
                                if base < 0:
                                    addr = np.int64(0)
                                elif wide_base:
                                    addr = regs[base, t] | (regs[base + 1, t] << 32)
                                else:
                                    addr = regs[base, t] << scale
                                if ub >= 0:
                                    if space0 == SPACE_SHARED or space0 == SPACE_LOCAL:
                                        addr += uregs[w, ub]
                                    else:
                                        addr += uregs[w, ub] | (uregs[w, ub + 1] << 32)
                                addr += off_imm
                                space = space0
                                if space == SPACE_GENERIC:
                                    space = SPACE_GLOBAL
                                    if addr >= swin and addr < swin + WINDOW:
                                        space = SPACE_SHARED
                                        addr -= swin
                                    elif addr >= lwin and addr < lwin + WINDOW:
                                        space = SPACE_LOCAL
                                        addr -= lwin
                                elif space != SPACE_GLOBAL:
                                    addr &= M32
                                if addr & (size - 1):
                                    _fail(err, E_MISALIGNED, blk, t, pc, addr, size, space, 1 if (store or atomic) else 0)
                                    stop = True
                                    break
                                if space == SPACE_GLOBAL:
                                    off = addr - gbase
                                    if off < clo or off + size > chi:
                                        i = _find_alloc(allocs, nalloc, off, size)
                                        if i < 0:
                                            _fail(err, E_OOB, blk, t, pc, addr, size, space,
                                                  1 if (store or atomic) else 0)
                                            stop = True
                                            break
                                        clo = allocs[i, 0]
                                        chi = clo + allocs[i, 1]
                                elif space == SPACE_SHARED:
                                    off = addr
                                    if off + size > shared_size:
                                        _fail(err, E_OOB, blk, t, pc, addr, size, space, 1 if (store or atomic) else 0)
                                        stop = True
                                        break
                                else:
                                    off = addr
                                    if off + size > local_size:
                                        _fail(err, E_OOB, blk, t, pc, addr, size, space, 1 if (store or atomic) else 0)
                                        stop = True
                                        break
                                    off += t * local_size
                                ADDR[lane] = off
                                SPACE[lane] = space
                        if stop:
                            break
                        if atomic:
                            kind = (mod >> AT_SHIFT) & 15
                            typ = (mod >> AT_TYPE_SHIFT) & 7
                            # `ATOM.E.ADD.F32 P1, RZ, [R4.64], R11`: a generic atomic that writes
                            # a predicate acts on global addresses only and says whether it did;
                            # ptxas's code then handles shared (QSPC.E.S, a CAS loop) and local
                            # addresses itself.  With PT there, it acts on any space.
                            pdst = prog[pc, F_D0K] == K_P and prog[pc, F_D0] != 8     # 8: PT, discarded
                            for lane in range(32):
                                if (emask >> lane) & 1:
                                    idx = ADDR[lane] >> 2
                                    space = SPACE[lane]
                                    if pdst and space != SPACE_GLOBAL:
                                        OUT[0, lane] = 0
                                        OUT[4, lane] = 0
                                        OUT[5, lane] = 0
                                        continue
                                    if space == SPACE_GLOBAL:
                                        old = np.int64(heap32[idx])
                                        if size == 8:
                                            old |= np.int64(heap32[idx + 1]) << 32
                                    elif space == SPACE_SHARED:
                                        old = np.int64(sh32[idx])
                                        if size == 8:
                                            old |= np.int64(sh32[idx + 1]) << 32
                                    else:
                                        old = np.int64(lo32[idx])
                                        if size == 8:
                                            old |= np.int64(lo32[idx + 1]) << 32
                                    if kind == AT_POPC_INC:
                                        val = np.int64(1)
                                        val2 = np.int64(0)
                                    elif size == 8:
                                        val = (SRCH[1, lane] << 32) | SRC[1, lane]
                                        val2 = (SRCH[2, lane] << 32) | SRC[2, lane]
                                    else:
                                        val = SRC[1, lane]
                                        val2 = SRC[2, lane]
                                    new = _atomic(kind, typ, old, val, val2, size)
                                    lo_w = np.uint32(new & M32)
                                    hi_w = np.uint32((new >> 32) & M32)
                                    if space == SPACE_GLOBAL:
                                        heap32[idx] = lo_w
                                        if size == 8:
                                            heap32[idx + 1] = hi_w
                                    elif space == SPACE_SHARED:
                                        sh32[idx] = lo_w
                                        if size == 8:
                                            sh32[idx + 1] = hi_w
                                    else:
                                        lo32[idx] = lo_w
                                        if size == 8:
                                            lo32[idx + 1] = hi_w
                                    if kind == AT_CAST:
                                        old = np.int64(1) if new == val2 and old == val else np.int64(0)
                                    OUT[0, lane] = 1 if pdst else old & M32
                                    OUT[1, lane] = (old >> 32) & M32
                                    OUT[4, lane] = old & M32
                                    OUT[5, lane] = (old >> 32) & M32
                        elif store:
                            dreg = prog[pc, F_S + 4]
                            dkind = prog[pc, F_S + 3]
                            for lane in range(32):
                                if (emask >> lane) & 1:
                                    off = ADDR[lane]
                                    space = SPACE[lane]
                                    x = SRC[1, lane]
                                    if size <= 4:
                                        if space == SPACE_GLOBAL:
                                            if size == 4:
                                                heap32[off >> 2] = np.uint32(x)
                                            elif size == 1:
                                                heap8[off] = np.uint8(x & 0xFF)
                                            else:
                                                heap16[off >> 1] = np.uint16(x & 0xFFFF)
                                        elif space == SPACE_SHARED:
                                            if size == 4:
                                                sh32[off >> 2] = np.uint32(x)
                                            elif size == 1:
                                                sh8[off] = np.uint8(x & 0xFF)
                                            else:
                                                sh16[off >> 1] = np.uint16(x & 0xFFFF)
                                        else:
                                            if size == 4:
                                                lo32[off >> 2] = np.uint32(x)
                                            elif size == 1:
                                                lo8[off] = np.uint8(x & 0xFF)
                                            else:
                                                lo16[off >> 1] = np.uint16(x & 0xFFFF)
                                    else:
                                        for j in range(size >> 2):
                                            x = regs[dreg + j, tb + lane] if dkind == K_R else np.int64(0)
                                            if space == SPACE_GLOBAL:
                                                heap32[(off >> 2) + j] = np.uint32(x)
                                            elif space == SPACE_SHARED:
                                                sh32[(off >> 2) + j] = np.uint32(x)
                                            else:
                                                lo32[(off >> 2) + j] = np.uint32(x)
                        else:
                            signed = (mod & M_SIGNED) != 0
                            for lane in range(32):
                                if (emask >> lane) & 1:
                                    off = ADDR[lane]
                                    space = SPACE[lane]
                                    if size == 4:
                                        if space == SPACE_GLOBAL:
                                            OUT[0, lane] = heap32[off >> 2]
                                        elif space == SPACE_SHARED:
                                            OUT[0, lane] = sh32[off >> 2]
                                        else:
                                            OUT[0, lane] = lo32[off >> 2]
                                    elif size == 1:
                                        if space == SPACE_GLOBAL:
                                            x = np.int64(heap8[off])
                                        elif space == SPACE_SHARED:
                                            x = np.int64(sh8[off])
                                        else:
                                            x = np.int64(lo8[off])
                                        OUT[0, lane] = (x | 0xFFFFFF00) if signed and x >= 128 else x
                                    elif size == 2:
                                        if space == SPACE_GLOBAL:
                                            x = np.int64(heap16[off >> 1])
                                        elif space == SPACE_SHARED:
                                            x = np.int64(sh16[off >> 1])
                                        else:
                                            x = np.int64(lo16[off >> 1])
                                        OUT[0, lane] = (x | 0xFFFF0000) if signed and x >= 32768 else x
                                    else:
                                        for j in range(size >> 2):
                                            if space == SPACE_GLOBAL:
                                                OUT[j, lane] = heap32[(off >> 2) + j]
                                            elif space == SPACE_SHARED:
                                                OUT[j, lane] = sh32[(off >> 2) + j]
                                            else:
                                                OUT[j, lane] = lo32[(off >> 2) + j]
                    elif op == OP_LDC:
                        size = mod & 31
                        v0 = prog[pc, F_S + 1]
                        bank = v0 >> 16
                        ireg = (f0 >> 16) & 0xFF
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                off = v0 & 0xFFFF
                                if prog[pc, F_S] == K_CBX:
                                    if f0 & CBX_UNIFORM:
                                        if ireg != 63:
                                            off += uregs[w, ireg & 0xFF]
                                    elif (ireg & 0xFF) != 255:
                                        off += regs[ireg & 0xFF, tb + lane]
                                off &= M32
                                if (off + size > cb_words * 4 or bank >= cbank.shape[0] or
                                        (off & (size - 1)) != 0):
                                    _fail(err, E_CBANK, blk, tb + lane, pc, off, size, bank, 0)
                                    stop = True
                                    break
                                x = np.int64(cbank[bank, off >> 2])
                                if size == 8:
                                    OUT[1, lane] = cbank[bank, (off >> 2) + 1]
                                elif size == 1:
                                    x = (x >> (8 * (off & 3))) & 0xFF
                                    if (mod & M_SIGNED) and x >= 0x80:
                                        x += 0xFFFFFF00
                                elif size == 2:
                                    x = (x >> (8 * (off & 2))) & 0xFFFF
                                    if (mod & M_SIGNED) and x >= 0x8000:
                                        x += 0xFFFF0000
                                OUT[0, lane] = x
                        if stop:
                            break
                    # =====================================================================
                    # Warp-wide
                    # =====================================================================
                    elif op == OP_SHFL:
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                bval = SRC[1, lane] & 31
                                c = SRC[2, lane]
                                cval = c & 31
                                segmask = (c >> 8) & 31
                                max_lane = (lane & segmask) | (cval & ~segmask)
                                min_lane = lane & segmask
                                if mod == SHFL_UP:
                                    j = lane - bval
                                    ok = j >= max_lane
                                elif mod == SHFL_DOWN:
                                    j = lane + bval
                                    ok = j <= max_lane
                                elif mod == SHFL_BFLY:
                                    j = lane ^ bval
                                    ok = j <= max_lane
                                else:
                                    j = min_lane | (bval & ~segmask)
                                    ok = j <= max_lane
                                if not ok:
                                    j = lane
                                OUT[4, lane] = SRC[0, j & 31]
                                OUT[0, lane] = 1 if ok else 0
                    elif op == OP_VOTE:
                        ballot = np.int64(0)
                        for lane in range(32):
                            if (emask >> lane) & 1 and SRC[0, lane]:
                                ballot |= np.int64(1) << lane
                        if mod == VOTE_ALL:
                            res = 1 if ballot == emask else 0
                        elif mod == VOTE_ANY:
                            res = 1 if ballot != 0 else 0
                        else:
                            res = 1 if ballot == emask or ballot == 0 else 0
                        first = d0k == K_R or d0k == K_UR
                        for lane in range(32):
                            OUT[0, lane] = ballot if first else res
                            OUT[4, lane] = res
                        if mod & M_UNIFORM_DST:
                            pass
                    elif op == OP_MATCH:
                        all_same = True
                        first_lane = -1
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                if first_lane < 0:
                                    first_lane = lane
                                elif SRC[0, lane] != SRC[0, first_lane]:
                                    all_same = False
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                if mod == MATCH_ANY:
                                    same = np.int64(0)
                                    for l2 in range(32):
                                        if (emask >> l2) & 1 and SRC[0, l2] == SRC[0, lane]:
                                            same |= np.int64(1) << l2
                                    OUT[0, lane] = same
                                else:
                                    OUT[0, lane] = 1 if all_same else 0
                                    OUT[4, lane] = emask if all_same else 0
                    elif op == OP_REDUX or op == OP_R2UR:
                        acc = np.int64(0)
                        first_set = True
                        kind = mod & 15
                        for lane in range(32):
                            if (emask >> lane) & 1:
                                x = SRC[0, lane]
                                if op == OP_R2UR:
                                    acc = x
                                    break
                                if first_set:
                                    acc = x
                                    first_set = False
                                elif kind == RX_SUM:
                                    acc = (acc + x) & M32
                                elif kind == RX_AND:
                                    acc &= x
                                elif kind == RX_OR:
                                    acc |= x
                                elif kind == RX_XOR:
                                    acc ^= x
                                else:
                                    if mod & M_RX_SIGNED:
                                        less = _sext32(x) < _sext32(acc)
                                    else:
                                        less = x < acc
                                    if (kind == RX_MIN) == less:
                                        acc = x
                        if emask != 0:
                            uregs[w, prog[pc, F_D0]] = acc
                    # =====================================================================
                    # Control
                    # =====================================================================
                    elif op == OP_BRA:
                        k0 = prog[pc, F_S]
                        taken = emask
                        if k0 == K_P or k0 == K_UP:
                            taken = np.int64(0)
                            for lane in range(32):
                                if (emask >> lane) & 1 and SRC[0, lane]:
                                    taken |= np.int64(1) << lane
                        elif mod & (M_CONV | M_DIV):
                            want = SRC[0, 0]
                            if f0 & FL_INV:
                                want = ~want & M32
                            exited = np.int64(0)
                            for lane in range(32):
                                if status[tb + lane] == ST_EXITED or status[tb + lane] == ST_ABSENT:
                                    exited |= np.int64(1) << lane
                            # converged: every live lane of the mask runs in this group
                            diverged = (want & ~exited & ~mask) != 0
                            if diverged == ((mod & M_CONV) != 0):
                                taken = np.int64(0)
                        target = prog[pc, F_AUX2]
                        if taken == mask:
                            npc = target
                        elif taken != 0:
                            for lane in range(32):
                                if (mask >> lane) & 1:
                                    pcs[tb + lane] = target if (taken >> lane) & 1 else pc + 1
                            need = True
                    elif op == OP_EXIT:
                        taken = emask
                        if prog[pc, F_S] == K_P:
                            taken = np.int64(0)
                            for lane in range(32):
                                if (emask >> lane) & 1 and SRC[0, lane]:
                                    taken |= np.int64(1) << lane
                        if taken != 0:
                            for lane in range(32):
                                if (taken >> lane) & 1:
                                    status[tb + lane] = ST_EXITED
                            mask &= ~taken
                            for lane in range(32):
                                if (mask >> lane) & 1:
                                    pcs[tb + lane] = pc + 1
                            need = True
                    elif op == OP_CALL and (prog[pc, F_MOD] & M_ABS) != 0:
                        # CALL.ABS.NOINC R2: a system call (its address from the loader,
                        # SYS_BASE + id * SYS_STRIDE) runs here and returns to R20:R21;
                        # any other absolute address is code (LEPC gives pc * 16)
                        failed = False
                        for lane in range(32):
                            if (mask >> lane) & 1:
                                t = tb + lane
                                if (emask >> lane) & 1:
                                    dest = (SRCH[0, lane] << 32) | (SRC[0, lane] & M32)
                                    sys_id = (dest - SYS_BASE) // SYS_STRIDE
                                    if dest >= SYS_BASE and sys_id > 0 and sys_id < SYS_NCALLS and \
                                            (dest - SYS_BASE) % SYS_STRIDE == 0:
                                        ret = _syscall(sys_id, syslog, regs, t, blk, pc, lo8, heap8,
                                                       local_size, lwin, gbase)
                                        regs[4, t] = ret & M32
                                        if sys_id == SYS_ASSERTFAIL and not failed:
                                            _fail(err, E_ASSERT, blk, t, pc, 0, 0, 0, 0)
                                            failed = True
                                        pcs[t] = ((regs[SYS_RETURN_REG, t] & M32) | ((regs[SYS_RETURN_REG + 1, t] & M32) << 32)) >> 4
                                    elif dest >= SYS_BASE:
                                        _fail(err, E_SYSCALL, blk, t, pc, dest, 0, 0, 0)
                                        failed = True
                                        break
                                    else:
                                        pcs[t] = dest >> 4
                                else:
                                    pcs[t] = pc + 1
                        if failed:
                            stop = True
                            break
                        same = True
                        for lane in range(32):
                            if (mask >> lane) & 1 and pcs[tb + lane] != pcs[tb + lane0]:
                                same = False
                        if same:
                            npc = pcs[tb + lane0]
                        else:
                            need = True
                    elif op == OP_CALL or op == OP_RET:
                        # CALL.REL.NOINC [R8,] T / RET.REL.NODEC R2, T: the register (a
                        # byte offset from the start of .text) is added to the target
                        base_t = prog[pc, F_AUX2]
                        reg = prog[pc, F_S] == K_R
                        for lane in range(32):
                            if (mask >> lane) & 1:
                                if (emask >> lane) & 1:
                                    dest = base_t
                                    if reg:
                                        if op == OP_RET:
                                            dest += ((SRCH[0, lane] << 32) | SRC[0, lane]) >> 4
                                        else:
                                            dest += SRC[0, lane] >> 4
                                    pcs[tb + lane] = dest
                                else:
                                    pcs[tb + lane] = pc + 1
                        same = True
                        for lane in range(32):
                            if (mask >> lane) & 1 and pcs[tb + lane] != pcs[tb + lane0]:
                                same = False
                        if same:
                            npc = pcs[tb + lane0]
                        else:
                            need = True
                    elif op == OP_BSSY:
                        if emask != 0:
                            bregs[w, prog[pc, F_D0]] = emask
                    elif op == OP_BREAK:
                        bregs[w, prog[pc, F_S + 1]] &= ~emask
                    elif op == OP_WARPSYNC:
                        # each thread names its own mask (nvcc's sm_90 code gives the two
                        # half-warps different ones); a thread outside its own mask stops the
                        # GPU (CUDA_ERROR_ILLEGAL_INSTRUCTION, measured on the H200)
                        bad = -1
                        for lane in range(32):
                            if (emask >> lane) & 1 and ((SRC[0, lane] >> lane) & 1) == 0:
                                bad = lane
                                break
                        if bad >= 0:
                            _fail(err, E_WARPSYNC_SELF, blk, tb + bad, pc, 0, 0, 0, 0)
                            stop = True
                            break
                        if emask != 0:
                            exited = np.int64(0)
                            for lane in range(32):
                                if status[tb + lane] == ST_EXITED or status[tb + lane] == ST_ABSENT:
                                    exited |= np.int64(1) << lane
                            wait = (mod & M_EXCLUSIVE) != 0     # the release below splits the groups
                            for lane in range(32):
                                if (emask >> lane) & 1 and (SRC[0, lane] & ~exited & ~emask & M32) != 0:
                                    wait = True
                            if wait:
                                # wait for the others, each thread for its own mask; lanes
                                # whose guard is false go on
                                for lane in range(32):
                                    if (mask >> lane) & 1:
                                        t = tb + lane
                                        if (emask >> lane) & 1:
                                            status[t] = ST_WSYNC
                                            waitv[t] = SRC[0, lane] & ~exited & M32
                                            if mod & M_EXCLUSIVE:
                                                waitv[t] |= WAIT_EXCLUSIVE
                                            pcs[t] = pc
                                        else:
                                            pcs[t] = pc + 1
                                need = True
                    elif op == OP_BSYNC:
                        if emask != 0:
                            exited = np.int64(0)
                            for lane in range(32):
                                if status[tb + lane] == ST_EXITED or status[tb + lane] == ST_ABSENT:
                                    exited |= np.int64(1) << lane
                            bnum = prog[pc, F_S + 1]
                            want = bregs[w, bnum] & ~exited
                            if (want & ~emask) != 0:
                                # wait for the others; lanes whose guard is false go on
                                for lane in range(32):
                                    if (mask >> lane) & 1:
                                        t = tb + lane
                                        if (emask >> lane) & 1:
                                            status[t] = ST_BSYNC
                                            waitv[t] = bnum
                                            pcs[t] = pc
                                        else:
                                            pcs[t] = pc + 1
                                need = True
                    elif op == OP_BMOV:
                        if d0k == K_B:
                            if emask != 0:
                                bregs[w, prog[pc, F_D0]] = SRC[0, lane0]
                        else:
                            bsrc = prog[pc, F_S + 1]
                            dn = prog[pc, F_D0]
                            for lane in range(32):
                                if (emask >> lane) & 1:
                                    regs[dn, tb + lane] = bregs[w, bsrc]
                            if (mod & M_CLEAR) and emask != 0:
                                bregs[w, bsrc] = 0
                    elif op == OP_BAR:
                        if emask != 0 and mod != BAR_ARV:
                            for lane in range(32):
                                if (mask >> lane) & 1:
                                    t = tb + lane
                                    if (emask >> lane) & 1:
                                        status[t] = ST_BAR
                                        pcs[t] = pc
                                        # what a BAR.RED contributes, kept until the release
                                        waitv[t] = SRC[1, lane] if mod >= BAR_RED_POPC else 0
                                    else:
                                        pcs[t] = pc + 1
                            need = True
                    elif op == OP_NOP:
                        pass
                    elif op == OP_KILL:
                        if emask != 0:
                            _fail(err, E_TRAP, blk, tb + lane0, pc, 0, 0, 0, 0)
                            stop = True
                            break
                    else:
                        _fail(err, E_UNSUPPORTED, blk, tb + lane0, pc, 0, 0, 0, 0)
                        stop = True
                        break
                    # ---- write the results back ----
                    if prog[pc, F_WB] != 0 and emask != 0:
                        for d in range(3):
                            dk = prog[pc, F_D0K + 2 * d]
                            if dk == K_NONE:
                                continue
                            dn = prog[pc, F_D0 + 2 * d]
                            row0 = 0 if d == 0 else (4 if d == 1 else 6)
                            width = prog[pc, F_DW0 + d] if d < 2 else 1
                            if dk == K_R:
                                for j in range(width):
                                    for lane in range(32):
                                        if (emask >> lane) & 1:
                                            regs[dn + j, tb + lane] = OUT[row0 + j, lane] & M32
                            elif dk == K_P:
                                for lane in range(32):
                                    if (emask >> lane) & 1:
                                        preds[dn, tb + lane] = OUT[row0, lane] & 1
                            elif dk == K_UR:
                                for j in range(width):
                                    uregs[w, dn + j] = OUT[row0 + j, lane0] & M32
                            elif dk == K_UP:
                                upreds[w, dn] = OUT[row0, lane0] & 1
                    if not need and parked != 0:
                        # lanes parked at the PC this group reaches join it (the min-PC rule's
                        # reconvergence at the same PC, as the hardware's scheduler merges them):
                        # ptxas's code relies on it where an if-region without BSSY joins just
                        # before a BSSY (div.rn.f32's slow path: BSSY B2 after the
                        # special-operand block), which would else run once per group and
                        # leave B2 naming only the last group
                        join = False
                        for lane in range(32):
                            if (parked >> lane) & 1 and status[tb + lane] == ST_RUN and pcs[tb + lane] == npc:
                                join = True
                        if join:
                            for lane in range(32):
                                if (mask >> lane) & 1:
                                    pcs[tb + lane] = npc
                            need = True
                    if not need:
                        pc = npc
                if stop:
                    break
            if stop:
                break
            # ---- all warps blocked at the barrier (or done): release it ----
            all_blocked = True
            any_bar = False
            for w in range(nwarps):
                if wstate[w] == 0:
                    all_blocked = False
                elif wstate[w] == 1:
                    any_bar = True
            if all_blocked and not any_bar:
                break
            if all_blocked:
                count = np.int64(0)
                all_true = True
                any_true = False
                barmod = 0
                for t in range(nthreads):
                    if status[t] == ST_BAR:
                        barmod = prog[pcs[t], F_MOD]
                        if waitv[t]:
                            count += 1
                            any_true = True
                        else:
                            all_true = False
                if barmod == BAR_RED_POPC:
                    bar_result[0] = count
                elif barmod == BAR_RED_AND:
                    bar_result[0] = 1 if all_true else 0
                elif barmod == BAR_RED_OR:
                    bar_result[0] = 1 if any_true else 0
                for t in range(nthreads):
                    if status[t] == ST_BAR:
                        status[t] = ST_RUN
                        pcs[t] += 1
                for w in range(nwarps):
                    if wstate[w] == 1:
                        wstate[w] = 0
            elif not progressed:
                _fail(err, E_DEADLOCK, blk, 0, 0, 0, 0, 0, 0)
                stop = True
                break
        if stop:
            break
        stats[2] += 1
    stats[0] = steps
    stats[1] = thread_steps
