"""set_control_codes against ptxas: the control words ptxas writes are the expectation.

RUN: every tests/data/sched/*.ptx through `ptxas -arch=sm_89` (and testsuite/vadd.cu
through nvcc), `cuobjdump -sass`, ptxc.sass.listing parses the listing, the control
words are cleared, set_control_codes sets them again, and each field is compared.
CHECK: vadd matches exactly (16 instructions and the padding); over the corpus each
field's match rate stays at or above FLOORS (raise a floor when the model improves:
the test prints the rates); every function the pass produced is safe (check_safety).
The tests without the oracle use the vadd listing kept below.
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ptxc import oracle
from ptxc.lower.set_control_codes import NO_FALLTHROUGH_OPS, TAKEN_EDGE_OPS, set_control_codes
from ptxc.sass import latency
from ptxc.sass.ir import Control, Mem, Reg, SpecialReg, Target
from ptxc.sass.listing import parse_cuobjdump_sass, to_function

DATA = Path(__file__).parent / "data" / "sched"
FIELDS = ("stall", "yield_bit", "wbar", "rbar", "wait", "reuse")

# Match rates reached over the corpus (ptxas 13.5); the test fails below them.
# wait: 0.9775 before calls were lowered; a CALL or RET now waits on every scoreboard in
# flight there (set_control_codes.settle_at_calls: ptxc's subroutines are scheduled
# apart), where ptxas, which sees both sides, does not always: 0.9768 over the corpus.
FLOORS = {"stall": 0.985, "yield_bit": 0.983, "wbar": 0.985, "rbar": 0.989,
          "wait": 0.976, "reuse": 0.995}

# `nvcc -arch=sm_89 -cubin testsuite/vadd.cu; cuobjdump -sass` (CUDA 13.5), padding cut to two NOPs.
VADD_LISTING = """
\t\tFunction : _Z4vaddPKfS0_Pfi
        /*0000*/                   MOV R1, c[0x0][0x28] ;                             /* 0x00000a0000017a02 */
                                                                                      /* 0x000fe40000000f00 */
        /*0010*/                   S2R R6, SR_CTAID.X ;                               /* 0x0000000000067919 */
                                                                                      /* 0x000e280000002500 */
        /*0020*/                   S2R R3, SR_TID.X ;                                 /* 0x0000000000037919 */
                                                                                      /* 0x000e240000002100 */
        /*0030*/                   IMAD R6, R6, c[0x0][0x0], R3 ;                     /* 0x0000000006067a24 */
                                                                                      /* 0x001fca00078e0203 */
        /*0040*/                   ISETP.GE.AND P0, PT, R6, c[0x0][0x178], PT ;       /* 0x00005e0006007a0c */
                                                                                      /* 0x000fda0003f06270 */
        /*0050*/               @P0 EXIT ;                                             /* 0x000000000000094d */
                                                                                      /* 0x000fea0003800000 */
        /*0060*/                   MOV R7, 0x4 ;                                      /* 0x0000000400077802 */
                                                                                      /* 0x000fe20000000f00 */
        /*0070*/                   ULDC.64 UR4, c[0x0][0x118] ;                       /* 0x0000460000047ab9 */
                                                                                      /* 0x000fc80000000a00 */
        /*0080*/                   IMAD.WIDE R4, R6, R7, c[0x0][0x168] ;              /* 0x00005a0006047625 */
                                                                                      /* 0x000fc800078e0207 */
        /*0090*/                   IMAD.WIDE R2, R6.reuse, R7.reuse, c[0x0][0x160] ;  /* 0x0000580006027625 */
                                                                                      /* 0x0c0fe400078e0207 */
        /*00a0*/                   LDG.E R4, [R4.64] ;                                /* 0x0000000404047981 */
                                                                                      /* 0x000ea8000c1e1900 */
        /*00b0*/                   LDG.E R3, [R2.64] ;                                /* 0x0000000402037981 */
                                                                                      /* 0x000ea2000c1e1900 */
        /*00c0*/                   IMAD.WIDE R6, R6, R7, c[0x0][0x170] ;              /* 0x00005c0006067625 */
                                                                                      /* 0x000fe200078e0207 */
        /*00d0*/                   FADD R9, R4, R3 ;                                  /* 0x0000000304097221 */
                                                                                      /* 0x004fca0000000000 */
        /*00e0*/                   STG.E [R6.64], R9 ;                                /* 0x0000000906007986 */
                                                                                      /* 0x000fe2000c101904 */
        /*00f0*/                   EXIT ;                                             /* 0x000000000000794d */
                                                                                      /* 0x000fea0003800000 */
        /*0100*/                   BRA 0x100;                                         /* 0xfffffff000007947 */
                                                                                      /* 0x000fc0000383ffff */
        /*0110*/                   NOP;                                               /* 0x0000000000007918 */
                                                                                      /* 0x000fc00000000000 */
        /*0120*/                   NOP;                                               /* 0x0000000000007918 */
                                                                                      /* 0x000fc00000000000 */
