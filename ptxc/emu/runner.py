"""One launch on the jitted core: the arrays it needs, the call, and the reports when it
stops early (a compute-sanitizer-like report for memory errors)."""
from __future__ import annotations

import numpy as np

from . import isa as I
from .device import (GLOBAL_BASE, LOCAL_WINDOW, SHARED_WINDOW, SLICE, Device, Kernel, LaunchConfig,
                     LaunchError, LaunchResult)
from .program import resolve_cbanks

SPACE_NAMES = {I.SPACE_GLOBAL: "__global__", I.SPACE_SHARED: "__shared__", I.SPACE_LOCAL: "__local__",
               I.SPACE_GENERIC: "generic"}
MAX_HAZARDS = 4096
MAX_SYSCALLS = 16384     # system-call records per launch (vprintf, __assertfail); more are dropped


def _bank_array(banks: dict) -> np.ndarray:
    nbanks = max(banks) + 1 if banks else 1
    words = max((len(b) + 3) // 4 for b in banks.values()) if banks else 1
    words = max(words, 0x200)
    out = np.zeros((max(nbanks, 4), words), dtype=np.uint32)
    for bank, data in banks.items():
        raw = bytes(data) + bytes((-len(data)) % 4)
        out[bank, :len(raw) // 4] = np.frombuffer(raw, dtype=np.uint32)
    return out


def _views(buf: np.ndarray):
    return buf, buf.view(np.uint16), buf.view(np.uint32)


def run(device: Device, kernel: Kernel, config: LaunchConfig, banks: dict, max_steps: int,
        check_hazards: bool) -> LaunchResult:
    from .engine import run_grid as core_entry
    from .isa import HZ_COLS, NCFG, NUNITS
    run_grid = core_entry()
    program = kernel.program
    rows = resolve_cbanks(program.rows, banks)
    gx, gy, gz = config.grid
    bx, by, bz = config.block
    nthreads = bx * by * bz
    nwarps = (nthreads + 31) // 32
    nregs = program.nregs
    shared_size = kernel.image.shared_size + config.shared
    local_size = kernel.local_bytes()
    memory = device.memory
    heap = memory.heap
    if len(heap) % 16:
        memory._grow(len(heap) + 16 - len(heap) % 16)
        heap = memory.heap
    if len(heap) == 0:
        memory._grow(16)
        heap = memory.heap
    allocs = memory.table()
    cfg = np.zeros(NCFG, dtype=np.int64)
    cfg[0:6] = (gx, gy, gz, bx, by, bz)
    cfg[6:12] = (nthreads, nwarps, nregs, shared_size, local_size, max_steps)
    cfg[12:16] = (GLOBAL_BASE, len(heap), SHARED_WINDOW, LOCAL_WINDOW)
    cfg[16] = 1 if check_hazards else 0
    cfg[17] = SLICE
    cfg[18], cfg[19] = 0, gx * gy * gz
    cfg[20] = len(allocs)
    if len(allocs) == 0:
        allocs = np.zeros((1, 2), dtype=np.int64)
    shared = np.zeros(max(_round16(shared_size), 16), dtype=np.uint8)
    local = np.zeros(max(_round16(local_size * nwarps * 32), 16), dtype=np.uint8)
    nt = nwarps * 32
    regs = np.zeros((nregs + 4, nt), dtype=np.int64)      # register-major; RZ writes land at nregs
    preds = np.zeros((10, nt), dtype=np.uint8)           # P0..P6, PT, the PT sink
    uregs = np.zeros((nwarps, 68), dtype=np.int64)       # UR0..UR62, URZ's sink at 64
    upreds = np.zeros((nwarps, 10), dtype=np.uint8)
    bregs = np.zeros((nwarps, 16), dtype=np.int64)
    pcs = np.zeros(nt, dtype=np.int64)
    status = np.zeros(nt, dtype=np.int64)
    waitv = np.zeros(nt, dtype=np.int64)
    bar_result = np.zeros(4, dtype=np.int64)
    if check_hazards:
        from .hazards import hazard_tables
        hz, hz_lat = hazard_tables(kernel)
        hz_state = np.zeros((10, nwarps, NUNITS), dtype=np.int64)
    else:
        hz = np.zeros((1, HZ_COLS), dtype=np.int64)
        hz_lat = np.zeros((1, 1, 1), dtype=np.int64)
        hz_state = np.zeros((10, 1, 1), dtype=np.int64)
    hz_out = np.zeros((MAX_HAZARDS, 6), dtype=np.int64)
    hz_count = np.zeros(1, dtype=np.int64)
    stats = np.zeros(4, dtype=np.int64)
    err = np.zeros(8, dtype=np.int64)
    syslog = np.zeros((MAX_SYSCALLS + 1, I.SL_COLS), dtype=np.int64)
    run_grid(rows, cfg, _bank_array(banks), *_views(heap), allocs, *_views(shared), *_views(local),
             regs, preds, uregs, upreds, bregs, pcs, status, waitv, bar_result,
             hz, hz_lat, hz_state, hz_out, hz_count, stats, err, syslog)
    result = LaunchResult(int(stats[0]), int(stats[1]), int(stats[2]), 0.0)
    from .printf import system_calls
    result.syscalls, result.syscalls_dropped = system_calls(syslog, config, memory.read_cstring), int(syslog[0, 1])
    # the machine state at the end, for debugging (`--max-steps` N stops after N instructions)
    device.last_state = {"regs": regs, "preds": preds, "uregs": uregs, "upreds": upreds, "pcs": pcs,
                         "status": status, "bregs": bregs, "shared": shared, "local": local, "rows": rows}
    if check_hazards:
        from .hazards import collect
        result.hazards = collect(kernel, hz_out[:min(int(hz_count[0]), MAX_HAZARDS)])
    if err[I.ERR_CODE] != I.E_OK:
        error = LaunchError(report(device, kernel, config, err, max_steps, result.syscalls),
                            _KINDS.get(int(err[0]), "launch"))
        error.result = result             # what the kernel printed before it stopped
        raise error
    return result


_KINDS = {I.E_OOB: "memcheck", I.E_MISALIGNED: "memcheck", I.E_MAX_STEPS: "max-steps",
          I.E_DEADLOCK: "deadlock", I.E_BAD_PC: "bad-pc", I.E_UNSUPPORTED: "unsupported",
          I.E_CBANK: "memcheck", I.E_TRAP: "trap", I.E_WARPSYNC_SELF: "illegal-instruction",
          I.E_ASSERT: "assert", I.E_SYSCALL: "illegal-address"}


def device_syscall_names(device) -> list:
    return sorted(I.SYSCALLS)


def _round16(n: int) -> int:
    return (n + 15) // 16 * 16


def _coords(index: int, dims: tuple) -> tuple:
    x = index % dims[0]
    y = (index // dims[0]) % dims[1]
    z = index // (dims[0] * dims[1])
    return x, y, z


def sass_line(kernel: Kernel, pc: int) -> str:
    from ..sass.printer import format_instr, format_ir
    from ..sass.table import load
    if 0 <= pc < len(kernel.program.instrs):
        addr, instr = kernel.program.instrs[pc]
        try:
            # sm_90's memory operands print their descriptor (`desc[UR4][R2.64]`) as
            # cuobjdump does; the other targets' lines keep the IR's text
            text = format_instr(instr, addr, load(kernel.arch.name)) if kernel.arch.prints_descriptor else format_ir(instr)
        except Exception:  # noqa: BLE001 - a listing line must not hide the report
            try:
                text = format_ir(instr)
            except Exception:  # noqa: BLE001
                text = instr.name
        return f"/*{addr:04x}*/ {text}"
    return f"(pc {pc:#x} is outside the kernel's {len(kernel.program.instrs)} instructions)"


def report(device: Device, kernel: Kernel, config: LaunchConfig, err: np.ndarray, max_steps: int,
           syscalls=()) -> str:
    code = int(err[I.ERR_CODE])
    block = _coords(int(err[I.ERR_BLOCK]), config.grid)
    thread = _coords(int(err[I.ERR_THREAD]), config.block)
    pc = int(err[I.ERR_PC])
    addr = int(err[I.ERR_ADDR]) & 0xFFFFFFFFFFFFFFFF
    size = int(err[I.ERR_SIZE])
    space = int(err[I.ERR_SPACE])
    where = [f"=========     at {kernel.name}+{pc * 16:#x}",
             f"=========     by thread ({thread[0]},{thread[1]},{thread[2]}) in block ({block[0]},{block[1]},{block[2]})",
             f"=========     SASS: {sass_line(kernel, pc)}"]
    if code in (I.E_OOB, I.E_MISALIGNED):
        access = "write" if err[I.ERR_WRITE] else "read"
        what = "Invalid" if code == I.E_OOB else "Misaligned"
        lines = [f"========= {what} {SPACE_NAMES.get(space, '')} {access} of size {size} bytes"] + where
        if code == I.E_MISALIGNED:
            lines.append(f"=========     Address {addr:#x} is misaligned (a {size}-byte access needs {size}-byte alignment)")
        elif space == I.SPACE_GLOBAL:
            lines.append(f"=========     Address {addr:#x} is out of bounds")
            near = device.memory.nearest(addr)
            if near is not None:
                end = near.address + near.size
                if addr >= end:
                    rel = f"{addr - end} bytes after"
                elif addr < near.address:
                    rel = f"{near.address - addr} bytes before"
                else:
                    rel = f"{addr - near.address} bytes inside"
                name = f" ('{near.name}')" if near.name else ""
                lines.append(f"=========     and is {rel} the nearest allocation at {near.address:#x} "
                             f"of size {near.size} bytes{name}")
        else:
            limit = kernel.image.shared_size + config.shared if space == I.SPACE_SHARED else kernel.local_bytes()
            lines.append(f"=========     Address {addr:#x} is out of bounds ({SPACE_NAMES[space]} memory is "
                         f"{limit} bytes)")
        return "\n".join(lines)
    if code == I.E_CBANK:
        return "\n".join([f"========= Invalid constant bank {space} read of size {size} at offset {addr:#x}"] + where)
    if code == I.E_MAX_STEPS:
        return "\n".join([f"========= Kernel '{kernel.name}' did not finish within {max_steps} warp instructions "
                          f"(--max-steps); it may never end"] + where)
    if code == I.E_DEADLOCK:
        return "\n".join([f"========= Deadlock in kernel '{kernel.name}': threads wait at a barrier or "
                          f"BSYNC/WARPSYNC that the others never reach"] + where)
    if code == I.E_BAD_PC:
        return "\n".join([f"========= Kernel '{kernel.name}' jumped outside its code"] + where)
    if code == I.E_UNSUPPORTED:
        why = kernel.program.unsupported.get(pc, "not emulated")
        return "\n".join([f"========= Instruction not supported by the emulator ({why})"] + where)
    if code == I.E_WARPSYNC_SELF:
        return "\n".join([f"========= Illegal instruction in kernel '{kernel.name}': a WARPSYNC whose mask "
                          f"leaves out a thread that executes it (the GPU stops with "
                          f"CUDA_ERROR_ILLEGAL_INSTRUCTION)"] + where)
    if code == I.E_ASSERT:
        from .printf import assertion_messages
        return "\n".join(assertion_messages(syscalls, config) +
                         [f"========= Kernel '{kernel.name}' failed an assertion (the GPU stops the launch: "
                          f"cudaErrorAssert, device-side assert triggered)"] + where)
    if code == I.E_SYSCALL:
        return "\n".join([f"========= Kernel '{kernel.name}' called {addr:#x}, a system call the emulator does not "
                          f"provide ({', '.join(device_syscall_names(device)) or 'none'} are)"] + where)
    if code == I.E_TRAP:
        return "\n".join([f"========= Kernel '{kernel.name}' executed a trap (BPT/KILL)"] + where)
    return f"========= launch stopped (error {code})"
