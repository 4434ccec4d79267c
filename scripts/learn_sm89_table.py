#!/usr/bin/env python3
"""Learn the sm_89 (or sm_90) SASS instruction table from NVIDIA's tools and write ptxc/sass/<arch>.json.

Nothing here knows an encoding in advance.  The steps (docs/instruction-table.md):

1. compile PROBES (small PTX kernels) with ptxas, every testsuite/*.cu with nvcc, and
   ptxc's own PTX of every testsuite/*.cu with ptxas
   (-arch=sm_89) and read back every word with cuobjdump -sass; keep one representative
   per (mnemonic, modifiers, operand structure); a NaN immediate is traded for a
   one-bit neighbour that prints a number;
2. flip every non-control bit of each representative and ask `nvdisasm -b SM89` what
   changed: nothing (a constant bit), the guard, the modifiers, one part of one operand
   (a field bit, whose weight the printed number gives; float immediates are read as
   f16, f32 or f64 until one fits), or the instruction's shape (an opcode bit).
   Opcode-bit flips that give the same operation in another operand shape become
   representatives too.  Representatives with RZ/PT operands are learned again with
   ordinary registers there (a zero register hides bits: the scale of [RZ]);
3. enumerate every value of each run of modifier bits and of each named operand part
   (special registers, .H0_H0 selectors, .X4 scales), split runs into independent
   fields, join fields that print together or depend on each other, order fields, and
   find operand text that depends on a modifier (I2F.U8's .B1, I2FP.U32's immediate);
4. find which reuse bit marks which operand, which operands are PC-relative, which
   printing aliases (IMAD.MOV, IMAD.SHL, ...) hold on which form, which operands
   nvdisasm hides when RZ/PT, where a base or index RZ is left out of an address, and
   what in the control word makes `EXIT ;` versus `NOP;`;
5. merge representatives that are one form, add what the script declares (LATENCY,
   WIDTHS, DSTS, EFFECTS, HIDDEN), and write the JSON;
6. check: every word of step 1 decodes, prints as cuobjdump printed it and encodes back
   to itself; random encodings of every form print as nvdisasm prints them and decode
   back to themselves (exit status 1 on any difference).

nvdisasm is slow to start, so every step batches all its words into one raw file.
To add an instruction: add a kernel to testsuite/ (or PTX to PROBES) that makes nvcc
(ptxas) emit it, and its latency class to LATENCY; run this script; see
docs/instruction-table.md.

sm_90 (`--arch sm_90`, ptxc/sass/sm_90.json) is learned the same way from `ptxas
-arch=sm_90`, `nvcc -arch=sm_90` and `nvdisasm -b SM90`; the one difference in syntax is
that sm_90 prints the memory descriptor of global accesses (`desc[UR4][R2.64]`), which
is then learned as a printed field of the address like any other.  sm_80 and sm_86
(Ampere, whose ISA Ada's extends) are learned the same way (`--arch sm_80`, `--arch sm_86`).

Usage: python scripts/learn_sm89_table.py [--arch sm_80|sm_86|sm_89|sm_90] [-o ptxc/sass/<arch>.json] [-v] [--no-verify]
       [--only REGEX]
"""
from __future__ import annotations

import argparse
import functools
import itertools
import json
import random
import re
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "scripts"))
import ptx_probes  # noqa: E402
from ptxc import oracle  # noqa: E402
from ptxc.sass.table import Field, TableError  # noqa: E402

ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90")   # Ampere (sm_80, sm_86), Ada, Hopper
ARCH = "sm_89"                       # set_arch() changes these three
NVDISASM_ARCH = "SM89"
OUT = ROOT / "ptxc" / "sass" / "sm_89.json"


def set_arch(arch: str) -> None:
    """Learn for `arch`: which -arch the tools compile for and nvdisasm reads."""
    global ARCH, NVDISASM_ARCH, OUT, SREG_RE
    if arch not in ARCHS:
        raise SystemExit(f"unknown architecture {arch!r} ({', '.join(ARCHS)})")
    ARCH, NVDISASM_ARCH = arch, arch.replace("sm_", "SM")
    if arch != "sm_89":
        SREG_RE = SREG_RE_MIXED_CASE
    OUT = ROOT / "ptxc" / "sass" / f"{arch}.json"


CTRL_BITS = range(105, 126)          # the scheduling word (ptxc.sass.ir.Control)
REUSE_BITS = range(122, 126)         # its operand-reuse flags
PROBE_BITS = [b for b in range(128) if b not in CTRL_BITS]
MAX_RUN = 10                         # longest run of modifier bits enumerated at once
ZERO = {"R": 255, "UR": 63, "P": 7, "UP": 7}

# ---------------------------------------------------------------------------------------
# Probe kernels.  Each body runs after a prelude that leaves: %rd0 = out (global),
# %rd1 = in (global), %r0 = n (param), %f0 = f (param), %r1 = tid.x.  Results must be
# stored or ptxas deletes them.
# ---------------------------------------------------------------------------------------
PROBES = {
    # Uniform address arithmetic: a shared-memory index computed from a parameter alone
    # (n / 2 rounded toward zero, scaled) stays in the uniform datapath: ULEA.HI UR4, UR4,
    # UR4, URZ, 0x1 on sm_89 (the shape of nvcc's PTX for `s[n / 2]`), on sm_90 as well
    # with the quotient itself scaled by shl.
    "uniform_lea_hi": """
  .shared .align 4 .b8 s_ulea[1024];
  mov.u32 %r2, s_ulea; shl.b32 %r3, %r1, 2; add.s32 %r4, %r2, %r3; st.shared.u32 [%r4], %r1; bar.sync 0;
  shr.u32 %r5, %r0, 31; add.s32 %r6, %r0, %r5; shl.b32 %r7, %r6, 1; and.b32 %r8, %r7, -4; add.s32 %r9, %r2, %r8;
  ld.shared.u32 %r10, [%r9]; st.global.u32 [%rd0], %r10;
""",
    "uniform_lea_hi_scaled": """
  .shared .align 4 .b32 s_ulea2[256];
  mov.u32 %r2, s_ulea2; shl.b32 %r3, %r1, 2; add.s32 %r4, %r2, %r3; st.shared.u32 [%r4], %r1; bar.sync 0;
  shr.u32 %r5, %r0, 31; add.s32 %r6, %r0, %r5; shr.s32 %r7, %r6, 1; shl.b32 %r8, %r7, 2; add.s32 %r9, %r2, %r8;
  ld.shared.u32 %r10, [%r9]; st.global.u32 [%rd0], %r10;
""",
    # 64-bit division and shifts whose divisor / shifted high word ptxas keeps uniform or
    # constant: IMAD.HI.U32 / IMAD.WIDE.U32 with a UR source, SHF.R.S64 with an immediate
    # (found by running ptxas's cubins of random expression kernels on the emulator)
    "uniform_div64": """
  ld.global.u32 %r2, [%rd1]; ld.global.u32 %r3, [%rd1+4];
  cvt.u64.u32 %rd2, %r2; or.b64 %rd3, %rd2, -4294967296; and.b32 %r4, %r3, 63; shr.s64 %rd4, %rd3, %r4;
  st.global.u64 [%rd0], %rd4;
  ld.global.u64 %rd5, [%rd1+8]; ld.global.u64 %rd6, [%rd1+16];
  cvt.u64.u32 %rd7, %r0; mul.lo.s64 %rd8, %rd7, 0x100000001;
  rem.u64 %rd9, %rd8, %rd5; st.global.u64 [%rd0+8], %rd9;
  sub.s64 %rd10, 0, %rd8; div.u64 %rd11, %rd10, %rd6; st.global.u64 [%rd0+16], %rd11;
  mul.hi.u32 %r5, %r3, %r0; st.global.u32 [%rd0+24], %r5;
""",
    # Immediate sources ptxas leaves where a value is a known constant but the operation is
    # not folded (found by running nvcc's and ptxas's cubins of random statement kernels,
    # scripts/fuzz_kernels.py): I2F.F64 / I2FP.F32.U32.RZ of a constant, IMAD.X with -0x1
    # (the high word of a zero-extended value minus a constant), LEA.HI.X(.SX32) with
    # 0xffffffff (a sign-extended index plus a negative constant), IADD3 with two carries
    # and an immediate.
    "imm_sources": """
  .reg .f64 %db<8>;
  ld.global.u32 %r2, [%rd1]; ld.global.u32 %r3, [%rd1+4]; ld.global.u64 %rd2, [%rd1+8];
  mov.u32 %r4, 7; cvt.rn.f64.s32 %db1, %r4; mov.u32 %r5, 11; cvt.rn.f64.u32 %db2, %r5;
  mov.u32 %r6, 9; cvt.rz.f32.u32 %f1, %r6; mov.u32 %r7, 13; cvt.rm.f32.s32 %f2, %r7;
  st.global.v2.f64 [%rd0], {%db1, %db2}; st.global.v2.f32 [%rd0+16], {%f1, %f2};
  cvt.u64.u32 %rd3, %r2; add.s64 %rd4, %rd3, -5; st.global.u64 [%rd0+24], %rd4;
  cvt.s64.s32 %rd5, %r3; shl.b64 %rd6, %rd5, 1; add.s64 %rd7, %rd6, -4096; st.global.u64 [%rd0+32], %rd7;
  add.s64 %rd8, %rd2, %rd7; add.s64 %rd9, %rd8, 17; st.global.u64 [%rd0+40], %rd9;
  ld.global.u32 %r8, [%rd1+16]; cvt.s64.s32 %rd11, %r8; add.s64 %rd10, %rd11, -1; st.global.u64 [%rd0+48], %rd10;
""",
    # 64-bit signed division of a uniform, zero-extended dividend, twice (ptxas makes it a
    # subroutine taking the dividend in uniform registers): sm_89 negates its zero high
    # word with IMAD.X R, RZ, RZ, ~UR, P.  uniform_sub64: a uniform zero-extended value
    # minus a constant and negated: UIADD3 with a carry out and a negated source, UIADD3.X
    # with -0x1.
    "uniform_sdiv64": """
  ld.global.u64 %rd2, [%rd1]; ld.global.u64 %rd3, [%rd1+8];
  cvt.u64.u32 %rd4, %r0; and.b64 %rd5, %rd4, 1048575;
  div.s64 %rd6, %rd5, %rd2; div.s64 %rd7, %rd5, %rd3; st.global.v2.u64 [%rd0], {%rd6, %rd7};
""",
    "uniform_sub64": """
  ld.global.u64 %rd2, [%rd1]; ld.global.u64 %rd3, [%rd1+8]; cvt.u64.u32 %rd4, %r0;
  add.s64 %rd8, %rd4, -7; sub.s64 %rd9, 0, %rd4; mul.lo.s64 %rd10, %rd8, %rd2; mul.lo.s64 %rd11, %rd9, %rd3;
  st.global.v2.u64 [%rd0+16], {%rd10, %rd11};
""",
    # uniform operands throughout: ULOP3.LUT of three uniform registers, and 64-bit
    # unsigned division by a uniform divisor (I2F.U64.RP R, UR) (random expression kernels)
    "uniform_ops": """
  ld.param.u64 %rd2, [p_in]; cvt.u64.u32 %rd3, %r0; mul.lo.s64 %rd4, %rd3, %rd2; or.b64 %rd5, %rd4, 1;
  ld.global.u64 %rd6, [%rd1]; div.u64 %rd7, %rd6, %rd5; st.global.u64 [%rd0], %rd7;
  ld.param.u64 %rd8, [p_out]; cvt.u32.u64 %r2, %rd8; mul.lo.s32 %r3, %r0, %r0; xor.b32 %r4, %r2, %r3;
  add.s32 %r5, %r1, %r4; st.global.u32 [%rd0+8], %r5;
""",
    "sregs": """
  mov.u32 %r2, %tid.y; mov.u32 %r3, %tid.z; mov.u32 %r4, %ctaid.x; mov.u32 %r5, %ctaid.y;
  mov.u32 %r6, %ctaid.z; mov.u32 %r7, %laneid; mov.u32 %r8, %warpid; mov.u32 %r9, %smid;
  mov.u32 %r10, %lanemask_lt; mov.u32 %r11, %ntid.x;
  st.global.v4.u32 [%rd0], {%r2, %r3, %r4, %r5}; st.global.v4.u32 [%rd0+16], {%r6, %r7, %r8, %r9};
  st.global.v2.u32 [%rd0+32], {%r10, %r11};
""",
    "imad": """
  ld.global.u32 %r2, [%rd1]; ld.global.u32 %r3, [%rd1+4]; ld.global.u32 %r4, [%rd1+8];
  mad.lo.s32 %r5, %r2, %r3, %r4; mad.lo.s32 %r6, %r2, 12345, %r4; mad.lo.s32 %r7, %r2, %r0, %r4;
  mad.lo.s32 %r8, %r2, %r3, %r0; mul.hi.s32 %r9, %r2, %r3; mul.hi.u32 %r10, %r2, %r4;
  mul.lo.s32 %r11, %r2, 8; add.s32 %r12, %r3, %r4;
  st.global.v4.u32 [%rd0], {%r5, %r6, %r7, %r8}; st.global.v4.u32 [%rd0+16], {%r9, %r10, %r11, %r12};
""",
    "imad_wide": """
  ld.global.u32 %r2, [%rd1]; ld.global.u32 %r3, [%rd1+4];
  mul.wide.s32 %rd2, %r2, %r3; mul.wide.u32 %rd3, %r2, %r3; mul.wide.s32 %rd4, %r2, 12345;
  mul.wide.u32 %rd5, %r2, %r0; cvt.u64.u32 %rd9, %r0; mad.wide.u32 %rd6, %r2, %r3, %rd9;
  st.global.v2.u64 [%rd0], {%rd2, %rd3}; st.global.v2.u64 [%rd0+16], {%rd4, %rd5};
  st.global.u64 [%rd0+32], %rd6;
""",
    "isetp": """
  ld.global.u32 %r2, [%rd1]; ld.global.u32 %r3, [%rd1+4]; ld.global.u64 %rd2, [%rd1+8];
  setp.lt.s32 %p1, %r2, %r3; setp.eq.s32 %p2, %r2, %r0; setp.le.u32 %p3, %r2, 77;
  setp.gt.and.s32 %p4, %r3, %r0, %p1; setp.ne.or.u32 %p5, %r3, %r2, %p2;
  setp.ge.xor.s32 %p6, %r2, 5, %p3; setp.lt.s64 %p7, %rd2, %rd1;
  selp.u32 %r4, 1, 0, %p1; selp.u32 %r5, 1, 0, %p4; selp.u32 %r6, 1, 0, %p5; selp.u32 %r7, 1, 0, %p6;
  selp.u32 %r8, %r2, %r3, %p7;
  st.global.v4.u32 [%rd0], {%r4, %r5, %r6, %r7}; st.global.u32 [%rd0+16], %r8;
""",
    "float_atomics": """
  .reg .f64 %da<4>;
  ld.global.f32 %f1, [%rd1]; ld.global.f64 %da1, [%rd1+8];
  atom.global.add.f32 %f2, [%rd0], %f1; atom.global.add.f64 %da2, [%rd0+8], %da1;
  atom.add.f32 %f3, [%rd1+16], %f0; red.global.add.f32 [%rd0+24], %f1;
  st.global.f32 [%rd0+32], %f2; st.global.f32 [%rd0+36], %f3; st.global.f64 [%rd0+40], %da2;
""",
    "exit_bra": """
  setp.ge.s32 %p1, %r1, %r0; @%p1 bra DONE;
  setp.eq.s32 %p2, %r1, 7; @!%p2 bra SKIP;
  st.global.u32 [%rd0], %r1;
SKIP:
  st.global.u32 [%rd0+4], %r0;
DONE:
""",
    "exit_notp": """
  setp.lt.s32 %p1, %r1, %r0; @!%p1 bra DONE;
  st.global.u32 [%rd0], %r1;
DONE:
""",
    "loop": """
  mov.u32 %r2, 0;
LOOP:
  ld.global.u32 %r3, [%rd1];
  add.s32 %r2, %r2, %r3;
  setp.lt.u32 %p1, %r2, %r0;
  @%p1 bra LOOP;
  st.global.u32 [%rd0], %r2;
""",
    "ldst": """
  ld.global.u8 %r2, [%rd1+1]; ld.global.s8 %r3, [%rd1+2]; ld.global.u16 %r4, [%rd1+4];
  ld.global.s16 %r5, [%rd1+6]; ld.global.u32 %r6, [%rd1+8]; ld.global.u64 %rd2, [%rd1+16];
  ld.global.v4.u32 {%r7, %r8, %r9, %r10}, [%rd1+32];
  add.s64 %rd9, %rd1, -4; ld.global.u32 %r11, [%rd9];
  st.global.u8 [%rd0+1], %r2; st.global.u8 [%rd0+2], %r3; st.global.u16 [%rd0+4], %r4;
  st.global.u16 [%rd0+6], %r5; st.global.u32 [%rd0+8], %r6; st.global.u64 [%rd0+16], %rd2;
  st.global.v4.u32 [%rd0+32], {%r7, %r8, %r9, %r10};
  add.s64 %rd8, %rd0, -8; st.global.u32 [%rd8], %r11;
""",
    "fadd": """
  ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4];
  add.f32 %f3, %f1, %f2; add.f32 %f4, %f1, 0f3F000000; add.f32 %f5, %f1, %f0; sub.f32 %f6, %f2, %f1;
  abs.f32 %f7, %f2; add.f32 %f8, %f7, %f1; neg.f32 %f9, %f0; sub.f32 %f10, %f9, %f1;
  mul.f32 %f11, %f1, %f2; fma.rn.f32 %f12, %f1, %f2, %f3; mul.f32 %f13, %f1, 0f40400000;
  fma.rn.f32 %f14, %f1, %f0, %f2;
  st.global.v4.f32 [%rd0], {%f3, %f4, %f5, %f6}; st.global.v4.f32 [%rd0+16], {%f8, %f10, %f11, %f12};
  st.global.v2.f32 [%rd0+32], {%f13, %f14};
""",
    "int64": """
  ld.global.u64 %rd2, [%rd1]; ld.global.u64 %rd3, [%rd1+8];
  ld.global.u32 %r2, [%rd1+16]; ld.global.u32 %r3, [%rd1+20];
  add.s64 %rd4, %rd2, %rd3; sub.s64 %rd5, %rd2, %rd3; mul.wide.s32 %rd6, %r2, 4; add.s64 %rd7, %rd2, %rd6;
  shl.b32 %r4, %r2, 3; shr.u32 %r5, %r2, %r3; shr.s32 %r6, %r2, 5; and.b32 %r7, %r2, %r3;
  or.b32 %r8, %r2, 255; xor.b32 %r9, %r2, %r0; setp.lt.s32 %p1, %r2, %r3; selp.b32 %r11, %r2, %r3, %p1;
  max.s32 %r12, %r2, %r3; min.u32 %r13, %r2, %r3; add.s32 %r14, %r2, %r3; add.s32 %r14, %r14, 9;
  st.global.v2.u64 [%rd0], {%rd4, %rd5}; st.global.u64 [%rd0+16], %rd7;
  st.global.v4.u32 [%rd0+32], {%r4, %r5, %r6, %r7}; st.global.v4.u32 [%rd0+48], {%r8, %r9, %r11, %r11};
  st.global.v4.u32 [%rd0+64], {%r12, %r13, %r14, %r14};
""",
    "lea": """
  ld.global.u64 %rd2, [%rd1]; ld.global.u32 %r2, [%rd1+8]; ld.global.u32 %r3, [%rd1+12];
  cvt.u64.u32 %rd3, %r2; shl.b64 %rd4, %rd3, 2; add.s64 %rd5, %rd2, %rd4;
  cvt.s64.s32 %rd6, %r3; shl.b64 %rd7, %rd6, 3; add.s64 %rd8, %rd2, %rd7;
  shl.b64 %rd9, %rd2, 4; add.s64 %rd10, %rd9, %rd0; cvta.to.global.u64 %rd10, %rd10;
  ld.global.u32 %r4, [%rd5]; ld.global.u32 %r5, [%rd8]; shl.b32 %r6, %r2, 2; add.s32 %r7, %r6, %r3;
  st.global.u32 [%rd10], %r4; st.global.u32 [%rd10+4], %r5; st.global.u32 [%rd10+8], %r7;
""",
    "imad_const": """
  mov.u32 %r2, %tid.y; mov.u32 %r3, %laneid; mul.lo.s32 %r5, %r2, %r3; mad.lo.s32 %r6, %r5, 12345, %r1;
  mul.wide.u32 %rd3, %r6, 8; add.s64 %rd4, %rd0, %rd3; st.global.u32 [%rd4], %r6;
  mul.wide.s32 %rd5, %r6, 12; add.s64 %rd6, %rd1, %rd5; st.global.u32 [%rd6], %r5;
""",
    "int64_imm": """
  ld.global.u64 %rd2, [%rd1]; ld.global.u64 %rd3, [%rd1+8]; ld.param.u64 %rd4, [p_out];
  add.s64 %rd5, %rd2, 12345678901; add.s64 %rd6, %rd2, %rd4; sub.s64 %rd7, %rd4, %rd2;
  setp.lt.s64 %p1, %rd2, %rd3; setp.ne.u64 %p2, %rd2, 77; setp.gt.u64 %p3, %rd2, %rd4;
  selp.u32 %r2, 1, 0, %p1; selp.u32 %r3, 1, 0, %p2; selp.u32 %r4, 1, 0, %p3;
  st.global.v2.u64 [%rd0], {%rd5, %rd6}; st.global.u64 [%rd0+16], %rd7;
  st.global.v2.u32 [%rd0+24], {%r2, %r3}; st.global.u32 [%rd0+32], %r4;
""",
    "ffma": """
  ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4]; ld.global.f32 %f3, [%rd1+8];
  fma.rn.f32 %f4, %f1, 0f40000000, %f2; fma.rn.f32 %f5, %f1, %f2, %f0; abs.f32 %f6, %f0;
  add.f32 %f7, %f6, %f1; neg.f32 %f8, %f3; fma.rn.f32 %f9, %f8, %f2, %f1; sub.f32 %f10, %f1, 0f3F800000;
  mul.f32 %f11, %f1, %f0; add.ftz.f32 %f12, %f1, %f3;
  st.global.v4.f32 [%rd0], {%f4, %f5, %f7, %f9}; st.global.v4.f32 [%rd0+16], {%f10, %f11, %f12, %f12};
""",
    "logic": """
  ld.global.u32 %r2, [%rd1]; ld.global.u32 %r3, [%rd1+4];
  and.b32 %r4, %r2, 255; setp.ne.u32 %p1, %r4, 0; not.b32 %r5, %r3; or.b32 %r6, %r5, %r0;
  selp.u32 %r7, %r2, 7, %p1; shr.u32 %r8, %r2, 20; shl.b32 %r9, %r3, %r2; shr.s32 %r10, %r3, %r2;
  shr.u32 %r11, %r2, 30; add.s32 %r12, %r11, %r3;
  st.global.v4.u32 [%rd0], {%r6, %r7, %r8, %r9}; st.global.v2.u32 [%rd0+16], {%r10, %r12};
""",
    "clock": """
  mov.u64 %rd2, %clock64; mov.u32 %r2, %clock; st.global.u64 [%rd0], %rd2; st.global.u32 [%rd0+8], %r2;
""",
    # half precision as ptxas lowers it alone (isa_half.cu's nvcc fuses most of it away):
    # HMUL2 with .H0_H0 halves and .FTZ/.SAT, |x| and -x through HADD2 with -RZ, the NaN
    # max, HSETP2 of single halves and of pairs, F2F.F16.F64, F2FP's .RZ.
    "half": """
  .reg .b16 %h<32>; .reg .f64 %fd<8>;
  ld.global.u16 %h1, [%rd1]; ld.global.u16 %h2, [%rd1+64]; ld.global.u16 %h3, [%rd1+128];
  ld.global.u32 %r2, [%rd1+192]; ld.global.u32 %r3, [%rd1+256]; ld.global.f64 %fd1, [%rd1+320];
  mul.f16 %h4, %h1, %h2; st.global.u16 [%rd0], %h4;
  mul.ftz.sat.f16 %h5, %h1, %h3; st.global.u16 [%rd0+64], %h5;
  abs.f16 %h6, %h2; st.global.u16 [%rd0+128], %h6;
  max.NaN.f16 %h7, %h2, %h3; st.global.u16 [%rd0+192], %h7;
  mul.f16x2 %r4, %r2, %r3; st.global.u32 [%rd0+256], %r4;
  mul.ftz.sat.f16x2 %r5, %r2, %r3; st.global.u32 [%rd0+320], %r5;
  abs.f16x2 %r6, %r3; st.global.u32 [%rd0+384], %r6;
  neg.f16x2 %r7, %r2; st.global.u32 [%rd0+448], %r7;
  setp.lt.f16 %p1, %h1, %h2; selp.u32 %r8, 1, 0, %p1; st.global.u32 [%rd0+512], %r8;
  setp.gtu.ftz.f16 %p2, %h2, %h3; selp.u32 %r9, 1, 0, %p2; st.global.u32 [%rd0+576], %r9;
  setp.eq.f16x2 %p3|%p4, %r2, %r3; selp.u32 %r10, %r2, %r3, %p3; selp.u32 %r11, %r3, %r0, %p4;
  st.global.u32 [%rd0+640], %r10; st.global.u32 [%rd0+704], %r11;
  cvt.rn.f16.f64 %h8, %fd1; st.global.u16 [%rd0+768], %h8;
  cvt.rz.f16.f32 %h9, %f0; st.global.u16 [%rd0+896], %h9;
  sub.ftz.f16 %h10, %h3, %h1; st.global.u16 [%rd0+960], %h10;
""",
    # generic addresses (no state space): LD/ST with the .E descriptor like LDG/STG; the
    # sizes and orderings come from enumerating their modifier bits.  Offsets 64 apart so
    # that ptxas does not merge neighbouring accesses.
    "generic": """
  ld.u8 %r2, [%rd1+1]; ld.s16 %r3, [%rd1+66]; ld.u32 %r4, [%rd1+128]; ld.u64 %rd2, [%rd1+192];
  ld.v4.u32 {%r5, %r6, %r7, %r8}, [%rd1+256]; ld.volatile.u32 %r9, [%rd1+320];
  add.s64 %rd9, %rd1, -4; ld.u32 %r10, [%rd9];
  st.u8 [%rd0+1], %r2; st.u16 [%rd0+66], %r3; st.u32 [%rd0+128], %r4; st.u64 [%rd0+192], %rd2;
  st.v4.u32 [%rd0+256], {%r5, %r6, %r7, %r8}; st.volatile.u32 [%rd0+320], %r9;
  add.s64 %rd8, %rd0, -8; st.u32 [%rd8], %r10;
""",
    "local": """
  .local .align 4 .b32 lbuf[16];
  ld.global.u32 %r2, [%rd1]; and.b32 %r3, %r2, 15; shl.b32 %r3, %r3, 2; mov.u32 %r4, lbuf; add.s32 %r5, %r4, %r3;
  st.local.u32 [%r5], %r1; ld.local.u32 %r6, [lbuf+4]; st.global.u32 [%rd0], %r6;
""",
}