\t\t..........
"""


# --- helpers ------------------------------------------------------------------------

def recompute(name, instrs):
    """The listing's kernel as a function with cleared control words, the pass run on
    it; returns (ptxas's words, ours, the function)."""
    func = to_function(name, instrs)
    flat = [i for b in func.blocks for i in b.instrs]
    expected = [copy.copy(i.ctrl) for i in flat]
    for instr in flat:
        instr.ctrl = Control()
    set_control_codes(func, "sm_89")
    return expected, [i.ctrl for i in flat], func


def listing_of_cubin(cubin: Path) -> dict:
    return parse_cuobjdump_sass(oracle.cuobjdump_sass(cubin))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict:
    """Every kernel of tests/data/sched/*.ptx compiled by ptxas: name -> listing."""
    out = tmp_path_factory.mktemp("sched")
    kernels = {}
    for ptx in sorted(DATA.glob("*.ptx")):
        cubin = out / (ptx.stem + ".cubin")
        oracle.ptxas(ptx, cubin, arch="sm_89")
        for name, instrs in listing_of_cubin(cubin).items():
            kernels[f"{ptx.stem}:{name}"] = instrs
    return kernels


# --- the listing parser -----------------------------------------------------------------

def test_listing_parser_splits_operands_and_decodes_control():
    instrs = dict(parse_cuobjdump_sass(VADD_LISTING)["_Z4vaddPKfS0_Pfi"])
    isetp = instrs[0x40]
    assert isetp.name == "ISETP.GE.AND"
    assert [d.num for d in isetp.dsts] == [0, 7] and isetp.srcs[0] == Reg("R", 6)
    wide = instrs[0x90]
    assert wide.dsts == [Reg("R", 2, width=2)] and wide.srcs[:2] == [Reg("R", 6), Reg("R", 7)]
    assert wide.ctrl == Control(stall=2, yield_bit=1, wbar=7, rbar=7, wait=0, reuse=0b11)
    store = instrs[0xE0]
    assert store.dsts == [] and isinstance(store.srcs[0], Mem) and store.srcs[0].base.width == 2
    assert instrs[0x10].srcs == [SpecialReg("SR_CTAID.X")] and instrs[0x10].ctrl.wbar == 0
    assert instrs[0x50].pred == Reg("P", 0) and instrs[0x100].srcs == [Target(addr=0x100)]
    assert instrs[0xD0].ctrl.wait == 0b100


# --- vadd ----------------------------------------------------------------------------------

def assert_exact(name, instrs):
    expected, ours, _ = recompute(name, instrs)
    for (addr, instr), want, got in zip(instrs, expected, ours):
        assert got == want, f"{name} {addr:#06x} {instr.name}: ptxas {want}, ours {got}"


def test_vadd_listing_codes_reproduced():
    (name, instrs), = parse_cuobjdump_sass(VADD_LISTING).items()
    assert_exact(name, instrs)


@pytest.mark.oracle
def test_vadd_matches_nvcc_exactly(seed_vadd, tmp_path):
    cubin = oracle.nvcc_cubin(seed_vadd, tmp_path / "vadd.cubin")
    (name, instrs), = listing_of_cubin(cubin).items()
    assert len([i for _, i in instrs if i.op not in ("NOP",)]) == 17   # 16 + BRA to itself
    assert_exact(name, instrs)


# --- the corpus ------------------------------------------------------------------------------

@pytest.mark.oracle
def test_corpus_match_rates(corpus, capsys):
    matched = dict.fromkeys(FIELDS, 0)
    total = 0
    for name, instrs in corpus.items():
        expected, ours, _ = recompute(name.split(":")[1], instrs)
        total += len(ours)
        for want, got in zip(expected, ours):
            for f in FIELDS:
                matched[f] += getattr(want, f) == getattr(got, f)
    rates = {f: matched[f] / total for f in FIELDS}
    with capsys.disabled():
        print(f"\ncontrol codes vs ptxas over {len(corpus)} kernels, {total} instructions: "
              + ", ".join(f"{f} {r:.2%}" for f, r in rates.items()))
    for f in FIELDS:
        assert rates[f] >= FLOORS[f], f"{f}: {rates[f]:.4f} fell below the floor {FLOORS[f]}"


@pytest.mark.oracle
def test_corpus_codes_are_safe(corpus):
    table = latency.load("sm_89")
    problems = []
    for name, instrs in corpus.items():
        _, _, func = recompute(name.split(":")[1], instrs)
        problems += [f"{name}: {p}" for p in check_safety(func, table)]
    assert not problems, "\n".join(problems[:20])


@pytest.mark.oracle
def test_safety_checker_accepts_ptxas(corpus):
    """The checker's hardware model agrees with ptxas's own codes (CALL/RET aside:
    ptxas knows what a callee clobbers, the checker does not follow calls)."""
    table = latency.load("sm_89")
    problems = []
    for name, instrs in corpus.items():
        if any(i.op in ("CALL", "RET") for _, i in instrs):
            continue
        problems += [f"{name}: {p}" for p in check_safety(to_function(name, instrs), table)]
    assert not problems, "\n".join(problems[:20])


def test_safety_checker_catches_a_missing_wait():
    (name, instrs), = parse_cuobjdump_sass(VADD_LISTING).items()
    func = to_function(name, instrs)
    fadd = next(i for b in func.blocks for i in b.instrs if i.op == "FADD")
    fadd.ctrl.wait = 0
    assert any("FADD" in p for p in check_safety(func, latency.load("sm_89")))


# --- the safety property ---------------------------------------------------------------------

WINDOW = 48


def check_safety(func, table) -> list[str]:
    """Read back what the control words promise, independently of how the pass chose
    them: along every fallthrough path, and every path through one taken branch, no
    instruction reads a fixed-latency result before the table's latency has elapsed,
    and no instruction reads or overwrites a variable-latency result, or overwrites
    a vector register such a producer still reads, before a wait settles it.  A wait
    settles a producer whose scoreboard it names, or an earlier producer of the same
    in-order queue (shared-memory results complete in order; BAR.SYNC lets the queue
    read everything issued before it)."""
    flat = [(b, i) for b in func.blocks for i in b.instrs]
    start = {}
    for k, (block, _) in enumerate(flat):
        start.setdefault(block.label, k)
    instrs = [i for _, i in flat]
    time, t = [], 0
    for instr in instrs:
        time.append(t)
        t += instr.ctrl.stall
    edges = [(b, start[s.label]) for b, instr in enumerate(instrs) if instr.op in TAKEN_EDGE_OPS
             for s in instr.srcs if isinstance(s, Target) and s.label in start]
    problems = []
    for j in range(len(instrs)):
        for path in paths_to(j, instrs, edges):
            problems += check_path(path, time, instrs, table)
    return sorted(set(problems))


def falls_through(instr) -> bool:
    return not (instr.op in NO_FALLTHROUGH_OPS and instr.pred is None)


def paths_to(j, instrs, edges):
    """Paths (lists of (index, side)) that end at j: the fallthrough run before j
    (side 0), and for each branch into j's run, that branch's run (side 0) followed
    by j's run from the branch target on (side 1)."""
    run = [j]
    while run[-1] > 0 and len(run) < WINDOW and falls_through(instrs[run[-1] - 1]):
        run.append(run[-1] - 1)
    run.reverse()
    yield [(k, 0) for k in run]
    in_run = set(run)
    for b, head in edges:
        if head not in in_run or head == b:
            continue
        before = [b]
        while len(before) < WINDOW and before[-1] > 0 and falls_through(instrs[before[-1] - 1]):
            before.append(before[-1] - 1)
        before.reverse()
        yield [(k, 0) for k in before] + [(k, 1) for k in run[run.index(head):]]


def check_path(path, time, instrs, table) -> list[str]:
    """Every producer on the path against the path's last instruction."""
    j, _ = path[-1]
    consumer = instrs[j]

    def issued(n):  # issue time along the path, across the taken branch if any
        k, side = path[n]
        if side == 0:
            return time[k]
        branch = max(m for m, (_, s) in enumerate(path) if s == 0)
        bk = path[branch][0]
        head = path[branch + 1][0]
        return time[bk] + instrs[bk].ctrl.stall + time[k] - time[head]

    out = []
    reads = table.reads(consumer)
    writes = {u for _, u in table.writes(consumer)}
    for n in range(len(path) - 1):
        i = path[n][0]
        producer = instrs[i]
        later = [instrs[path[m][0]] for m in range(n + 1, len(path) - 1)]
        killed = set()
        for other in later:
            if other.pred is None:
                killed |= {u for _, u in table.writes(other)}
        written = {u: key for key, u in table.writes(producer) if u not in killed}
        variable = table.is_variable(producer)
        for read in reads:
            if read.unit not in written:
                continue
            if variable:
                if not settled(path, n, instrs, table, "w"):
                    out.append(f"{consumer.name} @{j} reads {read.unit} of {producer.name} @{i} without a wait")
            else:
                need = table.raw(written[read.unit], table.op_class(consumer), read.role)
                if issued(len(path) - 1) - issued(n) < need:
                    out.append(f"{consumer.name} @{j} reads {read.unit} of {producer.name} @{i} "
                               f"{issued(len(path) - 1) - issued(n)} cycles after it, needs {need}")
        if variable and writes & set(written) and not settled(path, n, instrs, table, "w"):
            out.append(f"{consumer.name} @{j} overwrites a result of {producer.name} @{i} without a wait")
        vector_reads = {r.unit for r in table.reads(producer) if r.unit[0] == "R"}
        if variable and writes & vector_reads and not settled(path, n, instrs, table, "r"):
            out.append(f"{consumer.name} @{j} overwrites a source of {producer.name} @{i} before it was read")
    return out


def settled(path, n, instrs, table, kind) -> bool:
    """Whether a wait on the path after producer path[n] (up to the consumer) settles
    its result ('w') or its reads ('r')."""
    i = path[n][0]
    producer = instrs[i]
    info = table.cls(table.op_class(producer))
    own = {producer.ctrl.wbar} | ({producer.ctrl.rbar} if kind == "r" else set())
    own.discard(7)
    queue = info.get("queue")
    consumer_info = table.cls(table.op_class(instrs[path[-1][0]]))
    if (kind == "r" and queue and consumer_info.get("queue") == queue
            and info.get("in_order_results") and consumer_info.get("in_order_results")):
        return True
    queued = []      # later producers on the same queue, as (scoreboard set, in order)
    for m in range(n + 1, len(path)):
        k = path[m][0]
        instr = instrs[k]
        if instr.ctrl.wait & sum(1 << sb for sb in own):
            return True
        if any(instr.ctrl.wait >> sb & 1 for sb in queued):
            return True
        other = table.cls(table.op_class(instr))
        if queue and other.get("queue") == queue:
            if kind == "r" and other.get("blocking"):
                return True
            if other.get("in_order_results") and (kind == "r" or info.get("in_order_results")):
                # its result written: everything before it on the queue is done; its
                # sources read: everything before it has read its sources
                marks = (instr.ctrl.wbar, instr.ctrl.rbar) if kind == "r" else (instr.ctrl.wbar,)
                queued += [sb for sb in marks if sb != 7]
    return False
