"""One record per target architecture: every fact a stage decodes from the target's name.

    from ptxc.sass.target import TARGETS, target
    t = target("sm_90")          # Target(name="sm_90", sm=90, param_base=0x210, ...)
    t.param_base, t.descriptor, t.reserved_shared, t.table_file, t.e_flags

The encoder and decoder (the instruction table's file), lowering (the bank-0 layout, the
shared window, opcode spellings, which passes apply, register limits), the scheduler (the
latency file), the cubin writer and reader (ELF flags, the layout family, the .nv.info
records that differ), the printer (cuobjdump's header flags), the emulator (bank 0, the
shared-memory limits) and the host runtime (what cudaGetDeviceProperties reports) all
read this record; no other module keeps a per-architecture dictionary.

Where the facts come from (docs/pipeline.md, "Adding a target"):

- bank 0, the descriptor slot, the parameter base, the ELF flags, the .nv.info records, the
  layout: nvcc 13.5's cubins for the target (`cuobjdump -elf`, `cuobjdump -sass`; the
  `c[0x0][...]` operands of its code), and tests/test_target.py checks them against them;
- the limits per block and per SM: the CUDA C++ Programming Guide's technical
  specifications per compute capability and the architecture tuning guides (Ampere: 8.0
  has 164 KB of shared memory per SM, 8.6 has 100 KB, 1 KB of it reserved for the system,
  so 163 KB / 99 KB per block; 8.0 keeps 64 resident warps (2048 threads) and 32 blocks
  per SM, 8.6 48 warps (1536 threads) and 16 blocks);
- the product (SM count, memory, L2, bus width): a public part of the architecture
  (sm_80: A100 40GB, 108 SMs, 40 MB L2, 5120-bit HBM2; sm_86: RTX 3090, 82 SMs, 24 GB,
  6 MB L2, 384-bit; sm_89: a 128-SM Ada part; sm_90: the H200's 132 SMs, 141 GB); the
  emulator is no product, so no result may depend on these.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

KIB, GIB = 1024, 1024 ** 3
E_FLAGS_BASE = 0x06000004      # e_flags = E_FLAGS_BASE | sm << 8 (nvcc's sm_89 cubin: 0x6005904)


@dataclass(frozen=True)
class Bank0:
    """Constant bank 0 as the driver fills it (the offsets nvcc's code reads)."""
    block_dim: int = 0x000         # blockDim.x, .y, .z (u32 each)
    grid_dim: int = 0x00C          # gridDim.x, .y, .z
    shared_window: int = 0x018     # 64-bit generic address of shared offset 0
    local_window: int = 0x020      # 64-bit generic address of local offset 0
    stack_base: int = 0x028        # the top of each thread's local memory (R1 starts here)


@dataclass(frozen=True)
class Product:
    """The facts of a product, not of the architecture (cudaGetDeviceProperties)."""
    multiprocessors: int
    global_memory: int
    l2_cache: int
    bus_width: int


@dataclass(frozen=True)
class Target:
    name: str                      # "sm_89": -arch, the PTX .target, the table's stem
    sm: int                        # 89: e_flags' SM byte, .note.nv.cuinfo, __CUDA_ARCH__ / 10
    family: str                    # "Ampere", "Ada", "Hopper"
    # -- constant bank 0 --
    param_base: int                # where kernel parameters start
    descriptor: int                # the 64-bit global-memory descriptor (`ULDC.64 UR4, c[0x0][...]`)
    bank0: Bank0 = Bank0()
    # -- shared memory --
    reserved_shared: int = 0       # bytes the driver reserves at the start of .nv.shared.<k>
    shared_rank_shift: int | None = None   # a shared address carries the CTA's cluster rank here
    window_hi_sreg: str | None = None      # the shared window's high word from this register
    max_shared_per_block: int = 48 * KIB   # the opt-in maximum of a block's own shared memory
    shared_per_sm: int = 0
    # -- the ISA as lowering sees it --
    opcodes: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # IR op -> this target's
    cbank_via_ldc: bool = False    # instructions read constant banks only through LDC/ULDC
    double_pool: bool = False      # doubles come from the kernel's constant bank 2 (pool_double_constants)
    registers: int = 255           # R registers a thread may use (R0..R254; RZ is 255)
    uniform_registers: int = 63    # UR0..UR62
    predicates: int = 7            # P0..P6
    # collectives ptxas lowers under a member mask that may differ between lanes as
    # `BSSY; WARPSYNC.EXCLUSIVE mask; op; BSYNC` (ptxc.lower.isel_control; measured with
    # ptxas 13 on sm_89 and sm_90; sm_8x taken as sm_89's)
    exclusive_collectives: frozenset = frozenset({"REDUX"})
    lepc_takes_target: bool = False  # `LEPC Rd, label` (sm_90) or `LEPC Rd` and an add (sm_8x)
    # -- files beside ptxc/sass/ and ptxc/lower/ --
    table_file: str = ""           # ptxc/sass/<name>.json (scripts/learn_sm89_table.py --arch)
    latency_file: str = ""         # ptxc/sass/<name>_latencies.json
    mathlib_file: str = ""         # ptxc/lower/mathlib_smNN.json (scripts/learn_mathlib.py --arch)
    nvdisasm_arch: str = ""        # `nvdisasm -b SM89`
    # -- the cubin --
    layout: str = "ada"            # "ada": _Plan; "hopper": _PlanSM90 (ptxc.cubin.writer)
    unnamed_5f: int = 0            # EIATTR 0x5f's value in every .nv.info.<k>
    kernel_nval_attrs: tuple = ()  # NVAL records after CUDA_API_VERSION in .nv.info.<k> (sm_8x: 0x35)
    # sm_90's ptxas writes MIN_STACK_SIZE 0 for a kernel that calls subroutines: the
    # emulator runs it in the driver's default stack
    calls_unbounded_stack: bool = False
    # cuobjdump prints the memory descriptor of global accesses (`desc[UR4][R2.64]`)
    prints_descriptor: bool = False
    # -- what cudaGetDeviceProperties reports --
    threads_per_sm: int = 2048
    blocks_per_sm: int = 32
    product: Product = Product(1, GIB, 1, 64)

    @property
    def e_flags(self) -> int:
        return E_FLAGS_BASE | self.sm << 8

    @property
    def header_flags(self) -> str:
        """cuobjdump's `.headerflags` of a cubin for this target."""
        return f'@"EF_CUDA_SM{self.sm} EF_CUDA_VIRTUAL_SM(EF_CUDA_SM{self.sm})"'

    @property
    def compute_capability(self) -> tuple[int, int]:
        return self.sm // 10, self.sm % 10


def _record(name: str, family: str, **facts) -> Target:
    sm = int(name.removeprefix("sm_"))
    files = dict(table_file=f"{name}.json", latency_file=f"{name}_latencies.json",
                 mathlib_file=f"mathlib_sm{sm}.json", nvdisasm_arch=f"SM{sm}")
    return Target(name=name, sm=sm, family=family, **{**files, **facts})


# Ampere's sm_80 / sm_86 and Ada's sm_89 share the bank-0 layout, the parameter base and
# ptxas's cubin layout; sm_8x cubins of ptxas 13.5 carry an NVAL record 0x35 in every
# .nv.info.<k> that sm_89's do not (cuobjdump: "unknown Attribute").
TARGETS: dict[str, Target] = {t.name: t for t in (
    _record("sm_80", "Ampere", param_base=0x160, descriptor=0x118, double_pool=True,
            kernel_nval_attrs=(0x35,), max_shared_per_block=163 * KIB, shared_per_sm=164 * KIB,
            threads_per_sm=2048, blocks_per_sm=32,
            product=Product(108, 40 * GIB, 40 * 1024 * KIB, 5120)),
    _record("sm_86", "Ampere", param_base=0x160, descriptor=0x118, double_pool=True,
            kernel_nval_attrs=(0x35,), max_shared_per_block=99 * KIB, shared_per_sm=100 * KIB,
            threads_per_sm=1536, blocks_per_sm=16,
            product=Product(82, 24 * GIB, 6 * 1024 * KIB, 384)),
    _record("sm_89", "Ada", param_base=0x160, descriptor=0x118, double_pool=True,
            max_shared_per_block=99 * KIB, shared_per_sm=100 * KIB, threads_per_sm=1536, blocks_per_sm=24,
            product=Product(128, 24 * GIB, 72 * 1024 * KIB, 384)),
    _record("sm_90", "Hopper", param_base=0x210, descriptor=0x208, reserved_shared=0x400,
            shared_rank_shift=24, window_hi_sreg="SR_SWINHI",
            opcodes=MappingProxyType({"IMNMX": "VIMNMX", "RED": "REDG"}), cbank_via_ldc=True,
            exclusive_collectives=frozenset({"VOTE", "MATCH", "REDUX"}), lepc_takes_target=True,
            layout="hopper", unnamed_5f=0x101, calls_unbounded_stack=True, prints_descriptor=True,
            max_shared_per_block=227 * KIB, shared_per_sm=228 * KIB, threads_per_sm=2048, blocks_per_sm=32,
            product=Product(132, 141 * GIB, 50 * 1024 * KIB, 6144)),
)}
DEFAULT = "sm_89"


class UnknownTarget(ValueError):
    pass


def target(name: str) -> Target:
    """The record of `name` ("sm_89"); UnknownTarget names the targets there are."""
    found = TARGETS.get(name)
    if found is None:
        raise UnknownTarget(f"unsupported architecture {name!r} ({', '.join(TARGETS)})")
    return found


def with_table() -> tuple[str, ...]:
    """The targets whose instruction table has been learned (ptxc/sass/<table_file>):
    a record comes first, its table-learning run after (docs/pipeline.md)."""
    from pathlib import Path
    here = Path(__file__).parent
    return tuple(name for name, t in TARGETS.items() if (here / t.table_file).exists())


def with_backend() -> tuple[str, ...]:
    """The targets ptxc compiles to SASS for (and `ptxc run`/`check` emulate): their
    instruction table, latency table (ptxc/sass/) and math sequences (ptxc/lower/) exist."""
    from pathlib import Path
    here = Path(__file__).parent
    return tuple(name for name in with_table()
                 if (here / TARGETS[name].latency_file).exists()
                 and (here.parent / "lower" / TARGETS[name].mathlib_file).exists())


def by_sm(sm: int) -> Target | None:
    """The record whose SM number is `sm` (a cubin's e_flags), None if there is none."""
    return next((t for t in TARGETS.values() if t.sm == sm), None)
