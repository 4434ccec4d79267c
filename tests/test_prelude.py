"""The prelude (ptxc/frontend/prelude.cu): CUDA functions ptxc writes in CUDA.

Their results against nvcc's are checked by testsuite/fe_math_sincos.cu (every
testsuite sweep). These tests guard the mechanism only: what is added to a file, and
when; the last compares ptxc's PTX with ptxc's own PTX of the same kernel written with
sinf/cosf (a regression guard, no claim about correctness)."""
from __future__ import annotations

from ptxc.frontend import compile_cuda, parse_cuda
from ptxc.frontend import ast as A
from ptxc.frontend.prelude import prelude_names
from ptxc.ptx.printer import print_module

USES = """__global__ void k(float* a) {
    float s, c;
    sincosf(a[threadIdx.x], &s, &c);
    a[threadIdx.x] = s + c;
}
"""


def function_names(program) -> list[str]:
    return [item.declarator.name for item in program.items if isinstance(item, A.FunctionDef)]


def test_prelude_names_come_from_the_file():
    assert {"sincosf", "sincos", "sincospif", "sincospi", "__sincosf"} <= set(prelude_names())


def test_a_file_that_names_no_prelude_function_is_unchanged():
    program, _ = parse_cuda("__global__ void k(float* a) { a[0] = sinf(a[1]); }\n", "k.cu")
    assert function_names(program) == ["k"]


def test_only_the_named_function_is_added():
    program, _ = parse_cuda(USES, "k.cu")
    assert function_names(program) == ["sincosf", "k"]


def test_a_definition_of_the_users_own_wins():
    source = "__device__ void sincosf(float x, float* s, float* c) { *s = x; *c = -x; }\n" + USES
    program, _ = parse_cuda(source, "k.cu")
    assert function_names(program) == ["sincosf", "k"]
    # sinf's code (its range reduction and slow path's local array) is in the prelude's
    # sincosf and not in the user's
    theirs = print_module(compile_cuda(USES, "k.cu")[0])
    assert "__local_depot" in theirs and "cvt.rni.s32.f32" in theirs
    ptx = print_module(compile_cuda(source, "k.cu")[0])
    assert "__local_depot" not in ptx and "cvt.rni.s32.f32" not in ptx


def test_results_through_pointers_to_locals_stay_in_registers():
    """s and c are not given memory: the only local memory is sinf's slow path's array,
    as in a kernel that calls sinf and cosf itself."""
    ours = print_module(compile_cuda(USES, "k.cu")[0])
    direct = print_module(compile_cuda(USES.replace("sincosf(a[threadIdx.x], &s, &c);",
                                                    "s = sinf(a[threadIdx.x]); c = cosf(a[threadIdx.x]);"),
                                       "k.cu")[0])
    depot = [line for line in ours.splitlines() if "__local_depot" in line and ".local" in line]
    assert depot == [line for line in direct.splitlines() if "__local_depot" in line and ".local" in line]
