#!/usr/bin/env python3
"""Which f16/f16x2/bf16/bf16x2 PTX forms ptxc's backend lowers: one single-instruction
PTX kernel per form (add/sub/mul/fma with .rn/.ftz/.sat/.relu, neg/abs, min/max with .NaN
and .xorsign.abs, ex2/tanh.approx, cvt between the half types and f32/f64/integers with
every rounding and .relu/.satfinite, selp/ld.nc of 16/32 bits, atom/red .add.noftz), for
each target; a form ptxas refuses is skipped, and for the others the line printed says
why ptxc refuses it or that nvdisasm rejects ptxc's words.  No line: every form ptxas
takes is lowered to words nvdisasm reads.  (Results are checked against ptxas's code in
tests/test_backend_gaps.py and tests/test_set_values.py.)

    python scripts/probe_half_forms.py sm_89,sm_90
"""
from __future__ import annotations

import subprocess, sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ptxc import oracle  # noqa: E402
from ptxc.api import compile as pc  # noqa: E402
H = {"f16": "%h", "bf16": "%h", "f16x2": "%r", "bf16x2": "%r", "f32": "%f", "f64": "%fd",
     "s32": "%r", "u32": "%r", "s16": "%h", "u16": "%h", "s64": "%rd", "u64": "%rd", "s8": "%h", "u8": "%h", "b16": "%h", "b32": "%r"}
forms = []
for t in ("f16", "f16x2", "bf16", "bf16x2"):
    for op in ("add", "sub", "mul"):
        for m in ("", ".rn", ".ftz", ".sat", ".rn.ftz.sat"):
            forms.append((f"{op}{m}.{t}", "d,a,b", t, [t, t]))
    for m in ("", ".ftz", ".sat", ".relu", ".ftz.relu"):
        forms.append((f"fma.rn{m}.{t}", "d,a,b,c", t, [t, t, t]))
    for op in ("neg", "abs"):
        forms.append((f"{op}.{t}", "d,a", t, [t]))
        forms.append((f"{op}.ftz.{t}", "d,a", t, [t]))
    for op in ("min", "max"):
        for m in ("", ".ftz", ".NaN", ".ftz.NaN", ".xorsign.abs", ".NaN.xorsign.abs"):
            forms.append((f"{op}{m}.{t}", "d,a,b", t, [t, t]))
    forms.append((f"ex2.approx.{t}" if "bf" not in t else f"ex2.approx.ftz.{t}", "d,a", t, [t]))
    forms.append((f"tanh.approx.{t}", "d,a", t, [t]))
for t in ("f16", "bf16"):
    for src in ("f32", "f64", "s32", "u32", "s16", "u16", "s64", "u64", "s8", "u8"):
        for r in ("rn", "rz", "rm", "rp"):
            for x in ("", ".relu", ".satfinite", ".relu.satfinite"):
                if x and src != "f32": continue
                forms.append((f"cvt.{r}{x}.{t}.{src}", "d,a", t, [src]))
        forms.append((f"cvt.{src}.{t}" if src in ("f32","f64") else f"cvt.rzi.{src}.{t}", "d,a", src, [t]))
        if src not in ("f32", "f64"):
            for r in ("rni", "rmi", "rpi"):
                forms.append((f"cvt.{r}.{src}.{t}", "d,a", src, [t]))
    forms.append((f"cvt.rn.{t}x2.f32", "d,a,b", t + "x2", ["f32", "f32"]))
    forms.append((f"cvt.rz.relu.{t}x2.f32", "d,a,b", t + "x2", ["f32", "f32"]))
    forms.append((f"cvt.rn.satfinite.{t}x2.f32", "d,a,b", t + "x2", ["f32", "f32"]))
forms.append(("cvt.f16.bf16", "d,a", "f16", ["bf16"])); forms.append(("cvt.rn.f16.bf16", "d,a", "f16", ["bf16"]))
forms.append(("cvt.rn.bf16.f16", "d,a", "bf16", ["f16"]))
forms.append(("cvt.rni.f16.f16", "d,a", "f16", ["f16"])); forms.append(("cvt.rzi.bf16.bf16", "d,a", "bf16", ["bf16"]))
for t in ("f16", "f16x2", "bf16", "bf16x2"):
    forms.append((f"atom.global.add.noftz.{t}", "d,[m],a", t, [t]))
    forms.append((f"red.global.add.noftz.{t}", "[m],a", None, [t]))
    forms.append((f"atom.shared.add.noftz.{t}", "d,[s],a", t, [t]))
    forms.append((f"selp.{'b16' if 'x2' not in t else 'b32'}", "d,a,b,p", "b16" if "x2" not in t else "b32", ["b16" if "x2" not in t else "b32"]*2))
    forms.append((f"ld.global.nc.{'b16' if 'x2' not in t else 'b32'}", "d,[m]", "b16" if "x2" not in t else "b32", []))
archs = (sys.argv[1] if len(sys.argv) > 1 else "sm_89,sm_90").split(",")
seen = set()
for name, shape, dt, srcs in forms:
    if name in seen: continue
    seen.add(name)
    for arch in archs:
        ops, loads = [], []
        for k, st in enumerate(srcs):
            r = H[st]; reg = f"{r}{10+k}"
            w = {"%h": "u16", "%r": "u32", "%f": "f32", "%fd": "f64", "%rd": "u64"}[r]
            loads.append(f" ld.global.{w} {reg}, [%rd1+{8*k}];"); ops.append(reg)
        d = f"{H[dt]}30" if dt else None
        txt = shape.replace("d", d or "").replace("[m]", "[%rd2]").replace("[s]", "[sh]")
        for k, o in enumerate("abc"):
            if k < len(ops): txt = txt.replace(o, ops[k], 1)
        txt = txt.replace(",p", ",%p1")
        store = ""
        if d:
            w = {"%h": "u16", "%r": "u32", "%f": "f32", "%fd": "f64", "%rd": "u64"}[H[dt]]
            store = f" st.global.{w} [%rd1+64], {d};"
        body = f""".version 8.8
.target {arch}
.address_size 64
.visible .entry k(.param .u64 o)
{{
 .reg .b16 %h<40>; .reg .b32 %r<40>; .reg .f32 %f<40>; .reg .f64 %fd<40>; .reg .b64 %rd<40>; .reg .pred %p<4>;
 .shared .align 4 .b8 sh[16];
 ld.param.u64 %rd1, [o]; add.s64 %rd2, %rd1, 128; setp.ne.u64 %p1, %rd1, 0;
{chr(10).join(loads)}
 {name} {txt};
{store}
 ret;
}}
"""
        tmp = Path(tempfile.mkdtemp()); (tmp/"p.ptx").write_text(body)
        r = subprocess.run([str(oracle.find("ptxas")), f"-arch={arch}", str(tmp/"p.ptx"), "-o", str(tmp/"a.cubin")], capture_output=True, text=True)
        if r.returncode:
            continue
        res = pc(str(tmp/"p.ptx"), arch=arch, check=False)
        if not res.ok:
            print(arch, name, "::", "; ".join(d.message for d in res.error.diagnostics)[:200])
            continue
        (tmp/"b.cubin").write_bytes(res.cubin)
        r2 = subprocess.run([str(oracle.find("nvdisasm")), str(tmp/"b.cubin")], capture_output=True, text=True)
        if r2.returncode or r2.stderr.strip():
            print(arch, name, ":: nvdisasm:", r2.stderr.strip()[:200])
