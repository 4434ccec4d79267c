"""Glue between the stages: source text -> PTX module -> SASS functions -> cubin bytes.

The command line (ptxc.cli) calls these; tests and scripts can too.  Nothing here
imports numba: compiling never pays for the emulator.  Each stage is imported by the
function that runs it, so `ptxc x.cu -ptx` loads no lowering and `ptxc x.ptx` no frontend.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from . import __version__
from .diagnostics import CompileError, Diagnostic
from .ptx import ir as ptx
from .sass.target import TARGETS, with_backend

ARCHS = tuple(TARGETS)               # targets the PTX path accepts (ptxc.sass.target)
SASS_ARCHS = with_backend()          # targets with an instruction table, latencies and math sequences
INSTR_BYTES = 16


@dataclass
class Kernel:
    """One compiled kernel: its SASS IR (laid out) and encoded text."""
    name: str
    func: object            # ptxc.sass.ir.Function, final
    addrs: list             # (addr, Instr) in layout order
    text: bytes
    exit_offsets: list = field(default_factory=list)


def load_module(path: str, source: str, arch: str = "sm_89", ptx_version: str = "9.5",
                options=None) -> ptx.Module:
    """CUDA (.cu) through the frontend (`options`: its -I/-D/-U), or PTX (.ptx) through
    the PTX parser."""
    if path.endswith(".ptx"):
        from .ptx.parser import parse_ptx
        return parse_ptx(source, path)
    from .frontend import compile_cuda
    module, _program = compile_cuda(source, path, arch=arch, ptx_version=ptx_version, options=options)
    return module


def tune_gc() -> None:
    """Collect the young generation every 50,000 allocations rather than every 700:
    the passes make millions of short-lived tuples and sets and few cycles, and the
    collector's scans took 20-30 % of a math-heavy compile (fe_math_double, measured).
    Process-wide; changes no output.  `ptxc` compiling and scripts/bench.py call it."""
    import gc
    gc.set_threshold(50_000, 20, 20)


def reparse(module: ptx.Module, path: str) -> tuple[ptx.Module, str, str]:
    """The frontend's module as the backend reads it: printed and parsed back, as ptxas
    reads nvcc's PTX.  Inline `asm` (kept as text by the frontend) becomes ordinary
    instructions, and every instruction gets a line in that PTX text, so a lowering
    error shows it with a caret.  Returns (module, PTX path named in errors, PTX text)."""
    from .ptx.parser import parse_ptx
    from .ptx.printer import print_module
    text = print_module(module)
    ptx_path = str(Path(path).with_suffix(".ptx"))
    return parse_ptx(text, ptx_path), ptx_path, text


def layout(func) -> list:
    """Give every instruction its address and resolve branch targets to addresses."""
    from .sass.ir import Target
    addrs, label_addr, addr = [], {}, 0
    for block in func.blocks:
        label_addr[block.label] = addr
        for instr in block.instrs:
            addrs.append((addr, instr))
            addr += INSTR_BYTES
    for _addr, instr in addrs:
        instr.srcs = [replace(op, addr=label_addr[op.label]) if isinstance(op, Target) and op.label else op
                      for op in instr.srcs]
    return addrs


def lower_module(module: ptx.Module, options, failed: dict | None = None) -> list[Kernel]:
    """Every kernel of `module` lowered (ptxc.lower.pipeline.lower_module, the module
    driver: `options` a ptxc.lower.pipeline.Options), laid out and encoded.  With
    `failed` (a dict), a kernel that cannot be lowered or encoded is left out and its
    exception kept there by name, and no kernel at all is not an error."""
    from .lower.pipeline import lower_module as lower_functions
    from .sass.encode import encode
    from .sass.table import load
    table = load(options.arch)
    kernels = []
    for name, func in lower_functions(module, options, failed):
        try:
            addrs = layout(func)
            text = b"".join(encode(instr, addr, table) for addr, instr in addrs)
        except Exception as exc:
            if failed is None:
                raise
            failed[name] = exc
            continue
        exits = [addr for addr, instr in addrs if instr.op == "EXIT"]
        kernels.append(Kernel(name, func, addrs, text, exits))
    if not kernels and failed is None:
        raise CompileError(Diagnostic("no kernel (__global__ / .entry function) to compile"))
    return kernels


def cubin_bytes(kernels: list[Kernel], arch: str) -> bytes:
    """The cubin of `kernels` (source order) and of the module variables they were
    lowered against (every kernel of a module carries the same ModuleVars)."""
    from .cubin.writer import write_cubin
    images = [kernel_image(k) for k in kernels]
    module_vars = next((k.func.module_vars for k in kernels if getattr(k.func, "module_vars", None)), None)
    return write_cubin(images, arch=arch, tool_name="ptxc", tool_version=f"ptxc {__version__}",
                       variables=module_variables(kernels),
                       extern_slots=getattr(module_vars, "extern_slots", None))


def module_variables(kernels: list[Kernel]) -> list:
    """The `.const` and `.global` variables as the cubin writer takes them, at the
    places select_instrs gave them (ModuleVars), in placement order."""
    from .cubin.writer import ModuleVariable
    from .lower.select_instrs import initial_bytes, variable_align
    module_vars = next((k.func.module_vars for k in kernels if getattr(k.func, "module_vars", None)), None)
    if module_vars is None:
        return []
    out = []
    for var in module_vars.placed():
        if var.state == ".const":
            out.append(ModuleVariable(var.name, "const", var.size, variable_align(var),
                                      module_vars.const_offsets[var.name], initial_bytes(var),
                                      visible=var.visible))
        else:
            out.append(ModuleVariable(var.name, "global", var.size, variable_align(var),
                                      module_vars.global_offsets[var.name], initial_bytes(var),
                                      module_vars.address_slots[var.name], var.visible))
    return out


def kernel_image(kernel: Kernel):
    """What the cubin writer needs of a kernel: its code, parameters and .nv.info facts."""
    from .cubin.writer import KernelImage
    from .lower.kernel_info import info_of
    info = info_of(kernel.func)
    image = KernelImage(name=kernel.name, text=kernel.text, params=list(kernel.func.params),
                        regcount=kernel.func.num_regs, exit_offsets=kernel.exit_offsets,
                        param_base=kernel.func.param_base)
    image.shared_size = info.shared_size
    image.constant_pool = b"".join(w.to_bytes(8, "little") for w in getattr(kernel.func, "constant_pool", None) or ())
    image.shared_align = max(info.shared_align, 4)
    image.num_barriers = info.num_barriers
    syscalls = getattr(kernel.func, "syscalls", None) or []   # expand_extern_calls: (CALL, callee)
    calls = {id(call): name for call, name in syscalls}
    image.externs = list(dict.fromkeys(name for _call, name in syscalls))
    image.syscall_offsets = [addr for addr, i in kernel.addrs if id(i) in calls]
    image.calls = any(i.op == "CALL" and id(i) not in calls for _addr, i in kernel.addrs)   # link_calls' subroutines
    image.frame_size = info.frame_size
    image.min_stack_size = info.frame_size if info.stack_size is None else info.stack_size
    if info.max_reg_count:
        image.max_reg_count = info.max_reg_count
    if info.max_threads:
        image.max_threads = tuple(info.max_threads) + (1,) * (3 - len(info.max_threads))
    return image


def sass_listing(kernels: list[Kernel], arch: str) -> str:
    """The kernels as `cuobjdump -sass` prints them."""
    from .sass.printer import format_file
    return format_file([(k.name, k.addrs) for k in reversed(kernels)], arch)  # file order: last kernel first