PRELUDE = """.visible .entry {name}(.param .u64 p_out, .param .u64 p_in, .param .u32 p_n, .param .f32 p_f)
{{
  .reg .b32 %r<64>; .reg .b64 %rd<64>; .reg .pred %p<16>; .reg .f32 %f<64>;
  ld.param.u64 %rd0, [p_out]; cvta.to.global.u64 %rd0, %rd0;
  ld.param.u64 %rd1, [p_in]; cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r0, [p_n]; ld.param.f32 %f0, [p_f]; mov.u32 %r1, %tid.x;
{body}
  ret;
}}
"""


def probe_ptx(probes: dict) -> tuple[str, list[tuple[int, str]]]:
    """One PTX module holding these probe kernels, and (first line, name) of each."""
    text = "\n".join([".version 8.0", f".target {ARCH}", ".address_size 64", ptx_probes.HEADER, ""])
    starts = []
    for name, body in probes.items():
        starts.append((text.count("\n") + 1, name))
        text += PRELUDE.format(name=name, body=body) + "\n"
    return text, starts


def all_probes() -> dict:
    """PROBES (written for a reason each) and the generated ones (scripts/ptx_probes.py:
    every PTX instruction x type x operand shape)."""
    return {**PROBES, **ptx_probes.generated()}


# ---------------------------------------------------------------------------------------
# What the table says beyond encodings, for the emulator, the scheduler and the hazard
# checker.  nvdisasm cannot tell these, so they are declarations, each written from the
# PTX ISA / CUDA documentation of the operation, not measured:
#
# LATENCY: the scheduling class of each form, (op, a modifier token it must have or
#   None, class), first match wins.  The class names are those of the scheduler's
#   measured table (ptxc/sass/sm_89_latencies.json, op_rules), which owns the numbers.
# ---------------------------------------------------------------------------------------
LATENCY = [
    ("IMAD", "WIDE", "imad_wide"), ("IMAD", "HI", "imad_hi"), ("IMAD", None, "imad"),
    ("HFMA2", "MMA", "fp16_mma"),
    *[(op, None, "alu") for op in ("MOV", "IADD3", "LOP3", "SHF", "ISETP", "SEL", "PRMT", "LEA", "IMNMX", "IABS",
                                   "SGXT", "FMNMX", "FSETP", "FSEL", "PLOP3", "P2R", "R2P", "BMSK", "I2FP", "F2FP",
                                   "CS2R", "VABSDIFF", "VABSDIFF4")],
    *[(op, None, "fma") for op in ("FFMA", "FADD", "FMUL")],
    *[(op, None, "fp16") for op in ("HADD2", "HMUL2", "HFMA2", "HSETP2", "HMNMX2")],
    *[(op, None, "fp64") for op in ("DADD", "DMUL", "DFMA", "DSETP")],
    *[(op, None, "xu") for op in ("MUFU", "F2I", "I2F", "F2F", "FRND", "POPC", "BREV", "FCHK")],
    ("FLO", None, "flo"), ("S2R", None, "s2r"),
    *[(op, None, "uldc") for op in ("ULDC", "UMOV")],
    *[(op, None, "udp") for op in ("UIADD3", "ULOP3", "USHF", "UISETP", "UIMAD", "USEL", "ULEA", "UFLO", "UPOPC",
                                   "UBREV", "UPRMT", "USGXT")],
    *[(op, None, "uniform_var") for op in ("S2UR", "R2UR", "REDUX")],
    ("VOTEU", None, "voteu"), ("VOTE", None, "vote"), ("MATCH", None, "match"), ("SHFL", None, "shfl"),
    *[(op, None, "lsu_shared") for op in ("LDS", "STS")], ("ATOMS", None, "atom_shared"),
    *[(op, None, "atom_global") for op in ("ATOMG", "ATOM", "RED")],
    *[(op, None, "lsu_global") for op in ("LDG", "STG", "LDL", "STL", "LD", "ST")],
    ("QSPC", None, "lsu_global"),   # asks the memory system which window a generic address is in
    ("LDC", None, "ldc"), ("BAR", None, "bar"), ("B2R", None, "bar"),
    *[(op, None, "membar") for op in ("MEMBAR", "ERRBAR", "CCTL")],
    *[(op, None, "branch") for op in ("BRA", "EXIT", "BSYNC", "CALL", "RET", "BREAK", "BRX", "JMP", "KILL")],
    *[(op, None, "convergence") for op in ("BSSY", "WARPSYNC", "BMOV", "YIELD")],
    ("NOP", None, "nop"),
    # From the generated probes (scripts/ptx_probes.py), declared by the class the
    # scheduler's op_rules give the op (sm_89_latencies.json): the asynchronous
    # global->shared copy of cp.async and its waits, the PC read of indirect calls,
    # integer narrowing and packing conversions, the dot products, the trap.
    ("LDGSTS", None, "lsu_global"), *[(op, None, "depbar") for op in ("DEPBAR", "LDGDEPBAR")],
    ("NANOSLEEP", None, "convergence"), ("IDP", None, "imad"),
    *[(op, None, "alu") for op in ("I2I", "I2IP", "F2IP", "LEPC")], ("BPT", None, "branch"),
    # sm_90 only: the integer add / min-max of the vector pipe (where sm_89 has IADD3 and
    # IMNMX), the global reduction (sm_89's RED), the cluster error barrier and the end of
    # an emulated warp collective.  Declared like the rest; their numbers are measured in
    # ptxc/sass/sm_90_latencies.json.
    *[(op, None, "alu") for op in ("VIADD", "VIMNMX", "VIMNMX3", "VIADDMNMX")],
    ("REDG", None, "atom_global"), ("CGAERRBAR", None, "membar"), ("ENDCOLLECTIVE", None, "convergence"),
]
# WIDTHS: registers an operand covers, (op, regex over the whole mnemonic, k, width):
#   the k-th operand that is not a predicate (or a special register) covers `width`
#   32-bit registers when the regex matches (IMAD.WIDE's destination and addend, the
#   data of LDG.E.64, every operand of DADD); 1 otherwise.  Addresses say `.64` on their
#   own.
WIDE_LOADS = [(r"\.64(\.|$)", 2), (r"\.128(\.|$)", 4)]
WIDTHS = [
    ("IMAD", r"\.WIDE", 0, 2), ("IMAD", r"\.WIDE", 3, 2),
    ("UIMAD", r"\.WIDE", 0, 2), ("UIMAD", r"\.WIDE", 3, 2),
    ("ULDC", r"\.64", 0, 2), ("LDC", r"\.64", 0, 2),
    *[(op, p, 0, w) for op in ("LDG", "LDS", "LDL", "LD") for p, w in WIDE_LOADS],
    *[(op, p, 1, w) for op in ("STG", "STS", "STL", "ST", "RED", "REDG") for p, w in WIDE_LOADS],
    *[(op, r"\.64(\.|$)", k, 2) for op in ("ATOMG", "ATOM", "ATOMS") for k in (0, 2, 3)],
    ("F2F", r"^F2F\.F64", 0, 2), ("F2F", r"^F2F\.[A-Z0-9]+\.F64", 1, 2),
    ("F2I", r"\.[SU]64", 0, 2), ("F2I", r"\.F64", 1, 2),
    ("FRND", r"\.F64", 0, 2), ("FRND", r"\.F64", 1, 2),
    ("I2F", r"^I2F\.F64", 0, 2), ("I2F", r"\.[SU]64", 1, 2),
    *[(op, "", k, 2) for op in ("DADD", "DMUL", "DFMA", "DSETP") for k in range(4)],
    ("CS2R", r"^CS2R(?!\.32)", 0, 2),
    ("RET", "", 0, 2), ("CALL", "", 0, 2),  # the 64-bit return / target address
    ("LEPC", "", 0, 2),                     # LEPC R2: the 64-bit program counter
]
# Which leading operands are written: by default the first register and the predicates
# right after it (ISETP P0, PT; IADD3 R0, P0).  DSTS says otherwise by op and the kinds
# the operands start with; NO_DSTS ops write none of their operands.
NO_DSTS = {"STG", "STS", "STL", "ST", "RED", "EXIT", "BRA", "NOP", "BSYNC", "BREAK", "WARPSYNC", "CALL", "RET",
           "BAR", "YIELD", "CCTL", "MEMBAR", "ERRBAR", "REDG", "CGAERRBAR", "ENDCOLLECTIVE", "BRX", "JMP",
           "LDGSTS", "DEPBAR", "LDGDEPBAR", "NANOSLEEP", "BPT"}
