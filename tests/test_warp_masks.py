"""Warp collectives under partial and per-lane member masks (issue 16: ptxc's lowering
was wrong on the H200 for vote/redux/match under a mask that differs between lanes).

One generated kernel per target holds every collective (vote.{ballot,any,all,uni},
redux.{add,min,max,and,or,xor}.{u32,s32,b32}, match.{any,all}.{b32,b64}, shfl.bfly,
activemask after bar.warp.sync) under every mask shape: per half-warp, per 8-lane
tile, interleaved even/odd lanes (all three in a register computed from %tid: each
lane names its own group), the full warp from a kernel parameter (uniform, unknown to
the compiler), and an immediate partial mask inside a branch that only its lanes take.

- ptxc's cubin on the emulator gives what the PTX ISA says (a NumPy reference per
  lane: the op over the lanes of the lane's own mask), sm_89 and sm_90;
- the SASS has ptxas's shape where that is the semantic point: per collective alone
  under the half-warp mask, ptxc runs it right after a WARPSYNC.EXCLUSIVE (inside
  BSSY ... BSYNC) exactly where ptxas's code of the same PTX does (sm_90: vote, match,
  redux; sm_89: redux).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from ptxc import oracle

NT = 64          # two warps
SHAPES = {       # name -> (PTX computing %m from %lane / %pm, lane -> its mask)
    "half": ("and.b32 %t0, %lane, 16;\n\tshl.b32 %m, %c16, %t0;",
             lambda l: 0xFFFF << (l & 16)),
    "tile8": ("and.b32 %t0, %lane, 24;\n\tshl.b32 %m, %c8, %t0;",
              lambda l: 0xFF << (l & 24)),
    "oddeven": ("and.b32 %t0, %lane, 1;\n\tsetp.ne.u32 %q0, %t0, 0;\n\tselp.b32 %m, 0xaaaaaaaa, 0x55555555, %q0;",
                lambda l: 0xAAAAAAAA if l & 1 else 0x55555555),
    "param": ("mov.b32 %m, %pm;", lambda l: 0xFFFFFFFF),
    "branch": (None, lambda l: 0x0000FFFF),      # `if (lane < 16)` with the immediate 0xffff
}
# op -> (PTX computing %res from %a (b32), %a64 (b64), %p (pred), mask `{m}`; result slots)
OPS = {
    "ballot": ("vote.sync.ballot.b32 %res, %p, {m};", 1),
    "any": ("vote.sync.any.pred %q1, %p, {m};\n\tselp.b32 %res, 1, 0, %q1;", 1),
    "all": ("vote.sync.all.pred %q1, %p, {m};\n\tselp.b32 %res, 1, 0, %q1;", 1),
    "uni": ("vote.sync.uni.pred %q1, %p, {m};\n\tselp.b32 %res, 1, 0, %q1;", 1),
    **{f"redux.{op}.{t}": (f"redux.sync.{op}.{t} %res, %a, {{m}};", 1)
       for op, types in (("add", ("u32", "s32")), ("min", ("u32", "s32")), ("max", ("u32", "s32")),
                         ("and", ("b32",)), ("or", ("b32",)), ("xor", ("b32",))) for t in types},
    "match.any.b32": ("match.any.sync.b32 %res, %k, {m};", 1),
    "match.all.b32": ("match.all.sync.b32 %res|%q1, %k, {m};\n\tselp.b32 %res2, 1, 0, %q1;", 2),
    "match.any.b64": ("match.any.sync.b64 %res, %k64, {m};", 1),
    "match.all.b64": ("match.all.sync.b64 %res|%q1, %k64, {m};\n\tselp.b32 %res2, 1, 0, %q1;", 2),
    "shfl.bfly": ("shfl.sync.bfly.b32 %res, %a, 2, 0x1f, {m};", 1),
    "activemask": ("bar.warp.sync {m};\n\tactivemask.b32 %res;\n\tand.b32 %res, %res, {m};", 1),   # its mask's lanes are there
}
SLOTS = [(op, shape, k) for op, (_, n) in OPS.items() for shape in SHAPES for k in range(n)]


def kernel_ptx(arch: str, ops=OPS, shapes=SHAPES, header: bool = True, name: str = "warp_masks") -> str:
    body, slot = [], 0
    for op in ops:
        text, n = OPS[op]
        for shape in shapes:
            mask_code = SHAPES[shape][0]
            body.append(f"\t// {op} {shape}")
            body.append("\tmov.b32 %res, 0xdeadbeef;\n\tmov.b32 %res2, 0xdeadbeef;")
            if shape == "branch":
                label = f"skip{slot}"
                body.append(f"\tsetp.ge.u32 %q0, %lane, 16;\n\t@%q0 bra {label};")
                body.append("\t" + text.format(m="0x0000ffff"))
                body.append(f"{label}:")
            else:
                body.append("\t" + mask_code)
                body.append("\t" + text.format(m="%m"))
            for k, reg in zip(range(n), ("%res", "%res2")):
                body.append(f"\tst.global.u32 [%out+{(slot + k) * NT * 4}], {reg};")
            slot += n
    head = f".version 8.5\n.target {arch}\n.address_size 64\n" if header else ""
    return head + f""".visible .entry {name}(.param .u64 po, .param .u64 pa, .param .u32 ppm)
{{
\t.reg .b32 %ti, %lane, %a, %k, %m, %pm, %res, %res2, %t0, %c16, %c8;
\t.reg .b64 %po, %pa, %off, %out, %in, %k64;
\t.reg .pred %p, %q0, %q1;
\tmov.u32 %ti, %tid.x;
\tand.b32 %lane, %ti, 31;
\tld.param.u64 %po, [po];
\tld.param.u64 %pa, [pa];
\tld.param.u32 %pm, [ppm];
\tmov.b32 %c16, 0xffff;
\tmov.b32 %c8, 0xff;
\tmul.wide.u32 %off, %ti, 4;
\tadd.s64 %out, %po, %off;
\tadd.s64 %in, %pa, %off;
\tld.global.u32 %a, [%in];
\tand.b32 %k, %a, 3;
\tcvt.u64.u32 %k64, %k;
\txor.b64 %k64, %k64, 0x100000000;
\tand.b32 %t0, %a, 4;
\tsetp.ne.u32 %p, %t0, 0;
{chr(10).join(body)}
\tret;
}}
"""


def reference(a: np.ndarray) -> np.ndarray:
    out = np.zeros((len(SLOTS), NT), np.uint32)
    for s, (op, shape, k) in enumerate(SLOTS):
        mask_of = SHAPES[shape][1]
        for t in range(NT):
            lane, base = t & 31, t & ~31
            if shape == "branch" and lane >= 16:
                out[s, t] = 0xDEADBEEF
                continue
            m = mask_of(lane)
            lanes = [base + j for j in range(32) if m >> j & 1]
            av = [int(a[x]) for x in lanes]
            pv = [int(a[x]) >> 2 & 1 for x in lanes]
            kv = [int(a[x]) & 3 for x in lanes]
            if op == "ballot":
                r = sum(p << (x & 31) for p, x in zip(pv, lanes))
            elif op in ("any", "all", "uni"):
                r = int({"any": any(pv), "all": all(pv), "uni": len(set(pv)) == 1}[op])
            elif op.startswith("redux"):
                _, o, ty = op.split(".")
                vals = [v - (1 << 32) if ty == "s32" and v >> 31 else v for v in av]
                r = {"add": sum(vals), "min": min(vals), "max": max(vals)}.get(o)
                if r is None:
                    r = vals[0]
                    for v in vals[1:]:
                        r = {"and": r & v, "or": r | v, "xor": r ^ v}[o]
            elif op.startswith("match.any"):
                r = sum(1 << (x & 31) for v, x in zip(kv, lanes) if v == int(a[t]) & 3)
            elif op.startswith("match.all"):
                same = len(set(kv)) == 1
                r = (m if same else 0) if k == 0 else int(same)
            elif op == "shfl.bfly":
                r = int(a[base + (lane ^ 2)])
            else:                                     # activemask & m: every lane of m is there
                r = m
            out[s, t] = r & 0xFFFFFFFF
    return out


def _compile(arch: str, tmp_path):
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    text = kernel_ptx(arch)
    module = load_module("warp_masks.ptx", text, arch)
    cubin = tmp_path / f"warp_masks.{arch}.cubin"
    cubin.write_bytes(cubin_bytes(lower_module(module, Options(arch=arch, filename="warp_masks.ptx")), arch))
    return text, cubin


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_collectives_follow_each_lanes_mask(arch, tmp_path):
    from ptxc.emu.device import Device
    _, cubin = _compile(arch, tmp_path)
    a = np.random.default_rng(16).integers(0, 1 << 32, NT, dtype=np.uint64).astype(np.uint32)
    a[::5] = 5                                        # repeated values: match groups, uni votes
    dev = Device()
    kernel = dev.load(cubin.read_bytes(), cubin.name).kernel("warp_masks")
    po, pa = dev.malloc(len(SLOTS) * NT * 4, "o"), dev.malloc(a.nbytes, "a")
    dev.memory.write(pa, a)
    dev.launch(kernel, (1, 1, 1), (NT, 1, 1), [po, pa, np.uint32(0xFFFFFFFF)], 0)
    got = dev.memory.view(po, np.uint32, len(SLOTS) * NT).reshape(len(SLOTS), NT)
    want = reference(a)
    bad = [f"{op} {shape} [{k}] lane {t}: {got[s, t]:#x} vs {want[s, t]:#x}"
           for s, (op, shape, k) in enumerate(SLOTS) for t in range(NT) if got[s, t] != want[s, t]]
    assert not bad, f"{len(bad)} lanes differ from the PTX semantics:\n" + "\n".join(bad[:20])


def _after_exclusive(sass: str) -> tuple[set, list]:
    """The SASS ops that come right after each WARPSYNC.EXCLUSIVE, and the listing's ops."""
    ops = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)[^;]*;", sass)]
    after = set()
    for n, op in enumerate(ops):
        if op == "WARPSYNC.EXCLUSIVE":
            after.add(next(o for o in ops[n + 1:] if not o.startswith(("MOV", "IMAD", "NOP"))).split(".")[0])
    return after, ops


