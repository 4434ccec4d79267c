"""Run a kernel file's `// LAUNCH:` lines and collect every buffer afterwards, on the
emulator or on a real GPU: what `ptxc check` does twice (ptxc's code, nvcc's) and compares.

The binder is one for both machines.  Line by line it finds the kernel the line names,
checks the line's items against the kernel's parameters (their number, and from the
source's declarations which are pointers and which floats), binds buffers by name across
lines (the same name, type, length and initializer is the same buffer, so data flows from
one launch to the next; a name given another type, length or initializer on a later line
is a new buffer, reported as NAME@LINE), packs scalars and launches; then it reads every
buffer back.  What differs between the machines is a Machine: how a kernel is found, how
memory is allocated, filled and read, how a launch runs (launch/emulator.py for
ptxc.emu, ptxc/device for the CUDA driver API).  A bad spec is a SpecError with the
spec's line and column.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, SourceLoc
from .names import resolve_instance_name
from .spec import Buffer, Launch, SpecError, initial_contents, kernel_signatures, scalar_bytes


@dataclass
class SpecRun:
    """Buffers after all launches, by name, with what is needed to compare them."""
    buffers: dict = field(default_factory=dict)      # name -> np.ndarray (final contents)
    initial: dict = field(default_factory=dict)      # name -> np.ndarray (before the first launch)
    ulp: dict = field(default_factory=dict)          # name -> allowed ulps
    specs: dict = field(default_factory=dict)        # name -> Buffer
    scalars: list = field(default_factory=list)      # per launch: {name: bytes}
    results: list = field(default_factory=list)      # per launch: the machine's result (None: not run)
    hazards: list = field(default_factory=list)
    launch_buffers: list = field(default_factory=list)   # per launch: the buffer keys it passes
    kernels: list = field(default_factory=list)      # per launch: the kernel's name on the LAUNCH line
    times_ms: list = field(default_factory=list)     # per launch run: mean milliseconds of one launch


class KernelNotFound(Exception):
    """A machine has no kernel of the name a LAUNCH line gives (the message says why)."""


class Machine:
    """What the binder needs of a machine; see launch/emulator.py and ptxc/device."""

    def kernel(self, name: str):
        """(handle, [(offset, size)] per parameter) of kernel `name`, or KernelNotFound."""
        raise NotImplementedError

    def alloc(self, nbytes: int, key: str) -> int:
        raise NotImplementedError

    def upload(self, address: int, data) -> None:
        raise NotImplementedError

    def download(self, address: int, spec: Buffer):
        raise NotImplementedError

    def launch(self, handle, launch: Launch, params: list, args: list):
        """Run one launch; `args` per parameter: a buffer's address (int) or a scalar's bytes."""
        raise NotImplementedError

    def time(self, handle, launch: Launch, params: list, args: list, repeat: int) -> float | None:
        """Milliseconds of one launch, the mean of `repeat` after a warm-up (None: cannot)."""
        return None

    def close(self) -> None:
        pass


def spec_error(message: str, filename: str, launch: Launch, col: int | None = None,
               source: str | None = None) -> SpecError:
    return SpecError(Diagnostic(message, SourceLoc(filename, launch.line, col or launch.col)), source)


def bind_and_run(machine: Machine, launches: list[Launch], source: str, filename: str,
                 only: set | None = None, repeat: int = 0) -> SpecRun:
    """Run `launches` (from parse_file) on `machine`; with `only`, run only the launches
    of those indices (the others still bind their buffers).  With `repeat`, each launch
    run is then timed (after all ran once and the buffers were read, so results are
    final).  Bad specs raise SpecError; failed launches the machine's own error."""
    signatures = kernel_signatures(source, filename)
    run = SpecRun()
    addresses = {}
    bound = {}                      # buffer name -> key of the buffer it names now
    calls = []
    try:
        for index, launch in enumerate(launches):
            run.launch_buffers.append([])
            try:
                kernel, params = machine.kernel(resolve_instance_name(launch.kernel, source))
            except KernelNotFound as err:
                if only is None or index in only:
                    raise spec_error(str(err), filename, launch, source=source) from None
                kernel = None       # not run, so its kernel may be missing; its buffers still bind
                params = [(0, 8 if isinstance(i, Buffer) else 0) for i in launch.items]
            if len(launch.items) != len(params):
                raise spec_error(f"kernel '{launch.kernel}' takes {len(params)} argument(s); "
                                 f"this line gives {len(launch.items)}", filename, launch, source=source)
            sig = signatures.get(launch.kernel)
            args, scalars = [], {}
            for position, (item, (_off, size)) in enumerate(zip(launch.items, params)):
                kind = sig.params[position][1] if sig and position < len(sig.params) else None
                if isinstance(item, Buffer):
                    if size != 8 or kind not in (None, "pointer"):
                        raise spec_error(f"'{item.name}' is a buffer but parameter {position + 1} of "
                                         f"'{launch.kernel}' is not a pointer", filename, launch, item.col, source)
                    key = bound.get(item.name)
                    old = run.specs.get(key)
                    if old is None or (old.type, old.count, old.init, old.args) != \
                            (item.type, item.count, item.init, item.args):
                        key = item.name if key is None else f"{item.name}@{launch.line}"
                        data = initial_contents(item, launch.seed)
                        addresses[key] = machine.alloc(item.nbytes, key)
                        machine.upload(addresses[key], data)
                        run.specs[key], run.initial[key], bound[item.name] = item, data, key
                    run.ulp[key] = max(run.ulp.get(key, 0), launch.ulp)
                    run.launch_buffers[index].append(key)
                    args.append(addresses[key])
                elif kernel is None:
                    continue
                else:
                    if kind == "pointer":
                        raise spec_error(f"parameter {position + 1} of '{launch.kernel}' is a pointer: "
                                         f"give a buffer (NAME=TYPE[COUNT]:INIT), not '{item.text}'",
                                         filename, launch, item.col, source)
                    try:
                        value = scalar_bytes(item.text, size, None if kind is None else kind == "float")
                    except (ValueError, OverflowError) as err:
                        raise spec_error(str(err), filename, launch, item.col, source) from None
                    scalars[item.name] = value
                    args.append(value)
            run.scalars.append(scalars)
            run.kernels.append(launch.kernel)
            if only is not None and index not in only:
                run.results.append(None)
                continue
            result = machine.launch(kernel, launch, params, args)
            run.results.append(result)
            run.hazards += getattr(result, "hazards", None) or []
            calls.append((kernel, launch, params, args))
        for key, spec in run.specs.items():
            run.buffers[key] = machine.download(addresses[key], spec)
        for kernel, launch, params, args in calls:
            run.times_ms.append(machine.time(kernel, launch, params, args, repeat) if repeat else None)
    finally:
        machine.close()
    return run