DSTS = {
    ("LOP3", ("P", "R")): 2,            # LOP3.LUT P0, RZ, ...: the predicate and the register
    ("PLOP3", ("P", "P")): 2,           # PLOP3.LUT P0, PT, PT, PT, PT, 0x80, 0x0
    ("VOTE", ("R", "P")): 2,            # VOTE.ANY R4, PT, !P1
    ("VOTE", ("P",)): 1,                # VOTE.ALL P1, P1 (RZ hidden)
    ("VOTEU", ("UR", "UP")): 2,         # VOTEU.ANY UR6, UPT, PT
    ("ATOMG", ("P", "R")): 2, ("ATOM", ("P", "R")): 2,   # ATOMG.E.ADD PT, R4, [R4.64], R7
    ("SHFL", ("P", "R")): 2,            # SHFL.IDX PT, R5, R4, R5, 0x1f
    ("MATCH", ("P", "R")): 2,           # MATCH.ALL P0, R9, R9
    ("R2P", ("S",)): 1,                 # R2P PR, R2, 0x7e: PR (the predicates) is written
    ("QSPC", ("P", "R")): 2,            # QSPC.E.S P1, RZ, [R4]: is [R4] in the shared window
}
# Sources that the instruction also writes: (op, a modifier token it must have or None,
# operand index).  BMOV.32.CLEAR R16, B6 clears B6; BREAK B0 takes threads out of B0.
ALSO_WRITTEN = [("BMOV", "CLEAR", 1), ("BREAK", None, 0)]
# EFFECTS: (op, key, value) for what is not an operand:
#   mem      {"space": global|shared|local|const|generic, "access": load|store|atomic|reduce}
#   control  branch|exit|call|return|converge|warpsync|barrier|yield|fence
#   implicit a register read (role src) or written (dst) that no operand names, with the
#            modifier token it depends on ("if"): sm_89's `.E` global accesses read the
#            64-bit memory descriptor that ptxas always loads into UR4 (ULDC.64 UR4,
#            c[0x0][0x118]; sm_90 prints it: desc[UR4]); P2R reads P0..P6.
E_DESCRIPTOR = {"role": "src", "file": "UR", "num": 4, "width": 2, "if": "E"}
# HIDDEN: operand parts the word holds but nvdisasm does not print, so that flipping
# their bits shows nothing: (op, part of its memory operand, bits).  The memory
# descriptor register of `.E` global accesses is one: ptxas writes the UR of its
# ULDC.64 URn, c[0x0][0x118] there (UR4 mostly, UR6/UR10/UR36 in other kernels:
# seen in nvcc's words over testsuite/, and decode -> encode checks every such word).
# Declared where it lies; used only where those bits print nothing (ATOMG.E.CAS keeps a
# data register there).
HIDDEN = [*[(op, "desc", [[32, 6, 0]]) for op in ("LDG", "LD")],
          *[(op, "desc", [[64, 6, 0]]) for op in ("STG", "ST", "RED", "ATOMG", "ATOM")]]
EFFECTS = [
    *[(op, "mem", {"space": space, "access": access}) for op, space, access in (
        ("LDG", "global", "load"), ("STG", "global", "store"), ("LD", "generic", "load"), ("ST", "generic", "store"),
        ("LDS", "shared", "load"), ("STS", "shared", "store"), ("LDL", "local", "load"), ("STL", "local", "store"),
        ("LDC", "const", "load"), ("ULDC", "const", "load"), ("ATOMG", "global", "atomic"),
        ("ATOM", "generic", "atomic"), ("ATOMS", "shared", "atomic"), ("RED", "global", "reduce"),
        ("REDG", "global", "reduce"),
        ("LDGSTS", "global", "copy"))],   # cp.async: global memory into shared memory, no register
    *[(op, "implicit", E_DESCRIPTOR) for op in ("LDG", "STG", "LD", "ST", "ATOMG", "ATOM", "RED", "REDG", "LDGSTS")],
    ("P2R", "implicit", {"role": "src", "file": "P", "num": 0, "width": 7}),   # P2R R0, PR, RZ, 0x7f
    ("R2P", "implicit", {"role": "dst", "file": "P", "num": 0, "width": 7}),   # R2P PR, R2, 0x7e
    *[(op, "control", c) for op, c in (
        ("BRA", "branch"), ("BRX", "branch"), ("JMP", "branch"), ("EXIT", "exit"), ("KILL", "exit"),
        ("CALL", "call"), ("RET", "return"), ("BSSY", "converge"), ("BSYNC", "converge"), ("BREAK", "converge"),
        ("BMOV", "converge"), ("WARPSYNC", "warpsync"), ("BAR", "barrier"), ("YIELD", "yield"),
        ("MEMBAR", "fence"), ("ERRBAR", "fence"), ("CCTL", "fence"), ("CGAERRBAR", "fence"),
        ("ENDCOLLECTIVE", "converge"), ("NANOSLEEP", "yield"), ("DEPBAR", "fence"), ("LDGDEPBAR", "fence"),
        ("BPT", "exit"))],   # BPT.TRAP ends the thread (the launch fails)
]

# Printing aliases: nvdisasm renames IMAD by its operand values.  These are hypotheses
# (from looking at nvdisasm's output); step 5 keeps a rule on a form only if nvdisasm
# shows it there, and step 6 checks random encodings against them.  Each rule: the token
# inserted first among the modifiers, and alternatives, each a set of operand conditions
# ("zero": RZ, "imm=N": that immediate, "pow2": an immediate 2..2^30 that is a power of 2).
ALIASES = {
    "IMAD": [
        ("MOV", [{1: "zero"}, {2: "zero"}, {2: "imm=0"}, {2: "imm=1", 3: "zero"}]),
        ("IADD", [{2: "imm=1"}]),
        ("SHL", [{2: "pow2", 3: "zero"}]),
    ],
}