@pytest.mark.oracle
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_exclusive_groups_as_ptxas_writes_them(arch, tmp_path):
    """Per op alone under the half-warp mask (in a kernel with many collectives ptxas
    switches to BRA.DIV fast paths with WARPSYNC.COLLECTIVE slow paths instead, on both
    targets): whether the op runs after a WARPSYNC.EXCLUSIVE is ptxas's choice."""
    from ptxc.driver import cubin_bytes, load_module, lower_module
    from ptxc.lower.pipeline import Options
    names = {op: "k_" + op.replace(".", "_") for op in OPS}
    text = kernel_ptx(arch, [], [], name="k_none") + "".join(
        kernel_ptx(arch, [op], ["half"], header=False, name=names[op]) for op in OPS)
    ptx = tmp_path / "per_op.ptx"
    ptx.write_text(text)
    cubin = tmp_path / "per_op.ptxc.cubin"
    cubin.write_bytes(cubin_bytes(lower_module(load_module(ptx.name, text, arch),
                                               Options(arch=arch, filename=ptx.name)), arch))
    theirs = _per_function(oracle.cuobjdump_sass(oracle.ptxas(ptx, tmp_path / "per_op.cubin", arch)))
    mine = _per_function(oracle.cuobjdump_sass(cubin))
    assert _after_exclusive(theirs[names["redux.add.u32"]])[0] == {"REDUX"}     # not vacuous
    for op, name in names.items():
        assert _after_exclusive(mine[name])[0] == _after_exclusive(theirs[name])[0], \
            (op, _after_exclusive(mine[name])[0], _after_exclusive(theirs[name])[0])
        ops = _after_exclusive(mine[name])[1]
        for n, sass_op in enumerate(ops):
            if sass_op == "WARPSYNC.EXCLUSIVE":
                assert ops[n - 1] == "BSSY" and "BSYNC" in ops[n + 2:n + 4], (op, ops[n - 1:n + 4])


def _per_function(sass: str) -> dict:
    """cuobjdump's listing, per kernel name."""
    parts = re.split(r"\n\s*Function : (\S+)", sass)
    return dict(zip(parts[1::2], parts[2::2]))