# ---------------------------------------------------------------------------------------
# Oracle access, batched.
# ---------------------------------------------------------------------------------------
def nvdisasm_batch(words: list[int], arch: str | None = None) -> list[str | None]:
    """Disassemble 128-bit words placed at 0x0, 0x10, ...; None for an illegal word.

    nvdisasm refuses the whole file when any word is illegal but names each bad address,
    so a second run with those words replaced by a word it did not complain about gives
    the rest (in place, so that branch targets keep their addresses).  `arch`: 'sm_90'
    (default: the architecture being learned)."""
    nvdisasm = str(oracle.require("nvdisasm"))
    target = arch.replace("sm_", "SM") if arch else NVDISASM_ARCH
    illegal: set[int] = set()
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "words.bin"
        while True:
            fine = [w for i, w in enumerate(words) if i not in illegal]
            if not fine:
                return [None] * len(words)
            raw.write_bytes(b"".join(
                (fine[0] if i in illegal else w).to_bytes(16, "little") for i, w in enumerate(words)))
            proc = subprocess.run([nvdisasm, "-ndf", "-b", target, str(raw)], capture_output=True, text=True)
            bad = {int(a, 16) // 16 for a in re.findall(r"at address 0x([0-9a-fA-F]+)", proc.stderr)}
            if proc.returncode == 0 and not bad:
                break
            if not bad - illegal:
                raise RuntimeError(f"nvdisasm failed:\n{proc.stderr}")
            illegal |= bad
    # A few words print nothing and raise no error: they count as illegal too.
    texts = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s*/\*([0-9a-f]+)\*/\s*(.*?)\s*$", line)
        if m:
            texts[int(m.group(1), 16) // 16] = m.group(2)
    return [None if i in illegal else texts.get(i) for i in range(len(words))]


def cuobjdump_words(cubin: Path) -> list[tuple[str, int, int, str]]:
    """(function, address, 128-bit word, text) for every instruction cuobjdump prints."""
    lines = oracle.cuobjdump_sass(cubin).splitlines()
    out, func = [], None
    for i, line in enumerate(lines):
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            func = m.group(1)
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*/\* 0x([0-9a-f]{16}) \*/", line)
        if m:
            hi = re.search(r"/\* 0x([0-9a-f]{16}) \*/", lines[i + 1]).group(1)
            out.append((func, int(m.group(1), 16), int(m.group(3), 16) | int(hi, 16) << 64, m.group(2)))
    return out


def compile_testsuite(tmp: Path) -> list[Path]:
    """Every testsuite/*.cu that nvcc compiles, for ARCH (two at a time: nvcc is slow to
    start and the machine is shared)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(cu: Path) -> Path | None:
        proc = oracle.run("nvcc", f"-arch={ARCH}", "-cubin", "-o", str(tmp / f"{cu.stem}.cubin"), str(cu), check=False)
        if proc.returncode:
            print(f"skipped {cu.name}: nvcc rejects it", file=sys.stderr)
            return None
        return tmp / f"{cu.stem}.cubin"

    with ThreadPoolExecutor(2) as pool:
        return [p for p in pool.map(one, sorted((ROOT / "testsuite").glob("*.cu"))) if p]


def compile_probes(tmp: Path, probes: dict | None = None) -> Path:
    """ptxas's cubin of the probes; a kernel ptxas refuses for ARCH (a type the
    instruction does not take there) is left out, and said so."""
    probes = dict(all_probes() if probes is None else probes)
    ptx, cubin = tmp / "probes.ptx", tmp / "probes.cubin"
    for _ in range(100):
        text, starts = probe_ptx(probes)
        ptx.write_text(text)
        proc = oracle.run("ptxas", f"-arch={ARCH}", "-o", str(cubin), str(ptx), check=False)
        if proc.returncode == 0:
            return cubin
        lines = {int(n) for n in re.findall(r"line (\d+); (?:error|fatal)", proc.stderr)}
        bad = {next(name for first, name in reversed(starts) if first <= n) for n in lines if n >= starts[0][0]}
        if not bad:
            raise RuntimeError(f"ptxas refuses the probes:\n{proc.stderr[:2000]}")
        for name in bad:
            print(f"probe {name}: ptxas refuses it for {ARCH}", file=sys.stderr)
            del probes[name]
    raise RuntimeError("ptxas keeps refusing probes")


# ---------------------------------------------------------------------------------------
# Reading nvdisasm's text.
# ---------------------------------------------------------------------------------------
REG_RE = re.compile(r"^(UR|UP|R|P|B)(\d+|Z|T)((?:\.[A-Z0-9_]+)*)$")
NUM_RE = re.compile(r"^-?0x[0-9a-f]+$")
FLOAT_RE = re.compile(r"^[-+]?(\d+(\.\d*)?([eE][-+]?\d+)?|INF|QNAN|SNAN)$")
SREG_RE = re.compile(r"^(SR_[A-Z0-9_.]+|SRZ|SR\d+|PR)$")
# sm_90 names special registers in mixed case too (SR_CgaCtaId, which nvcc uses for shared
# addresses).  sm_89's table was learned without them: with them it would gain
# SR_CirQueueIncrMinusOne (41), so sm_89 keeps the old pattern until it is relearned on purpose.
SREG_RE_MIXED_CASE = re.compile(r"^(SR_[A-Za-z0-9_.]+|SRZ|SR\d+|PR)$")


def reg_number(file: str, num: str) -> int:
    return ZERO[file] if num in ("Z", "T") else int(num)


def parse_address(inner: str, d: dict) -> None:
    """The terms of `[R2.64+UR4+0x10]` or the index of `c[0x3][R8+0x100]`: a missing
    base register is RZ (nvdisasm leaves it out of `[0x4]`), a missing offset 0."""
    for term in inner.split("+"):
        m = REG_RE.match(term)
        if m and m.group(1) == "R":
            sfx = m.group(3)[1:].split(".") if m.group(3) else []
            d["base"] = reg_number("R", m.group(2))
            if "64" in sfx:
                d["base64"] = True
                sfx.remove("64")
            d["scale"] = ".".join(sfx)
        elif m and m.group(1) == "UR" and not m.group(3):
            d["ubase"] = reg_number("UR", m.group(2))
        elif NUM_RE.match(term):
            d["offset"] = int(term, 16)
        else:
            d.update(kind="X")


def parse_operand(text: str) -> dict:
    """An operand as a dict of named parts; 'kind' says which parts it has: a register
    (R UR P UP B: num, sel), a constant (C: bank, offset, index), an integer (I: value), a
    float (F: ftext, read as f16/f32/f64 once its field is learned), an address (M: base,
    base64, scale, ubase, offset), a special register (S: name); neg/abs/inv flags."""
    text = text.strip()
    d: dict = {"neg": False, "abs": False, "inv": False, "text": text}
    if ".reuse" in text:
        text, d["reuse"] = text.replace(".reuse", ""), True
    if NUM_RE.match(text):
        d.update(kind="I", value=int(text, 16))
        return d
    if FLOAT_RE.match(text):
        d.update(kind="F", ftext=text)
        return d
    if text.startswith("-"):
        d["neg"], text = True, text[1:]
    if text[:1] in "!~":
        d["inv"], text = True, text[1:]
    if text.startswith("|") and "|" in text[1:]:
        k = text.index("|", 1)
        d["abs"], text = True, text[1:k] + text[k + 1:]
    m = REG_RE.match(text)
    if m:
        d.update(kind=m.group(1), num=reg_number(m.group(1), m.group(2)), sel=m.group(3)[1:])
        return d
    m = re.match(r"^c\[(0x[0-9a-f]+)\]\[(.*)\]$", text)
    if m:
        d.update(kind="C", bank=int(m.group(1), 16), offset=0, index=ZERO["R"], index_file="R")
        idx: dict = {}
        parse_address(m.group(2), idx)
        d.update(offset=idx.get("offset", 0), index=idx.get("base", ZERO["R"]))
        if idx.get("ubase") is not None and "base" not in idx:  # c[0x3][UR4]
            d.update(index=idx["ubase"], index_file="UR")
        elif idx.get("ubase") is not None:
            d["kind"] = "X"
        if idx.get("kind") or idx.get("scale") or idx.get("base64"):
            d["kind"] = "X"
        return d
    m = re.match(r"^desc\[(UR(?:\d+|Z))\](\[.*\])$", text)  # sm_90 prints the descriptor
    if m:
        d.update(parse_operand(m.group(2)), text=d["text"])
        desc = REG_RE.match(m.group(1))
        d["desc"] = reg_number("UR", desc.group(2))
        return d
    if text.startswith("[") and text.endswith("]"):
        d.update(kind="M", base=ZERO["R"], base64=False, scale="", ubase=None, offset=0)
        parse_address(text[1:-1], d)
        return d
    if SREG_RE.match(text):
        d.update(kind="S", name=text)
        return d
    d["kind"] = "X"
    return d


def split_operands(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def operand_texts(text: str) -> list[tuple[str, str]]:
    """(separator before it, text) per operand: nvdisasm separates operands by ', ' but
    for a register and a target by a space (`CALL.REL.NOINC R8 0x0`)."""
    out = []
    for part in split_operands(text):
        words = part.split()
        if len(words) == 2 and REG_RE.match(words[0]) and NUM_RE.match(words[1]):
            out += [(", ", words[0]), (" ", words[1])]
        else:
            out.append((", ", part))
    return out


@dataclass
class Parsed:
    guard: dict             # {'num': 7, 'inv': False} for no guard
    guard_file: str | None  # 'P' or 'UP' when a guard is printed
    op: str
    mods: tuple
    operands: list
    alias: str | None = None  # a printing alias taken off the modifiers (IMAD.MOV)

    def shape(self) -> tuple:
        return (self.op, tuple(o["kind"] for o in self.operands))


def parse_instr(text: str) -> Parsed:
    body = text.rstrip(";").strip()
    guard, guard_file = {"num": 7, "inv": False}, None
    m = re.match(r"^@(!?)(U?P)(\d|T)\s+(.*)$", body)
    if m:
        guard, guard_file = {"num": reg_number(m.group(2), m.group(3)), "inv": m.group(1) == "!"}, m.group(2)
        body = m.group(4)
    mnemonic, _, rest = body.partition(" ")
    op, *mods = mnemonic.split(".")
    alias = None
    names = {token for token, _ in ALIASES.get(op, [])}
    if mods and mods[0] in names:  # canonical form: learn without the printing alias
        alias = mods.pop(0)
    operands = []
    for sep, t in operand_texts(rest):
        operands.append(dict(parse_operand(t), sep=sep) if sep != ", " else parse_operand(t))
    return Parsed(guard, guard_file, op, tuple(mods), operands, alias)


# ---------------------------------------------------------------------------------------
# Bit classification.
# ---------------------------------------------------------------------------------------
NUMERIC = {"num", "bank", "offset", "index", "value", "base", "ubase", "target", "desc"}
FLAGS = {"neg", "abs", "inv", "base64"}
FLOAT_PART = "ftext"                  # learned as f32, f64 (high word) or f16 bits
NAMED = {"sel", "scale", "name"}      # enumerated: value -> text
IGNORED = {"reuse", "text", "sep"}


def bit(word: int, pos: int) -> int:
    return (word >> pos) & 1


def classify(base: Parsed, new: Parsed | None, targets: set, new_addr: int, base_addr: int):
    """What one flipped bit changed: ('fixed',) ('none',) ('mods',) ('guard', part)
    ('op', index, part) or ('multi', ...)."""
    if new is None or new.shape() != base.shape():
        return ("fixed",)
    changes = []
    if new.guard != base.guard:
        changes += [("guard", k) for k in base.guard if base.guard[k] != new.guard[k]]
    if new.mods != base.mods:
        changes.append(("mods",))
    for j, (a, b) in enumerate(zip(base.operands, new.operands)):
        if j in targets:
            a = dict(a, target=a["value"] - base_addr)
            b = dict(b, target=b["value"] - new_addr)
            a.pop("value"), b.pop("value")
        for key in sorted(set(a) | set(b)):
            if key in IGNORED or key == "kind":
                continue
            if a.get(key, False) != b.get(key, False):
                if a.get(key) is None or b.get(key) is None:  # a part appeared or vanished
                    return ("fixed",)
                changes.append(("op", j, key))
    if not changes:
        return ("none",)
    if len(changes) == 1:
        return changes[0]
    return ("multi",) + tuple(changes)


def part_value(p: Parsed, key: tuple, targets: set, addr: int):
    if key[0] == "guard":
        return p.guard[key[1]]
    operand = p.operands[key[1]]
    if key[1] in targets and key[2] == "target":
        return operand["value"] - addr
    return operand.get(key[2], False)


def numeric_field(positions: list[int], base_word: int, base_value: int, flipped: dict[int, int]):
    """Given the printed value before and after flipping each bit, find each bit's weight.

    Returns (pieces, signed, bias) with pieces [(lo, width, shift)], or None if the bits
    do not behave like one binary number."""
    weights, sign_pos = {}, None
    for pos in positions:
        d = flipped[pos] - base_value
        if d == 0 or abs(d) & (abs(d) - 1):
            return None
        k = abs(d).bit_length() - 1
        normal = d > 0 if bit(base_word, pos) == 0 else d < 0
        if not normal:
            if sign_pos is not None:
                return None
            sign_pos = pos
        weights[pos] = k
    if sign_pos is not None and weights[sign_pos] != max(weights.values()):
        return None
    pieces: list[list[int]] = []
    for pos in sorted(positions):
        if pieces and pieces[-1][0] + pieces[-1][1] == pos and pieces[-1][2] + pieces[-1][1] == weights[pos]:
            pieces[-1][1] += 1
        else:
            pieces.append([pos, 1, weights[pos]])
    raw = field_get(base_word, pieces, sign_pos is not None)
    return pieces, sign_pos is not None, base_value - raw


def field_get(word: int, pieces, signed: bool) -> int:
    return Field(tuple(map(tuple, pieces)), signed).get(word)


def field_put(word: int, pieces, value: int) -> int:
    return Field(tuple(map(tuple, pieces))).put(word, value)


def runs(positions: list[int]) -> list[list[int]]:
    """Consecutive bit positions grouped, long runs split to MAX_RUN."""
    out: list[list[int]] = []
    for pos in sorted(positions):
        if out and out[-1][-1] == pos - 1 and len(out[-1]) < MAX_RUN:
            out[-1].append(pos)
        else:
            out.append([pos])
    return out


def set_bits(word: int, positions: list[int], value: int) -> int:
    for i, pos in enumerate(positions):
        word = (word & ~(1 << pos)) | (((value >> i) & 1) << pos)
    return word


# ---------------------------------------------------------------------------------------
# A form being learned.
# ---------------------------------------------------------------------------------------
@dataclass
class Draft:
    word: int                     # the representative as ptxas wrote it
    addr: int
    parsed: Parsed
    targets: set = field(default_factory=set)
    kinds: dict = field(default_factory=dict)      # bit -> classification
    fixed: set = field(default_factory=set)
    numeric: dict = field(default_factory=dict)    # part key -> (pieces, signed, bias)
    names: dict = field(default_factory=dict)      # part key -> (bits, {value: text})
    mod_runs: list = field(default_factory=list)   # [(bits, {value: mods tuple})]
    reuse: dict = field(default_factory=dict)      # operand index -> reuse bit
    guard_file: str | None = None
    derived: bool = False                          # an opcode bit away from a ptxas word
    parent_operand_bits: set = field(default_factory=set)
    omit_zero: set = field(default_factory=set)    # operands nvdisasm hides when RZ/PT
    shape_bits: set = field(default_factory=set)   # bits whose flip gives the op in another shape
    floats: dict = field(default_factory=dict)     # operand index -> f16 / f32 / f64
    rz_base: dict = field(default_factory=dict)    # memory operand index -> 'omit' / 'keep'
    names_if: dict = field(default_factory=dict)   # named part -> [((field bits, value), {value: text})]
    sign_if: dict = field(default_factory=dict)    # immediate -> [((field bits, value), signed)]
    float_if: dict = field(default_factory=dict)   # float operand -> [((field bits, value), f16/bf16/...)]
    slots: list = field(default_factory=list)      # the modifier slots, once laid out
    aliases: list = field(default_factory=list)
    mod_fields: list = field(default_factory=list)
    rank: dict = field(default_factory=dict)
    semicolon: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def restore_hidden_zero(base: Parsed, new: Parsed | None) -> Parsed | None:
    """nvdisasm leaves out some operands when they are PT or RZ (IADD3's carry-out, VOTE's
    register): a flip that makes one vanish changed that operand's number to PT/RZ."""
    if new is None or len(new.operands) != len(base.operands) - 1:
        return new
    for j, o in enumerate(base.operands):
        if o["kind"] in ZERO:
            rest = base.operands[:j] + base.operands[j + 1:]
            if [x["kind"] for x in rest] == [x["kind"] for x in new.operands]:
                zero = dict(o, num=ZERO[o["kind"]], neg=False, abs=False, inv=False)
                restored = new.operands[:j] + [zero] + new.operands[j:]
                if sum(a != b for a, b in zip(base.operands, restored)) == 1:
                    return Parsed(new.guard, new.guard_file, new.op, new.mods, restored, new.alias)
    return new


def readable(p: Parsed) -> bool:
    """Whether every operand is of a kind the table can describe (a NaN immediate is
    readable once a neighbouring word gives it a value: see denan)."""
    return all(o["kind"] in ("R", "UR", "P", "UP", "B", "C", "I", "M", "S")
               or (o["kind"] == "F" and "NAN" not in o["ftext"]) for o in p.operands)


def structure(p: Parsed) -> tuple:
    """Operand kinds, and which optional parts are there (the +UR of an address, the UR
    index of a constant)."""
    return tuple(o["kind"] + ("+U" if o.get("ubase") is not None else "") + ("[U]" if o.get("index_file") == "UR" else "")
                 + ("+D" if "desc" in o else "") for o in p.operands)


def shape_key(p: Parsed) -> tuple:
    return (p.op, p.mods, structure(p))


def learn_bits(drafts: list[Draft], log) -> list[tuple[int, str]]:
    """Step 2: flip every bit of every representative (one nvdisasm run).  Returns the
    flips of opcode bits that gave the same operation in another shape (IMAD with an
    immediate third source from IMAD with a constant): more representatives."""
    neighbours = {}
    words = []
    for d in drafts:
        words += [d.word] + [d.word ^ (1 << b) for b in PROBE_BITS]
    texts = nvdisasm_batch(words)
    stride = 1 + len(PROBE_BITS)
    for i, d in enumerate(drafts):
        base_addr = i * stride * 16
        base = parse_instr(texts[i * stride])
        if base.shape() != d.parsed.shape():
            raise RuntimeError(f"representative changed meaning in the batch: {texts[i * stride]}")
        d.parsed, d.addr = base, base_addr
        for j, operand in enumerate(base.operands):   # PC-relative: moves with the address
            if operand["kind"] == "I" and j in d.targets:
                operand["kind"] = "T"
        flips = {}
        for k, b in enumerate(PROBE_BITS):
            t = texts[i * stride + 1 + k]
            new = parse_instr(t) if t is not None else None
            if new is not None:
                for j in d.targets:
                    if j < len(new.operands) and new.operands[j]["kind"] == "I":
                        new.operands[j]["kind"] = "T"
                if b < 12 and new.op == base.op and shape_key(new) != shape_key(base):
                    neighbours.setdefault(shape_key(new), (d.word ^ (1 << b), t, d))
                    d.shape_bits.add(b)
                new = restore_hidden_zero(base, new)
                if b >= 12 and new.op == base.op and structure(new) != structure(base) and readable(new):
                    # another operand shape of the same operation (ULEA's .HI adds an operand,
                    # an address gains a +UR): as much a neighbour as an opcode bit's
                    neighbours.setdefault(shape_key(new), (d.word ^ (1 << b), t, d))
                    d.shape_bits.add(b)
            addr = base_addr + (1 + k) * 16
            c = classify(base, new, d.targets, addr, base_addr)
            if c[0] == "guard":
                d.guard_file = new.guard_file
            d.kinds[b] = c
            flips[b] = (new, addr)
        build_fields(d, flips, log)
    return [(w, t, operand_bits(parent)) for w, t, parent in neighbours.values()]


SHAPE_ROUNDS = 6           # neighbours of neighbours: how far the shape search goes
MAX_SHAPE_BITS = 6         # all subsets of that many shape bits, only pairs beyond


def shape_combinations(drafts: list[Draft], log) -> list[tuple[int, str, set]]:
    """Words two or more shape bits away: each shape bit alone gives the operation with
    another operand kind (IMNMX's bits 10 and 11 each: an immediate, a constant), some
    kinds need several (both: a uniform register).  Every subset of a draft's shape bits
    is asked for (pairs only where there are many); [(word, text, parent's operand
    bits)] of those that print the same operation."""
    jobs, words = [], []
    for d in drafts:
        bits = sorted(d.shape_bits)
        sizes = range(2, len(bits) + 1) if len(bits) <= MAX_SHAPE_BITS else (2,)
        for size in sizes:
            for subset in itertools.combinations(bits, size):
                jobs.append(d)
                words.append(d.word ^ sum(1 << b for b in subset))
    out = []
    for d, w, t in zip(jobs, words, nvdisasm_batch(words) if words else []):
        if t is None:
            continue
        p = parse_instr(t)
        if p.op == d.parsed.op and shape_key(p) != shape_key(d.parsed):
            out.append((w, t, operand_bits(d)))
    return out


def unhide(drafts: list[Draft], log) -> dict:
    """A zero register can hide bits: the scale of [RZ] prints nothing, so flipping it
    changes nothing.  Drafts whose printed registers (or address bases) are RZ/PT get
    them set to ordinary registers, if nvdisasm prints the same instruction then, and
    are learned again from that word: {id(draft): the new draft}."""
    candidates = []
    for d in drafts:
        w = d.word
        for j, o in enumerate(d.parsed.operands):
            part = "base" if o["kind"] == "M" else "num"
            key = ("op", j, part)
            if key in d.numeric and o.get(part) == ZERO.get("R" if part == "base" else o["kind"]):
                w = field_put(w, d.numeric[key][0], 10 + j if o["kind"] in ("R", "UR", "M") else j % 6)
        if w != d.word:
            candidates.append((d, w))
    texts = nvdisasm_batch([w for _, w in candidates]) if candidates else []
    out = {}
    for (d, w), t in zip(candidates, texts):
        if t is not None and shape_key(parse_instr(t)) == shape_key(d.parsed) and readable(parse_instr(t)):
            out[id(d)] = Draft(w, 0, parse_instr(t), d.targets, derived=d.derived,
                               parent_operand_bits=d.parent_operand_bits)
            log(f"  learned again from {t}")
    return out


def operand_bits(d: Draft) -> set:
    """Bits holding operand values in a draft."""
    out = set()
    for key, (pieces, _, _) in d.numeric.items():
        if key[0] == "op":
            for lo, width, _ in pieces:
                out.update(range(lo, lo + width))
    return out


def build_fields(d: Draft, flips: dict, log) -> None:
    for b in range(12):  # the opcode proper, whatever its flips printed
        d.kinds[b] = ("fixed",)
    by_part: dict = {}
    for b, c in d.kinds.items():
        if c[0] in ("fixed", "multi"):
            d.fixed.add(b)
        elif c[0] in ("guard", "op"):
            by_part.setdefault(c, []).append(b)
    for key, bits in by_part.items():
        part = key[-1]
        if part in FLAGS:
            if len(bits) != 1:
                d.fixed.update(bits)
                d.notes.append(f"{key}: {len(bits)} bits toggle one flag; kept fixed")
                continue
            d.numeric[key] = ([[bits[0], 1, 0]], False, 0)
        elif part in NUMERIC or key[0] == "guard":
            base_value = part_value(d.parsed, key, d.targets, d.addr)
            flipped = {}
            for b in bits:
                new, addr = flips[b]
                flipped[b] = part_value(new, key, d.targets, addr)
            result = numeric_field(bits, d.word, base_value, flipped)
            if result is None:
                d.fixed.update(bits)
                d.notes.append(f"{key}: bits {bits} do not form a number; kept fixed")
                log(f"  {d.parsed.op}: {key} bits {bits} do not form a number")
                continue
            d.numeric[key] = result
        elif part == FLOAT_PART:
            texts = {b: part_value(flips[b][0], key, d.targets, 0) for b in bits}
            result = float_field(bits, d.parsed.operands[key[1]][FLOAT_PART], texts)
            if result is None:
                d.fixed.update(bits)
                d.notes.append(f"{key}: bits {bits} are no float I know; kept fixed")
                log(f"  {d.parsed.op}: {key} bits {bits} are no float immediate")
                continue
            d.numeric[("op", key[1], "fbits")], d.floats[key[1]] = result[0], result[1]
        else:  # a named part (special register name, register suffix): enumerate later
            # a bit inside that made the word illegal belongs to it too (S2R's SR_CTAID.X
            # has no neighbour at bit 76, SR_LTMASK does)
            inside = [b for b in range(min(bits), max(bits) + 1) if b in d.fixed or d.kinds.get(b) == ("fixed",)]
            d.fixed.difference_update(inside)
            d.names[key] = (sorted(set(bits) | set(inside)), {})
    mod_bits = [b for b, c in d.kinds.items() if c == ("mods",)]
    d.mod_runs = [(r, {}) for r in runs(mod_bits)]
    for op, part, pieces in HIDDEN:
        bits = [lo + i for lo, width, _ in pieces for i in range(width)]
        mems = [j for j, o in enumerate(d.parsed.operands) if o["kind"] == "M"]
        if op == d.parsed.op and mems and all(d.kinds.get(b) == ("none",) for b in bits):
            d.numeric[("op", mems[0], part)] = (pieces, False, 0)


# Float immediates: (struct format, bits) of each kind; an f64 immediate is the high word.
FLOAT_FORMATS = {"f32": ("<f", 32), "f64": ("<d", 64), "f16": ("<e", 16)}


def float_bits(text: str, kind: str) -> int | None:
    """The bits of a printed float read as `kind`, None if it is not exactly one (or a NaN,
    whose payload nvdisasm does not print)."""
    fmt, size = FLOAT_FORMATS[kind]
    if "NAN" in text:
        return None
    try:
        value = float(text.replace("INF", "inf"))
        bits = int.from_bytes(struct.pack(fmt, value), "little")
        if struct.unpack(fmt, bits.to_bytes(size // 8, "little"))[0] != value:
            return None
    except (OverflowError, struct.error):
        return None
    if kind == "f64":
        return bits >> 32 if not bits & 0xFFFFFFFF else None
    return bits


def float_field(bits, base_text, flipped):
    """A float immediate: the kind under which each flipped bit changes exactly one IEEE
    bit, always the same distance from where it lives; ((pieces, signed, bias), kind).  A
    flip to a NaN prints without its payload, so such bits are placed by position."""
    lo = min(bits)
    if sorted(bits) != list(range(lo, lo + len(bits))):
        return None
    for kind in ("f16", "f32", "f64"):
        width = 16 if kind == "f16" else 32
        base = float_bits(base_text, kind)
        if base is None or len(bits) != width:
            continue
        shifts, bad = set(), False
        for b in bits:
            new = float_bits(flipped[b], kind) if flipped[b] and "NAN" not in flipped[b] else None
            if new is None:
                bad |= flipped[b] is not None and "NAN" not in flipped[b]
                continue
            diff = new ^ base
            if not diff or diff & (diff - 1):
                bad = True
                break
            shifts.add(b - diff.bit_length() + 1)
        if not bad and len(shifts) == 1:
            return ([[lo, len(bits), lo - shifts.pop()]], False, 0), kind
    return None


def enumerate_values(drafts: list[Draft], log) -> None:
    """Step 3: every value of every modifier run and named operand part."""
    jobs, words = [], []
    for d in drafts:
        for bits, table in d.mod_runs:
            jobs.append((d, "mods", bits, table))
        for key, (bits, table) in d.names.items():
            jobs.append((d, key, bits, table))
    spans = []
    for d, key, bits, table in jobs:
        start = len(words)
        words += [set_bits(d.word, bits, v) for v in range(1 << len(bits))]
        spans.append(start)
    texts = nvdisasm_batch(words) if words else []
    for (d, key, bits, table), start in zip(jobs, spans):
        for v in range(1 << len(bits)):
            t = texts[start + v]
            if t is None:
                continue
            p = parse_instr(t)
            if p.shape() != d.parsed.shape() or p.guard != d.parsed.guard:
                continue
            if not same_operands(d.parsed, p, except_part=None if key == "mods" else key, skip=d.targets):
                continue
            if key == "mods":
                table[v] = p.mods
            elif p.mods == d.parsed.mods:
                table[v] = p.operands[key[1]].get(key[2])


def same_operands(a: Parsed, b: Parsed, except_part: tuple | None, skip: set) -> bool:
    """Whether two instructions print the same operands, but for one part of one."""
    def parts(p, j):
        return {k: x for k, x in p.operands[j].items()
                if k not in IGNORED and not (except_part and (j, k) == except_part[1:])}
    return all(parts(a, j) == parts(b, j) for j in range(len(a.operands)) if j not in skip)


REUSE_CTRLS = [(2, 1, 7, 7, 0), (2, 1, 0, 7, 0), (2, 1, 7, 0, 0), (6, 1, 0, 1, 0)]


def learn_reuse_and_aliases(drafts: list[Draft], log) -> None:
    """Step 4: which reuse bit marks which operand; which alias rules hold on which form;
    which operands nvdisasm hides when RZ/PT; whether an RZ base or index prints.

    nvdisasm shows `.reuse` only under some control words (see learn_control_printing),
    so each reuse bit is tried under a few control words that show it."""
    from ptxc.sass.ir import Control
    ctrl_mask = sum(1 << b for b in CTRL_BITS)
    words, jobs = [], []
    for d in drafts:
        mark = len(words)
        try:
            probe_reuse_and_aliases(d, words, jobs)
        except TableError:  # a value the draft's fields cannot hold (a derived form's odd field)
            del words[mark:], jobs[mark:]
            log(f"  {d.parsed.op}: reuse/alias probes skipped")

    texts = nvdisasm_batch(words)
    for (d, what, arg), t in zip(jobs, texts):
        if t is None:
            continue
        p = parse_instr(t)
        if what == "reuse":
            marked = [j for j, o in enumerate(p.operands) if o.get("reuse")]
            if len(marked) == 1:
                d.reuse[marked[0]] = arg
        elif what == "omit":
            if len(p.operands) == len(d.parsed.operands) - 1:
                d.omit_zero.add(arg)
        elif what == "rz_base":
            j, zero = arg
            terms = re.split(r"[\[\]+]", p.operands[j]["text"])
            d.rz_base[j] = "keep" if any(x.split(".")[0] == zero for x in terms) else "omit"
        elif what == "no alias":
            if p.alias is not None:
                raise RuntimeError(f"ALIASES miss a rule: nvdisasm printed {t}")
        elif p.alias == arg[0]:
            token, alt = arg
            rule = next((r for r in d.aliases if r[0] == token), None)
            if rule is None:
                d.aliases.append((token, [alt]))
            else:
                rule[1].append(alt)
    order = {t: i for op_rules in ALIASES.values() for i, (t, _) in enumerate(op_rules)}
    for d in drafts:
        d.aliases.sort(key=lambda r: order[r[0]])



def probe_reuse_and_aliases(d: Draft, words: list, jobs: list) -> None:
    """The words learn_reuse_and_aliases asks about for one draft."""
    from ptxc.sass.ir import Control
    ctrl_mask = sum(1 << b for b in CTRL_BITS)
    w = d.word
    regs = [j for j, o in enumerate(d.parsed.operands) if o["kind"] == "R" and ("op", j, "num") in d.numeric]
    for n, j in enumerate(regs):
        w = field_put(w, d.numeric[("op", j, "num")][0], 10 + n)
    for ctrl in REUSE_CTRLS:
        for k in range(len(REUSE_BITS)):
            jobs.append((d, "reuse", k))
            words.append(w & ~ctrl_mask | Control(*ctrl, reuse=1 << k).pack() << 105)
    for token, alternatives in ALIASES.get(d.parsed.op, []):
        for alt in alternatives:
            wa = alias_word(d, alt)
            if wa is not None:
                jobs.append((d, "alias", (token, alt)))
                words.append(wa)
    if d.parsed.op in ALIASES:
        jobs.append((d, "no alias", None))
        words.append(alias_word(d, {}))
    for j, o in enumerate(d.parsed.operands):
        if o["kind"] in ZERO and ("op", j, "num") in d.numeric:
            w = field_put(d.word, d.numeric[("op", j, "num")][0], ZERO[o["kind"]])
            for flag in ("inv", "neg", "abs"):
                if ("op", j, flag) in d.numeric:
                    w = field_put(w, d.numeric[("op", j, flag)][0], 0)
            jobs.append((d, "omit", j))
            words.append(w)
        elif o["kind"] == "I" and ("op", j, "value") in d.numeric:  # BRX R4 0x0 prints `BRX R4 ;`
            jobs.append((d, "omit", j))
            words.append(field_put(d.word, d.numeric[("op", j, "value")][0], 0))
        if o["kind"] == "C" and ("op", j, "index") in d.numeric:
            w = field_put(d.word, d.numeric[("op", j, "index")][0], ZERO[o["index_file"]])
            w = field_put(w, d.numeric[("op", j, "offset")][0], 8)
            jobs.append((d, "rz_base", (j, "URZ" if o["index_file"] == "UR" else "RZ")))
            words.append(w)
        if o["kind"] == "M" and ("op", j, "base") in d.numeric and ("op", j, "offset") in d.numeric:
            w = field_put(d.word, d.numeric[("op", j, "base")][0], ZERO["R"])
            w = field_put(w, d.numeric[("op", j, "offset")][0], 8)
            if ("op", j, "scale") in d.names:  # a scale keeps RZ in sight: [RZ.X4+URZ]
                bits, names = d.names[("op", j, "scale")]
                plain = [v for v, t in names.items() if t == ""]
                if plain:
                    w = set_bits(w, bits, plain[0])
            jobs.append((d, "rz_base", (j, "RZ")))
            words.append(w)


def alias_word(d: Draft, alt: dict) -> int | None:
    w = d.word
    for j, cond in alt.items():
        if j >= len(d.parsed.operands):
            return None
        kind = d.parsed.operands[j]["kind"]
        if cond == "zero" and ("op", j, "num") in d.numeric and kind == "R":
            w = field_put(w, d.numeric[("op", j, "num")][0], ZERO["R"])
        elif cond.startswith("imm=") and kind == "I" and ("op", j, "value") in d.numeric:
            w = field_put(w, d.numeric[("op", j, "value")][0], int(cond[4:]))
        elif cond == "pow2" and kind == "I" and ("op", j, "value") in d.numeric:
            w = field_put(w, d.numeric[("op", j, "value")][0], 8)
        else:
            return None
    for j, o in enumerate(d.parsed.operands):  # the others must not satisfy anything
        if j not in alt and o["kind"] == "R" and ("op", j, "num") in d.numeric and j > 0:
            w = field_put(w, d.numeric[("op", j, "num")][0], 20 + j)
        elif j not in alt and o["kind"] == "I" and ("op", j, "value") in d.numeric:
            w = field_put(w, d.numeric[("op", j, "value")][0], 0x3039)
    return w


# ---------------------------------------------------------------------------------------
# Modifier slots: the mnemonic's modifiers as a sequence of fixed tokens and fields.
# ---------------------------------------------------------------------------------------
def make_field(bits: list[int], table: dict, default: int) -> dict:
    """A modifier field: its tokens for each value are what its value changes in the
    mnemonic, i.e. the part between what all its values print alike before and after."""
    seqs = list(table.values())
    shortest = min(len(s) for s in seqs)
    pre = 0
    while pre < shortest and all(s[pre] == seqs[0][pre] for s in seqs):
        pre += 1
    suf = 0
    while suf < shortest - pre and all(s[len(s) - 1 - suf] == seqs[0][len(seqs[0]) - 1 - suf] for s in seqs):
        suf += 1
    values = {v: tuple(s[pre: len(s) - suf]) for v, s in table.items()}
    return {"bits": bits, "pos": pre, "span": len(values[default]), "values": values, "default": default}


def layout(base: tuple, fields: list[dict], rank: dict) -> list:
    """The mnemonic's modifiers as slots: fixed tokens (str) and fields, in print order.
    Fields that add nothing by default at the same place are ordered by `rank`."""
    owner = {}
    for f in fields:
        for i in range(f["pos"], f["pos"] + f["span"]):
            if i in owner:
                return None
            owner[i] = f
    slots: list = []
    for i in range(len(base) + 1):
        here = [f for f in fields if f["pos"] == i and f["span"] == 0]
        slots += sorted(here, key=lambda f: (rank.get(id(f), 0), f["bits"][0]))
        if i == len(base):
            break
        if i not in owner:
            slots.append(base[i])
        elif owner[i]["pos"] == i:
            slots.append(owner[i])
    return slots


def render(slots: list, values: dict) -> tuple | None:
    """Modifier tokens for field values {id(field): value} (default where absent)."""
    out: list = []
    for s in slots:
        if isinstance(s, str):
            out.append(s)
            continue
        tokens = s["values"].get(values.get(id(s), s["default"]))
        if tokens is None:
            return None
        out += tokens
    return tuple(out)


def sub_value(v: int, idx) -> int:
    return sum(((v >> i) & 1) << k for k, i in enumerate(idx))


def split_field(bits: list[int], table: dict, default: int, base: tuple) -> list[dict]:
    """Split a run of modifier bits into independent fields wherever its value table is
    exactly the tokens of a subset of its bits next to the tokens of the rest: LDG's .E
    bit and size bits; FMUL's FTZ/FMZ bits 76 and 80, rounding 78-79 and SAT 77."""
    n = len(bits)
    for size in range(1, n // 2 + 1):
        for sub in itertools.combinations(range(n), size):
            rest = [i for i in range(n) if i not in sub]
            fixed_rest = {v for v in table if sub_value(v, rest) == sub_value(default, rest)}
            fixed_sub = {v for v in table if sub_value(v, sub) == sub_value(default, sub)}
            a = {sub_value(v, sub): table[v] for v in fixed_rest}
            b = {sub_value(v, rest): table[v] for v in fixed_sub}
            if len(a) < 2 or len(b) < 2:
                continue
            if any(sub_value(v, sub) not in a or sub_value(v, rest) not in b for v in table):
                continue
            da, db = sub_value(default, sub), sub_value(default, rest)
            fa = make_field([bits[i] for i in sub], a, da)
            fb = make_field([bits[i] for i in rest], b, db)
            for rank in ({id(fa): 0, id(fb): 1}, {id(fa): 1, id(fb): 0}):
                slots = layout(base, [fa, fb], rank)
                if slots is None:
                    break
                if all(table[v] == render(slots, {id(fa): sub_value(v, sub), id(fb): sub_value(v, rest)})
                       for v in table):
                    return (split_field(fa["bits"], a, da, base) + split_field(fb["bits"], b, db, base))
    return [make_field(bits, table, default)]


def build_mod_fields(d: Draft) -> None:
    d.mod_fields = []
    for bits, table in d.mod_runs:
        default = sum(bit(d.word, b) << i for i, b in enumerate(bits))
        if default not in table or len(table) < 2:
            d.fixed.update(bits)
            continue
        d.mod_fields += split_field(bits, table, default, d.parsed.mods)
    d.rank = {}


def field_groups(d: Draft, dependent: set) -> list[list[int]]:
    """Bits of modifier fields that must be enumerated as one: fields printing at the
    same place (F2I's U32 comes from bit 72, signedness, and bits 75-76, size), and
    `dependent` pairs of fields that print something else when both are set (HFMA2's
    FMZ and FTZ together print INVALID3)."""
    fields = d.mod_fields
    parent = list(range(len(fields)))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i
    for i, f in enumerate(fields):
        for k, g in enumerate(fields[:i]):
            overlap = f["span"] and g["span"] and f["pos"] < g["pos"] + g["span"] and g["pos"] < f["pos"] + f["span"]
            if overlap or (id(f), id(g)) in dependent or (id(g), id(f)) in dependent:
                parent[root(i)] = root(k)
    groups: dict = {}
    for i, f in enumerate(fields):
        groups.setdefault(root(i), []).append(f)
    return [sorted(b for f in g for b in f["bits"]) for g in groups.values() if len(g) > 1]


def dependent_pairs(drafts: list[Draft]) -> set:
    """Pairs (id, id) of fields that, both set, print neither field's tokens in either
    order (RED without .E prints ???0, but not next to .64)."""
    jobs, words = [], []
    for d in drafts:
        for f, g in itertools.combinations(d.mod_fields, 2):
            fv = [v for v, t in f["values"].items() if t and v != f["default"]][:3]
            gv = [v for v, t in g["values"].items() if t and v != g["default"]][:3]
            for x in fv:
                for y in gv:
                    jobs.append((d, f, g, x, y))
                    words.append(set_bits(set_bits(d.word, f["bits"], x), g["bits"], y))
    texts = nvdisasm_batch(words) if words else []
    dependent = set()
    for (d, f, g, x, y), t in zip(jobs, texts):
        if t is None:
            continue
        mods = parse_instr(t).mods
        if not any(render(layout(d.parsed.mods, [a, b], {id(a): 0, id(b): 1}) or [], {id(f): x, id(g): y}) == mods
                   for a, b in ((f, g), (g, f))):
            dependent.add((id(f), id(g)))
    return dependent


def fix_dependent_flags(drafts: list[Draft], log) -> None:
    """An address's `.64` bit that changes how a modifier prints (RED without .E prints
    ???0 next to [R2.64] but nothing next to [R2]) is kept as the representative has it:
    the other value is another form."""
    jobs, words = [], []
    for d in drafts:
        build_mod_fields(d)
        for key, (pieces, _, _) in d.numeric.items():
            if key[0] == "op" and key[2] == "base64":
                flipped = d.word ^ (1 << pieces[0][0])
                for f in d.mod_fields:
                    for v, tokens in f["values"].items():
                        jobs.append((d, key, pieces[0][0], f, v))
                        words.append(set_bits(flipped, f["bits"], v))
    texts = nvdisasm_batch(words) if words else []
    for (d, key, b, f, v), t in zip(jobs, texts):
        if t is None or key not in d.numeric:
            continue
        expected = render(layout(d.parsed.mods, [f], {}) or [], {id(f): v})
        if parse_instr(t).mods != expected:
            del d.numeric[key]
            d.fixed.add(b)
            d.notes.append(f"bit {b} (.64 of operand {key[1]}) changes the modifiers; kept fixed")
            log(f"  {d.parsed.op}: bit {b} (.64) changes the modifiers; kept fixed")


def fix_hiding_mods(drafts: list[Draft], log) -> None:
    """A modifier under which an operand's flag prints nothing (HADD2.F32 shows no |..| on
    its first source) is kept as the representative has it: the form with the flag
    is another form than the one with the modifier, whose own flips found no flag."""
    jobs, words = [], []
    for d in drafts:
        build_mod_fields(d)
        for key, (pieces, _, _) in d.numeric.items():
            if key[0] != "op" or key[2] not in ("neg", "abs", "inv"):
                continue
            flagged = d.word | (1 << pieces[0][0])
            for f in d.mod_fields:
                for v in f["values"]:
                    if v != f["default"]:
                        jobs.append((d, key, f))
                        words.append(set_bits(flagged, f["bits"], v))
    texts = nvdisasm_batch(words) if words else []
    hiding: dict = {}
    for (d, key, f), t in zip(jobs, texts):
        if t is None:
            continue
        p = parse_instr(t)
        if len(p.operands) == len(d.parsed.operands) and not p.operands[key[1]].get(key[2]):
            hiding.setdefault(id(d), (d, set()))[1].update(f["bits"])
            d.notes.append(f"modifier bits {f['bits']} hide the {key[2]} of operand {key[1]}; kept fixed")
            log(f"  {d.parsed.op}: modifier bits {f['bits']} hide the {key[2]} of operand {key[1]}; kept fixed")
    for d, fixed_bits in hiding.values():
        runs_left = []
        for bits, table in d.mod_runs:
            keep = [i for i, b in enumerate(bits) if b not in fixed_bits]
            if not keep:
                continue
            fixed = sum(bit(d.word, b) << i for i, b in enumerate(bits) if b in fixed_bits)
            free = sum(1 << i for i in keep)
            runs_left.append(([bits[i] for i in keep],
                              {sub_value(v, keep): t for v, t in table.items() if v & ~free == fixed}))
        d.mod_runs = runs_left
        d.fixed.update(fixed_bits)


def join_overlaps(drafts: list[Draft], log) -> None:
    """Step 3b: modifier fields that overlap in print, or depend on each other, become
    one field, enumerated again over all their bits at once; the runs they came from
    keep their other bits, with a value table read off the first enumeration (the
    group's bits at their defaults).  Repeated while joining makes new overlaps."""
    for _ in range(3):
        for d in drafts:
            build_mod_fields(d)
        dependent = dependent_pairs(drafts)
        jobs, words = [], []
        for d in drafts:
            groups = field_groups(d, dependent)
            if not groups:
                continue
            grouped = {b for g in groups for b in g}
            runs_left = []
            for bits, table in d.mod_runs:
                keep = [i for i, b in enumerate(bits) if b not in grouped]
                if not keep:
                    continue
                fixed = sum(bit(d.word, b) << i for i, b in enumerate(bits) if b in grouped)
                sub = {}
                for v, tokens in table.items():
                    if v & ~sum(1 << i for i in keep) == fixed:
                        sub[sub_value(v, keep)] = tokens
                runs_left.append(([bits[i] for i in keep], sub))
            for g in groups:
                if len(g) > MAX_RUN:
                    raise RuntimeError(f"{d.parsed.op}: {len(g)} modifier bits print together")
                table: dict = {}
                runs_left.append((g, table))
                jobs.append((d, g, table, len(words)))
                words += [set_bits(d.word, g, v) for v in range(1 << len(g))]
            d.mod_runs = runs_left
            log(f"  {d.parsed.op}: modifier bits {groups} print together")
        if not jobs:
            return
        texts = nvdisasm_batch(words)
        for d, g, table, start in jobs:
            for v in range(1 << len(g)):
                t = texts[start + v]
                if t is None:
                    continue
                p = parse_instr(t)
                if p.shape() == d.parsed.shape() and p.guard == d.parsed.guard and same_operands(d.parsed, p, None, d.targets):
                    table[v] = p.mods


def learn_mod_dependence(drafts: list[Draft], log) -> None:
    """Step 3c: operand text that depends on the modifiers.  A named part may print
    other names under another modifier (I2F.U8's source selectors are .B1/.B3, I2F.S16's
    .H1), and an immediate may print signed or unsigned (I2FP.F32.S32 / .U32): both are
    tried under every value of every modifier field, and what differs from the default
    is kept with the tokens that select it; so is a float immediate that reads as
    another format (HFMA2.BF16_V2's immediates are bfloat16, sm_90)."""
    jobs, words = [], []
    for d in drafts:
        for f in d.mod_fields:
            for v, tokens in f["values"].items():
                if v == f["default"]:
                    continue
                tokens = (tuple(f["bits"]), v)  # the condition: this field at this value
                w = set_bits(d.word, f["bits"], v)
                for key, (bits, _) in d.names.items():
                    jobs.append((d, "names", key, tokens, bits, len(words)))
                    words += [set_bits(w, bits, x) for x in range(1 << len(bits))]
                for key, (pieces, signed, _) in d.numeric.items():
                    if key[0] == "op" and key[2] == "value" and d.parsed.operands[key[1]]["kind"] == "I":
                        top = max(sh + wd for _, wd, sh in pieces)
                        jobs.append((d, "sign", key, tokens, top, len(words)))
                        words.append(field_put(w, pieces, 1 << (top - 1)))
                    if key[0] == "op" and key[2] == "fbits":
                        jobs.append((d, "float", key, tokens, pieces, len(words)))
                        words.append(field_put(w, pieces, FLOAT_PROBE[max(sh + wd for _, wd, sh in pieces)]))
    texts = nvdisasm_batch(words) if words else []
    for d, what, key, tokens, arg, start in jobs:
        if what == "names":
            table = {}
            for x in range(1 << len(arg)):
                t = texts[start + x]
                p = parse_instr(t) if t else None
                if p and p.shape() == d.parsed.shape() and p.guard == d.parsed.guard:
                    table[x] = p.operands[key[1]].get(key[2])
            if table and table != d.names[key][1] and set(table) >= set(d.names[key][1]):
                d.names_if.setdefault(key, []).append((tokens, table))
        elif what == "float":
            t = texts[start]
            p = parse_instr(t) if t else None
            if p and p.shape() == d.parsed.shape():
                kind = float_kind_printing(p.operands[key[1]].get(FLOAT_PART), field_get(words[start], arg, False))
                if kind and kind != d.floats.get(key[1]):
                    d.float_if.setdefault(key[1], []).append((tokens, kind))
        else:
            t = texts[start]
            p = parse_instr(t) if t else None
            if p and p.shape() == d.parsed.shape():
                signed = p.operands[key[1]]["value"] < 0
                if signed != d.numeric[key][1]:
                    d.sign_if.setdefault(key, []).append((tokens, signed))


# A float immediate's bits that print differently in each format of their width: 1.5 as
# f16, 0.125 as bf16; 1.5 as f32, 0.125 as the high word of an f64.
FLOAT_PROBE = {16: 0x3E00, 32: 0x3FC00000}
FLOAT_WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 32}


def float_kind_printing(text: str | None, bits: int) -> str | None:
    """Which float format prints `bits` as `text` (nvdisasm's text), if one does."""
    from ptxc.sass.printer import format_float
    for kind, width in FLOAT_WIDTH.items():
        if text is not None and bits < 1 << width and format_float(bits, kind).strip() == text.strip():
            return kind
    return None


def order_mod_fields(drafts: list[Draft], log) -> None:
    """Fields that print nothing by default at the same place: set two of them at once
    and see which tokens nvdisasm prints first."""
    jobs, words = [], []
    for d in drafts:
        build_mod_fields(d)
        ties = {}
        for f in d.mod_fields:
            if f["span"] == 0:
                ties.setdefault(f["pos"], []).append(f)
        for group in ties.values():
            for i, f in enumerate(group):
                for g in group[i + 1:]:
                    fv = [v for v, t in f["values"].items() if t][:3]
                    gv = [v for v, t in g["values"].items() if t][:3]
                    for x in fv:
                        for y in gv:
                            w = set_bits(set_bits(d.word, f["bits"], x), g["bits"], y)
                            jobs.append((d, f, g, x, y))
                            words.append(w)
    texts = nvdisasm_batch(words) if words else []
    decided = {}
    for (d, f, g, x, y), t in zip(jobs, texts):
        if t is None or (id(f), id(g)) in decided:
            continue
        mods = parse_instr(t).mods
        for first, second in ((f, g), (g, f)):
            slots = layout(d.parsed.mods, [first, second], {id(first): 0, id(second): 1})
            if render(slots, {id(f): x, id(g): y}) == mods:
                decided[(id(f), id(g))] = first is f
    for d in drafts:
        def before(f, g, d=d):
            if (id(f), id(g)) in decided:
                return -1 if decided[(id(f), id(g))] else 1
            if (id(g), id(f)) in decided:
                return 1 if decided[(id(g), id(f))] else -1
            d.notes.append(f"modifier order of bits {f['bits']} and {g['bits']} not observed")
            return f["bits"][0] - g["bits"][0]
        d.rank = {}
        for pos in {f["pos"] for f in d.mod_fields if f["span"] == 0}:
            group = [f for f in d.mod_fields if f["span"] == 0 and f["pos"] == pos]
            for i, f in enumerate(sorted(group, key=functools.cmp_to_key(before))):
                d.rank[id(f)] = i


def mod_slots(d: Draft, log) -> list:
    slots = layout(d.parsed.mods, d.mod_fields, d.rank)
    if slots is None:
        raise RuntimeError(f"{d.parsed.op}: modifier fields overlap")
    return slots


# ---------------------------------------------------------------------------------------
# From drafts to the JSON table.
# ---------------------------------------------------------------------------------------
def bits_to_pieces(bits: list[int]) -> list:
    """Word bit positions of a field, value bit i at bits[i], as [lo, width, shift] pieces."""
    pieces: list = []
    for i, b in enumerate(bits):
        if pieces and pieces[-1][0] + pieces[-1][1] == b:
            pieces[-1][1] += 1
        else:
            pieces.append([b, 1, i])
    return pieces


def pieces_json(pieces) -> list:
    return [list(p) for p in pieces]


def operand_json(d: Draft, j: int, op: dict, ndst: int) -> dict:
    kind = op["kind"]
    out: dict = {"role": "dst" if j < ndst else "src"}
    fields = {key[2]: v for key, v in d.numeric.items() if key[0] == "op" and key[1] == j}
    names = {key[2]: v for key, v in d.names.items() if key[0] == "op" and key[1] == j}
    const = {}
    if kind in ("R", "UR", "P", "UP", "B"):
        out.update(kind="reg", file=kind)
        if "num" not in fields:
            const["num"] = op["num"]
        if op["sel"] and "sel" not in names:
            const["sel"] = op["sel"]
    elif kind == "C":
        out["kind"] = "cbank"
        if op["index_file"] != "R":
            out["index_file"] = op["index_file"]
        if j in d.rz_base:
            out["rz_base"] = d.rz_base[j]  # here: whether a zero index prints
    elif kind == "I":
        out["kind"] = "imm"
    elif kind == "F":
        out.update(kind="fimm", float=d.floats.get(j, "f32"))
    elif kind == "M":
        out["kind"] = "mem"
        for part, absent in (("base", None), ("base64", False), ("scale", ""), ("ubase", None)):
            if part not in fields and part not in names and op[part] != absent:
                const[part] = op[part]
        if j in d.rz_base:
            out["rz_base"] = d.rz_base[j]
        if "desc" in op:  # sm_90: desc[UR4][R2.64]
            out["desc_printed"] = True
    elif kind == "S":
        out["kind"] = "sreg"
        if "name" not in names:
            const["name"] = op["name"]
    elif kind == "T":
        out["kind"] = "target"
    else:
        raise RuntimeError(f"unhandled operand {op}")
    if const:
        out["const"] = const
    out["fields"] = {}
    for part, (pieces, signed, bias) in sorted(fields.items()):
        if kind == "M" and part == "offset":
            signed = True  # printed unsigned only when it is all there is: [0xfffffc]
        f = {"bits": pieces_json(pieces)}
        if signed:
            f["signed"] = True
        if ("op", j, part) in d.sign_if:
            f["signed_if"] = [{"slot": slot_of(d, c[0]), "value": c[1], "signed": sg}
                              for c, sg in d.sign_if[("op", j, part)]]
        if bias:
            f["bias"] = bias
        out["fields"][part] = f
    for part, (bits, table) in sorted(names.items()):
        if not table:
            raise RuntimeError(f"operand {j}: no value of its {part} bits {bits} printed anything")
        out["fields"][part] = {"bits": bits_to_pieces(bits),
                               "names": {str(v): t for v, t in sorted(table.items())}}
        if ("op", j, part) in d.names_if:
            out["fields"][part]["names_if"] = [{"slot": slot_of(d, c[0]), "value": c[1],
                                                "names": {str(v): x for v, x in sorted(n.items())}}
                                               for c, n in d.names_if[("op", j, part)]]
    for flag in ("neg", "abs", "inv"):
        if op.get(flag) and flag not in fields:
            out.setdefault("fixed_flags", []).append(flag)
    if j in d.float_if:
        out["float_if"] = [{"slot": slot_of(d, c[0]), "value": c[1], "float": k} for c, k in d.float_if[j]]
    if j in d.reuse:
        out["reuse"] = d.reuse[j]
    if j in d.omit_zero:
        out["omit_if_zero"] = True
    if op.get("sep"):
        out["sep"] = op["sep"]
    return out


def slot_of(d: Draft, bits: tuple) -> int:
    """Index among the form's modifier slots of the field with these bits."""
    return next(i for i, slot in enumerate(d.slots) if not isinstance(slot, str) and tuple(slot["bits"]) == bits)


def value_operands(operands: list[dict]) -> list[int]:
    """Indices of the operands that are not predicates: what WIDTHS counts."""
    return [j for j, o in enumerate(operands) if o.get("file") not in ("P", "UP") and o["kind"] != "sreg"]


def widths_for(op: str, operands: list[dict]) -> None:
    values = value_operands(operands)
    for wop, pattern, k, width in WIDTHS:
        if wop == op and k < len(values):
            operands[values[k]].setdefault("width", []).append([pattern, width])


def count_dsts(op: str, kinds: tuple) -> int:
    for (dop, prefix), n in DSTS.items():
        if dop == op and kinds[:len(prefix)] == prefix:
            return n
    if op in NO_DSTS or not kinds or kinds[0] not in ("R", "UR", "P", "UP", "B"):
        return 0
    n = 1
    while n < len(kinds) and kinds[n] in ("P", "UP"):
        n += 1
    return n


def latency_class(op: str, tokens: set) -> str:
    for rop, token, cls in LATENCY:
        if rop == op and (token is None or token in tokens):
            return cls
    raise RuntimeError(f"{op}: no latency class; add it to LATENCY")


def effects_for(op: str, tokens: set, operands: list[dict]) -> dict:
    """What the form does beyond its operands: memory, control flow, implicit registers."""
    out = {}
    has_desc = any("desc" in o["fields"] for o in operands)
    for rop, key, value in EFFECTS:
        if rop == op:
            if key == "implicit" and value is E_DESCRIPTOR and has_desc:
                continue  # the descriptor is the address's desc part
            if key == "implicit":
                out.setdefault("implicit", []).append(value)
            else:
                out[key] = value
    for wop, token, k in ALSO_WRITTEN:
        if wop == op and (token is None or token in tokens) and k < len(operands):
            operands[k]["also_written"] = True
    return out


REQUIRED = {"reg": ["num"], "cbank": ["bank", "offset"], "imm": ["value"], "fimm": ["fbits"],
            "mem": ["base"], "sreg": ["name"], "target": ["target"]}


def mod_tokens(slots: list) -> set:
    tokens = set()
    for s in slots:
        if isinstance(s, str):
            tokens.add(s)
        else:
            for v in s["values"].values():
                tokens.update(v)
    return tokens


def draft_to_form(d: Draft, log) -> dict:
    slots = d.slots = mod_slots(d, log)
    field_bits = set(range(105, 126))
    for pieces, _, _ in d.numeric.values():
        for lo, width, _ in pieces:
            field_bits.update(range(lo, lo + width))
    for bits, _ in d.names.values():
        field_bits.update(bits)
    for s in slots:
        if not isinstance(s, str):
            field_bits.update(s["bits"])
    mask = sum(1 << b for b in d.fixed if b not in field_bits)
    template = d.word & ~sum(1 << b for b in field_bits)
    if d.derived:  # bits nothing prints: keep ptxas's constants, not its operand values
        template &= ~sum(1 << b for b, c in d.kinds.items() if c == ("none",) and b in d.parent_operand_bits)
    p = d.parsed
    kinds = tuple(LETTER.get(d.floats.get(j), o["kind"]) for j, o in enumerate(p.operands))
    ndst = count_dsts(p.op, kinds)
    operands = [operand_json(d, j, o, ndst) for j, o in enumerate(p.operands)]
    for j, o in enumerate(operands):
        missing = [part for part in REQUIRED[o["kind"]] if part not in o["fields"] and part not in o.get("const", {})]
        if missing:
            raise RuntimeError(f"operand {j} ({o['kind']}) has no {'/'.join(missing)} field")
    tokens = mod_tokens(slots)
    widths_for(p.op, operands)
    guard = {"file": d.guard_file} if d.guard_file else {}
    for part in ("num", "inv"):
        if ("guard", part) in d.numeric:
            guard[part] = {"bits": pieces_json(d.numeric[("guard", part)][0])}
    return {
        "_word": d.word,       # the word it was learned from (for learn_illegal; not written)
        "op": p.op,
        "kinds": ",".join(kinds),
        "example": None,
        "mask": f"0x{mask:032x}",
        "template": f"0x{template:032x}",
        "guard": guard,
        "mods": [s if isinstance(s, str) else
                 {"bits": bits_to_pieces(s["bits"]), "default": s["default"],
                  "values": {str(v): t for v, t in sorted(s["values"].items())}} for s in slots],
        "operands": operands,
        "aliases": [{"token": t, "when": [{str(k): c for k, c in alt.items()} for alt in alts]}
                    for t, alts in d.aliases],
        "latency": latency_class(p.op, tokens),
        "effects": effects_for(p.op, tokens, operands),
        "space_before_semicolon_if": d.semicolon,
    }


LETTER = {"f32": "F", "f64": "D", "f16": "H"}


def form_name(form: dict) -> str:
    fixed = [s for s in form["mods"] if isinstance(s, str)]
    return ".".join([form["op"]] + fixed) + (" " + form["kinds"] if form["kinds"] else "")


# ---------------------------------------------------------------------------------------
# Driver.
# ---------------------------------------------------------------------------------------
def representatives(words) -> list[tuple[int, str]]:
    """One word per distinct (op, modifiers, operand structure, operand flags)."""
    seen, reps = set(), []
    for _, _, word, text in words:
        p = parse_instr(text)
        key = (shape_key(p), tuple(sorted((j, k) for j, o in enumerate(p.operands) for k in FLAGS if o.get(k))))
        if key not in seen:
            seen.add(key)
            reps.append((word, text))
    return reps


def denan(reps, log) -> list[tuple[int, str]]:
    """A word whose float immediate is a NaN tells nothing about the NaN's bits (nvdisasm
    prints no payload): use the first one-bit neighbour that prints the same
    instruction with a number there instead."""
    out, jobs, words = [], [], []
    for w, t in reps:
        p = parse_instr(t)
        if any(o["kind"] == "F" and "NAN" in o["ftext"] for o in p.operands):
            jobs.append((len(out), p))
            words += [w ^ (1 << b) for b in range(32, 96)]
        out.append((w, t))
    texts = nvdisasm_batch(words) if words else []
    for n, (i, p) in enumerate(jobs):
        for k in range(64):
            t = texts[64 * n + k]
            if t is None:
                continue
            q = parse_instr(t)
            if shape_key(q) == shape_key(p) and readable(q):
                out[i] = (words[64 * n + k], t)
                break
        else:
            log(f"  no neighbour of {out[i][1]} has a number for its NaN")
    return out


def find_targets(reps, log) -> list[set]:
    """Operands that move with the instruction's address are PC-relative targets."""
    words = []
    for w, _ in reps:
        words += [w, w]
    texts = nvdisasm_batch(words)
    out = []
    for i in range(len(reps)):
        a, b = parse_instr(texts[2 * i]), parse_instr(texts[2 * i + 1])
        out.append({j for j, (x, y) in enumerate(zip(a.operands, b.operands))
                    if x["kind"] == "I" and y["value"] - x["value"] == 16})
    return out


CONTROL_FIELDS = {"stall": 0, "yield_bit": 0, "wbar": 7, "rbar": 7, "wait": 0, "reuse": 0}


def learn_control_printing(drafts: list[Draft], log) -> dict:
    """Two things nvdisasm prints depend on the control word, not the opcode:

    - the space in `EXIT ;` versus `NOP;`: per form, the smallest set of control fields
      whose being non-neutral (0, or 7 for scoreboards) explains it;
    - whether a set reuse bit shows as `.reuse`: one condition `field == value` that
      explains it for every form.
    Both are found by sweeping control words over every form."""
    from ptxc.sass.ir import Control
    ctrl_mask = sum(1 << b for b in CTRL_BITS)
    words, combos_of = [], []
    for d in drafts:
        reuse = sum(1 << k for k in d.reuse.values())
        combos = [Control(*v) for v in itertools.product(
            (0, 1, 11, 13), (0, 1), (7, 0), (7, 1), (0, 1), sorted({0, reuse}))]
        combos_of.append(combos)
        words += [d.word & ~ctrl_mask | c.pack() << 105 for c in combos]
    texts = iter(nvdisasm_batch(words))
    reuse_seen = []
    for d, combos in zip(drafts, combos_of):
        seen = []
        for c in combos:
            t = next(texts)
            if t is not None:  # an INF/NAN/-0.0 immediate brings its own trailing space
                special = re.search(r"(INF|NAN|0\.0) +;$", t)
                seen.append((c, t.endswith("  ;") if special else t.endswith(" ;")))
                if c.reuse:
                    reuse_seen.append((c, ".reuse" in t, d))
        d.semicolon = None
        for size in range(len(CONTROL_FIELDS) + 1):
            for subset in itertools.combinations(CONTROL_FIELDS, size):
                if all(space == any(getattr(c, f) != CONTROL_FIELDS[f] for f in subset) for c, space in seen):
                    d.semicolon = list(subset)
                    break
            if d.semicolon is not None:
                break
        if d.semicolon is None:
            raise RuntimeError(f"{d.parsed.op}: no set of control fields explains nvdisasm's ' ;'")
    for f in CONTROL_FIELDS:
        for v in sorted({getattr(c, f) for c, _, _ in reuse_seen}):
            if all(shown == (getattr(c, f) == v) for c, shown, _ in reuse_seen):
                log(f".reuse shows when {f} == {v} ({len(reuse_seen)} samples)")
                return {f: v}
    if not reuse_seen:  # (only when learning a few words with --only)
        return {}
    raise RuntimeError("no control field explains when nvdisasm prints .reuse")


def merge(forms: list[dict], log) -> list[dict]:
    """Representatives that share opcode bits and layout are one form; what one of them
    learned that another could not (a reuse slot) is kept."""
    def shape(f):
        operands = [{k: v for k, v in o.items() if k != "reuse"} for o in f["operands"]]
        f = {k: v for k, v in f.items() if k != "_word"}
        mods = [m if isinstance(m, str) else {k: v for k, v in m.items() if k != "default"} for m in f["mods"]]
        return json.dumps([f["mask"], int(f["template"], 16) & int(f["mask"], 16), f["kinds"], operands, mods],
                          sort_keys=True)
    out: dict = {}
    for f in forms:
        key = shape(f)
        if key not in out:
            out[key] = f
            continue
        kept = out[key]
        for mine, theirs in zip(kept["operands"], f["operands"]):
            if "reuse" in theirs:
                if mine.setdefault("reuse", theirs["reuse"]) != theirs["reuse"]:
                    raise RuntimeError(f"{kept['name']}: reuse slots disagree")
        for rule in f["aliases"]:
            if rule not in kept["aliases"]:
                kept["aliases"].append(rule)
    merged = []
    names: dict = {}
    for f in out.values():
        n = form_name(f)
        names[n] = names.get(n, 0) + 1
        merged.append({"name": n if names[n] == 1 else f"{n} #{names[n]}", **f})
    return sorted(merged, key=lambda f: f["name"])


# ---------------------------------------------------------------------------------------
# Which combinations exist: every modifier value with every other and every operand flag.
# ---------------------------------------------------------------------------------------
MAX_COMBINATIONS = 1 << 18   # per form; beyond, only pairs are asked (none is that big yet)
FLAG_NAMES = ("neg", "abs", "inv")


def combination_variables(form: dict) -> list[tuple[str, Field, list[int]]]:
    """(key, field, values) of what a word of this form may vary apart from operand
    numbers: each modifier field ("3": slot 3) and each operand flag ("2.neg")."""
    out = []
    for i, s in enumerate(form["mods"]):
        if isinstance(s, dict):
            out.append((str(i), Field(tuple(map(tuple, s["bits"]))), sorted(int(v) for v in s["values"])))
    for j, o in enumerate(form["operands"]):
        for flag in FLAG_NAMES:
            if flag in o["fields"]:
                out.append((f"{j}.{flag}", Field(tuple(map(tuple, o["fields"][flag]["bits"]))), [0, 1]))
    return out


def combination_prints(form: dict, variables, combo: tuple, base: Parsed, text: str | None) -> bool:
    """Whether nvdisasm printed a word of `combo` as the table would: the same operation and
    operand shape, the modifiers of those values, the flags set."""
    if text is None:
        return False
    p = parse_instr(text)
    if p.shape() != base.shape() or structure(p) != structure(base):
        return False
    mods = []
    values = dict(zip((k for k, _, _ in variables), combo))
    for i, s in enumerate(form["mods"]):
        mods += [s] if isinstance(s, str) else s["values"][str(values[str(i)])]
    if p.mods != tuple(mods):
        return False
    for (key, _, _), value in zip(variables, combo):
        if "." in key:
            j, flag = key.split(".")
            if bool(p.operands[int(j)].get(flag)) != bool(value):
                return False
    return True


def minimal_conflicts(n: int, legal: set, illegal: list) -> list[dict]:
    """The smallest partial assignments {variable index: value} no confirmed combination
    extends, enough to cover every illegal one (smaller ones first, none containing
    another)."""
    conflicts: list[dict] = []
    uncovered = set(illegal)
    for k in range(1, n + 1):
        if not uncovered:
            break
        for subset in itertools.combinations(range(n), k):
            seen = {tuple(c[i] for i in subset) for c in legal}
            for a in sorted({tuple(c[i] for i in subset) for c in uncovered} - seen):
                conflict = dict(zip(subset, a))
                if not any(all(conflict.get(i) == v for i, v in c.items()) for c in conflicts):
                    conflicts.append(conflict)
            uncovered = {c for c in uncovered if not any(all(c[i] == v for i, v in cf.items()) for cf in conflicts)}
    return conflicts


def learn_illegal(forms: list[dict], log) -> None:
    """Step 7: every combination of each form's modifier values and operand flags, on the
    word it was learned from, asked of nvdisasm; those it refuses or prints otherwise are
    the form's `illegal` list (minimal partial combinations), so that the encoder refuses
    them and the decoder does not read such a word as this form (I2F.U32.RP with a
    constant-bank source is one: nvdisasm: "Unrecognized operation for functional unit")."""
    plans = []
    for f in forms:
        variables = combination_variables(f)
        total = 1
        for _, _, vals in variables:
            total *= len(vals)
        if not variables or total == 1:
            continue
        base_values = [field.raw(f["_word"]) for _, field, _ in variables]
        if total <= MAX_COMBINATIONS:
            combos = list(itertools.product(*(vals for _, _, vals in variables)))
        else:  # each pair of variables over all their values, the rest as learned
            combos = set()
            for a, b in itertools.combinations(range(len(variables)), 2):
                for va in variables[a][2]:
                    for vb in variables[b][2]:
                        c = list(base_values)
                        c[a], c[b] = va, vb
                        combos.add(tuple(c))
            combos = sorted(combos)
            f.setdefault("notes", []).append(f"{total} combinations: only pairs of modifier values checked")
        words = []
        for combo in combos:
            w = f["_word"]
            for (_, field, _), value in zip(variables, combo):
                w = field.put(w, value)
            words.append(w)
        plans.append((f, variables, combos, words))
    all_words = [w for *_, words in plans for w in words]
    log(f"asking nvdisasm about {len(all_words)} combinations of {len(plans)} forms")
    texts = []
    for start in range(0, len(all_words), 50000):
        texts += nvdisasm_batch(all_words[start:start + 50000])
    at = 0
    for f, variables, combos, words in plans:
        base_text = texts[at + combos.index(tuple(field.raw(f["_word"]) for _, field, _ in variables))]
        if base_text is None:
            raise RuntimeError(f"{f['name']}: nvdisasm refuses the word it was learned from")
        base = parse_instr(base_text)
        legal, illegal = set(), []
        for k, combo in enumerate(combos):
            (legal.add(combo) if combination_prints(f, variables, combo, base, texts[at + k]) else illegal.append(combo))
        at += len(combos)
        if not illegal:
            continue
        if not legal:
            raise RuntimeError(f"{f['name']}: nvdisasm refuses every combination of its modifiers")
        conflicts = minimal_conflicts(len(variables), legal, illegal)
        f["illegal"] = [{variables[i][0]: v for i, v in sorted(c.items())} for c in conflicts]
        log(f"  {f['name']}: {len(illegal)} of {len(combos)} combinations refused: {len(conflicts)} rules")


def compile_frontend_ptx(tmp: Path) -> list[Path]:
    """ptxas's cubins of ptxc's own PTX for every testsuite/*.cu its frontend compiles:
    ptxas meets forms there that nvcc's PTX does not lead it to (QSPC for generic
    atomics, uniform-register operands of ISETP and IADD3.X), and the emulator must
    read those cubins too (tests/test_frontend_emu.py)."""
    sys.path.insert(0, str(ROOT))
    from ptxc.diagnostics import CompileError
    from ptxc.frontend import compile_cuda
    from ptxc.ptx.printer import print_module
    out = []
    for cu in sorted((ROOT / "testsuite").glob("*.cu")):
        try:
            module, _ = compile_cuda(cu.read_text(), str(cu), arch=ARCH)
        except CompileError:
            print(f"skipped ptxc's PTX of {cu.name}: the frontend rejects it", file=sys.stderr)
            continue
        ptx = tmp / f"{cu.stem}.ptxc.ptx"
        ptx.write_text(print_module(module).replace(".target sm_89", f".target {ARCH}"))
        cubin = tmp / f"{cu.stem}.ptxc.cubin"
        if oracle.run("ptxas", f"-arch={ARCH}", "-o", str(cubin), str(ptx), check=False).returncode == 0:
            out.append(cubin)
    return out


def tool_words() -> list[tuple[str, int, int, str]]:
    """Every word ptxas writes for PROBES, nvcc for testsuite/*.cu, and ptxas for ptxc's
    PTX of testsuite/*.cu, with its text."""
    with tempfile.TemporaryDirectory() as tmp:
        words = cuobjdump_words(compile_probes(Path(tmp)))
        for cubin in compile_testsuite(Path(tmp)) + compile_frontend_ptx(Path(tmp)):
            words += cuobjdump_words(cubin)
    return words


def learn(words, verbose: bool = False, only: str | None = None) -> dict:
    log = (lambda s: print(s, file=sys.stderr)) if verbose else (lambda s: None)
    reps = representatives(words)  # control bits kept: some values make a word illegal
    if only:  # while teaching the script an instruction: learn just those words
        reps = [(w, t) for w, t in reps if re.search(only, t)]
    log(f"{len(words)} words, {len(reps)} representatives")
    reps = denan(reps, log)
    unread = [t for _, t in reps if not readable(parse_instr(t))]
    reps = [(w, t) for w, t in reps if readable(parse_instr(t))]
    for t in unread:
        print(f"not learned (operand syntax this script cannot read yet): {t}", file=sys.stderr)
    targets = find_targets(reps, log)
    drafts = [Draft(w, 0, parse_instr(t), tg) for (w, t), tg in zip(reps, targets)]
    neighbours = learn_bits(drafts, log)
    again = unhide(drafts, log)
    learn_bits(list(again.values()), log)
    drafts = [again.get(id(d), d) for d in drafts]
    known = {shape_key(d.parsed) for d in drafts}
    frontier = drafts
    for round_ in range(SHAPE_ROUNDS):  # every operand shape the encodings have, to a fixed point
        neighbours += shape_combinations(frontier, log)
        more, seen = [], set()
        for w, t, bits in neighbours:
            key = shape_key(parse_instr(t))
            if key not in known and key not in seen and readable(parse_instr(t)):
                seen.add(key)
                more.append((w, t, bits))
        log(f"round {round_}: {len(more)} more shapes some opcode bits away")
        if not more:
            break
        known |= seen
        more_drafts = [Draft(w, 0, parse_instr(t), tg, derived=True, parent_operand_bits=bits)
                       for (w, t, bits), tg in zip(more, find_targets([(w, t) for w, t, _ in more], log))]
        neighbours = learn_bits(more_drafts, log)
        again = unhide(more_drafts, log)
        learn_bits(list(again.values()), log)
        frontier = [again.get(id(d), d) for d in more_drafts]
        drafts += frontier
        reps += [(w, t + "  (an opcode bit away from a ptxas word)") for w, t, _ in more]
    enumerate_values(drafts, log)
    fix_dependent_flags(drafts, log)
    fix_hiding_mods(drafts, log)
    join_overlaps(drafts, log)
    learn_reuse_and_aliases(drafts, log)
    order_mod_fields(drafts, log)
    learn_mod_dependence(drafts, log)
    reuse_shown_if = learn_control_printing(drafts, log)
    forms = []
    for d, (_, text) in zip(drafts, reps):
        try:
            f = draft_to_form(d, log)
        except RuntimeError as e:
            print(f"not learned: {text}: {e}", file=sys.stderr)
            continue
        f["example"] = text
        if d.notes:
            f["notes"] = d.notes
        forms.append(f)
        log(f"  {text:55s} -> {form_name(f)}")
    forms = merge(forms, log)
    learn_illegal(forms, log)
    for f in forms:
        del f["_word"]
    version = next(line for line in oracle.run("nvdisasm", "--version").stdout.splitlines() if "release" in line)
    return {
        "comment": "generated by scripts/learn_sm89_table.py; do not edit",
        "arch": ARCH,
        "learned_from": version,
        "control": {"bits": [105, 126], "layout": "ptxc.sass.ir.Control", "reuse_shown_if": reuse_shown_if},
        "forms": forms,
    }


def dumps(value, indent: int = 0, width: int = 100) -> str:
    """JSON with one thing per line, except that anything fitting on a line stays there."""
    flat = json.dumps(value)
    if len(flat) + indent <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {dumps(v, indent + 1, width)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dumps(v, indent + 1, width) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def write(table: dict, path: Path) -> None:
    path.write_text(dumps(table) + "\n")


def check_tool_words(path: Path, words, verbose: bool) -> int:
    """Step 6a: every word the tools wrote either decodes, prints as cuobjdump printed it
    and encodes back to itself, or decodes to UNKNOWN (no verified form explains it: not
    covered, reported, not an error); a word read as a form but printed or encoded
    otherwise is an error.  Returns the number of those."""
    from ptxc.sass import decode, encode, printer, table as table_mod
    tbl = table_mod.load(path)
    bad = unknown = 0
    for func, addr, word, text in words:
        raw = word.to_bytes(16, "little")
        instr = decode.decode(raw, addr, tbl)
        ours = printer.format_instr(instr, addr, tbl)
        try:
            again = encode.encode(instr, addr, tbl)
        except table_mod.TableError as e:
            again = str(e).encode()
        if ours != text or again != raw:
            wrong = instr.op != "UNKNOWN"
            bad += wrong
            unknown += not wrong
            if verbose or wrong or unknown <= 10:
                print(f"{'TOOL WORD' if wrong else 'NOT COVERED'} {func}+{addr:#x} {raw.hex()}:\n  cuobjdump: {text}\n"
                      f"  ptxc:      {ours}" + ("" if again == raw else f"\n  re-encoded: {again.hex()}"),
                      file=sys.stderr)
    print(f"check: {len(words) - bad - unknown}/{len(words)} words of ptxas and nvcc decode, print and re-encode "
          f"exactly; {unknown} decode to UNKNOWN (no verified form), {bad} wrongly")
    return bad


def count_operands(text: str) -> int:
    body = re.sub(r"^@!?U?P[0-9T]\s+", "", text.rstrip(";").strip())
    return len(operand_texts(body.partition(" ")[2]))


def quirk_jobs(fd: dict, j: int, spec, base: int, jobs: list) -> None:
    """The words learn_print_quirks asks about operand `j` of form `fd`."""
    f = spec.fields
    if spec.kind == "reg" and "abs" in f and "sel" in f:
        for v in sorted(k for k, name in spec.enums.get("sel", {}).items() if name)[:2]:
            jobs.append((fd, j, "sel_in_abs", f["sel"].put(f["abs"].put(base, 1), v)))
    if (spec.kind == "mem" and "offset" in f and f["offset"].signed and "ubase" not in f
            and (spec.rz_base == "omit" or "base" not in f)):
        w = f["base"].put(base, ZERO["R"]) if "base" in f else base
        jobs.append((fd, j, "offset_signed_alone", f["offset"].put(w, -16 & ((1 << f["offset"].top) - 1))))
    if spec.kind == "imm" and "value" in f and not f["value"].bias and not spec.omit_if_zero:
        jobs.append((fd, j, "imm0", (f["value"].put(base, 0), f["value"].put(base, 1))))


def learn_print_quirks(path: Path, table: dict, log) -> None:
    """Step 6: printing facts that depend on the form, asked of nvdisasm on an encoding
    of each form with the part set: where an absolute value's selector goes (MUFU.F16
    prints `|R86.H1|`, HADD2 `|R2|.H0_H0`: `sel_in_abs`), whether an offset standing
    alone prints signed (LDGSTS's shared address `[-0x10]`: `offset_signed_alone`), and
    whether an immediate 0 is left out (BAR.SYNC's thread count: `omit_if_zero`)."""
    from ptxc.sass import encode, table as table_mod
    from ptxc.sass.ir import Control
    tbl = table_mod.load(path)
    rng = random.Random(6)
    jobs = []   # (form dict, operand index, key, [(word, expects)...])
    for fd, form in zip(table["forms"], tbl.forms):
        base = None
        for _ in range(8):
            try:
                base = int.from_bytes(encode.encode(table_mod.random_instr(form, rng, 0, Control()), 0, tbl), "little")
                break
            except table_mod.TableError:
                continue
        if base is None:
            continue
        for spec in form.operands:   # no other operand's bars or selector in the way
            for part in ("abs", "sel"):
                if part in spec.fields:
                    base = spec.fields[part].put(base, 0)
        for j, spec in enumerate(form.operands):
            try:
                quirk_jobs(fd, j, spec, base, jobs)
            except table_mod.TableError:
                continue
    words = []
    for _, _, key, w in jobs:
        words += list(w) if key == "imm0" else [w]
    texts = iter(nvdisasm_batch(words))
    found = {}
    for fd, j, key, _ in jobs:
        if key == "imm0":
            zero, one = next(texts), next(texts)
            if zero is not None and one is not None and count_operands(one) == count_operands(zero) + 1:
                found[(id(fd), j, "omit_if_zero")] = (fd, j)
            continue
        text = next(texts)
        if text is None:
            continue
        if key == "sel_in_abs" and re.search(r"\.[A-Z0-9_]+\|", text):
            found[(id(fd), j, key)] = (fd, j)
        if key == "offset_signed_alone" and "[-0x10]" in text:
            found[(id(fd), j, key)] = (fd, j)
    for (_, j, key), (fd, _) in found.items():
        fd["operands"][j][key] = True
        log(f"  {fd['name']}: operand {j}: {key}")
    print(f"printing: {len(found)} operands print differently from the default ({len(jobs)} asked)")
    write(table, path)
    table_mod_reset()


def verify(path: Path, samples: int, verbose: bool, failed: set | None = None, seed: int = 89) -> int:
    """Step 6b: random encodings of every form, printed by ptxc and by nvdisasm.

    Random field values can make words the hardware does not have (nvdisasm rejects
    them); those are counted, not compared.  The names of the forms that failed go
    into `failed`."""
    from ptxc.sass import encode, printer, table as table_mod
    failed = set() if failed is None else failed
    tbl = table_mod.load(path)
    rng = random.Random(seed)
    instrs, words, unencodable = [], [], 0
    for form in tbl.forms:
        for _ in range(samples):
            instr = table_mod.random_instr(form, rng, 16 * len(instrs))
            try:
                words.append(encode.encode(instr, 16 * len(instrs), tbl))
            except table_mod.TableError as e:   # the form's own random instruction: a table bug
                unencodable += 1
                failed.add(form.name)
                print(f"UNENCODABLE {form.name}: {e}", file=sys.stderr)
                continue
            instrs.append(instr)
    texts = nvdisasm_batch([int.from_bytes(w, "little") for w in words])
    from ptxc.sass import decode
    bad, illegal, shown = 0, 0, set()
    for n, (i, w, t) in enumerate(zip(instrs, words, texts)):
        again = encode.encode(decode.decode(w, 16 * n, tbl), 16 * n, tbl)
        if again != w:
            bad += 1
            failed.add(table_mod.match_form(tbl, i)[0].name)
            print(f"ROUND TRIP {table_mod.match_form(tbl, i)[0].name} {w.hex()} -> {again.hex()}", file=sys.stderr)
        if t is None:
            illegal += 1
            continue
        ours = printer.format_instr(i, 16 * n, tbl)
        if t != ours:
            bad += 1
            form = table_mod.match_form(tbl, i)[0].name
            failed.add(form)
            if verbose or form not in shown:
                shown.add(form)
                print(f"MISMATCH {form} {w.hex()}:\n  nvdisasm: {t}\n  ptxc:     {ours}", file=sys.stderr)
    print(f"verify: {len(instrs) - bad - illegal}/{len(instrs) - illegal} random encodings print as nvdisasm "
          f"prints them ({illegal} illegal ones skipped, {unencodable} the table could not encode)")
    return bad + unencodable


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_89", choices=ARCHS)
    ap.add_argument("-o", "--out", type=Path, default=None, help="default ptxc/sass/<arch>.json")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--only", metavar="REGEX", help="learn only the words whose text matches (to debug)")
    ap.add_argument("--words", type=Path, metavar="FILE",
                    help="keep the tools' words in FILE and read them from there next time (to debug)")
    ap.add_argument("--samples", type=int, default=40, help="random encodings per form to verify")
    args = ap.parse_args(argv)
    set_arch(args.arch)
    args.out = args.out or OUT
    if args.words and args.words.exists():   # while working on the script: skip the compiles
        words = [tuple(w) for w in json.loads(args.words.read_text())]
    else:
        words = tool_words()
        if args.words:
            args.words.write_text(json.dumps(words))
    table = learn(words, args.verbose, args.only)
    write(table, args.out)
    print(f"wrote {args.out}: {len(table['forms'])} forms of {len({f['op'] for f in table['forms']})} operations")
    if args.no_verify:
        return 0
    learn_print_quirks(args.out, table, log=print if args.verbose else (lambda *a: None))
    bad = 0 if args.only else check_tool_words(args.out, words, args.verbose)
    failed: set = set()
    bad += verify(args.out, args.samples, args.verbose, failed)
    for round_ in range(PRUNE_ROUNDS):   # only verified forms stay: a form dropped is better than a form wrong
        pruned = prune(table, failed)
        if not pruned:
            break
        print(f"left out {len(pruned)} forms that failed verification: {', '.join(sorted(pruned))}")
        write(table, args.out)
        table_mod_reset()
        print(f"wrote {args.out}: {len(table['forms'])} forms of {len({f['op'] for f in table['forms']})} operations")
        bad = 0 if args.only else check_tool_words(args.out, words, args.verbose)
        failed = set()
        bad += verify(args.out, args.samples, args.verbose, failed, seed=90 + round_)
    return 1 if bad else 0


PRUNE_ROUNDS = 4   # a new random sample each round: forms whose rare encodings fail show up late


DERIVED = "(an opcode bit away from a ptxas word)"


def prune(table: dict, failed: set) -> set:
    """Leave out the forms in `failed`: some random encoding of theirs prints otherwise
    than nvdisasm prints it, or the table cannot encode its own random instruction.  The
    words of the tools such a form explained decode to UNKNOWN then (check_tool_words
    counts them as not covered), which the emulator stops on, rather than to a wrong text."""
    gone = {f["name"] for f in table["forms"] if f["name"] in failed}
    table["forms"] = [f for f in table["forms"] if f["name"] not in gone]
    return gone


def table_mod_reset() -> None:
    from ptxc.sass import table as table_mod
    table_mod.load.cache_clear()


if __name__ == "__main__":
    sys.exit(main())
