"""Run a kernel file's `// LAUNCH:` lines on a cubin and collect every buffer afterwards:
what `ptxc check` does twice (ptxc's cubin, nvcc's cubin) and compares."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..diagnostics import Diagnostic, SourceLoc
from .device import DEFAULT_MAX_STEPS, Device, LaunchError
from .names import resolve_instance_name
from .launch_spec import Buffer, Launch, SpecError, initial_contents, kernel_signatures, scalar_bytes


@dataclass
class SpecRun:
    """Buffers after all launches, by name, with what is needed to compare them."""
    buffers: dict = field(default_factory=dict)      # name -> np.ndarray (final contents)
    initial: dict = field(default_factory=dict)      # name -> np.ndarray (before the first launch)
    ulp: dict = field(default_factory=dict)          # name -> allowed ulps
    specs: dict = field(default_factory=dict)        # name -> Buffer
    scalars: list = field(default_factory=list)      # per launch: {name: bytes}
    results: list = field(default_factory=list)      # per launch: LaunchResult
    hazards: list = field(default_factory=list)
    launch_buffers: list = field(default_factory=list)   # per launch: the buffer keys it passes


def spec_error(message: str, filename: str, launch: Launch, col: int | None = None,
               source: str | None = None) -> SpecError:
    return SpecError(Diagnostic(message, SourceLoc(filename, launch.line, col or launch.col)), source)


def run_launches(cubin: bytes, launches: list[Launch], source: str, filename: str,
                 cubin_name: str = "x.cubin", max_steps: int = DEFAULT_MAX_STEPS,
                 check_hazards: bool = False, device: Device | None = None,
                 only: set | None = None) -> SpecRun:
    """Run `launches` (from parse_file) on `cubin`.  Bad specs raise SpecError (with the
    spec's line and column); failed launches raise LaunchError."""
    device = device or Device()
    module = device.load(cubin, cubin_name)
    signatures = kernel_signatures(source, filename)
    run = SpecRun()
    addresses = {}
    bound = {}                      # buffer name -> key of the buffer it names now
    for index, launch in enumerate(launches):
        run.launch_buffers.append([])
        try:
            kernel = module.kernel(resolve_instance_name(launch.kernel, source))
        except LaunchError as err:
            if only is None or index in only:
                raise spec_error(str(err), filename, launch, source=source) from None
            kernel = None           # not run, so its kernel may be missing; its buffers still bind
        params = kernel.params if kernel is not None else [(0, 8 if isinstance(i, Buffer) else 0)
                                                           for i in launch.items]
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
                # the same name, type, length and initializer is the same buffer (data flows
                # from one launch to the next); a name given another type, length or
                # initializer on a later line is a new buffer, reported as NAME@LINE
                key = bound.get(item.name)
                old = run.specs.get(key)
                if old is None or (old.type, old.count, old.init, old.args) != \
                        (item.type, item.count, item.init, item.args):
                    key = item.name if key is None else f"{item.name}@{launch.line}"
                    data = initial_contents(item, launch.seed)
                    address = device.malloc(item.nbytes, key)
                    device.memory.write(address, data)
                    addresses[key] = address
                    run.specs[key] = item
                    run.initial[key] = data
                    bound[item.name] = key
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
        if only is not None and index not in only:
            run.results.append(None)
            continue
        result = device.launch(kernel, launch.grid, launch.block, args, launch.shared,
                               max_steps=max_steps, check_hazards=check_hazards)
        run.results.append(result)
        run.hazards += result.hazards
    for name, spec in run.specs.items():
        run.buffers[name] = device.memory.view(addresses[name], spec.dtype, spec.count).copy()
    return run


def ordered_bits(x: np.ndarray) -> np.ndarray:
    """Float bit patterns as unsigned integers in the order of the values they stand for
    (+0 and -0 the same), so that the distance between two is their ulp distance."""
    width = x.dtype.itemsize * 8
    utype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    u = x.view(utype).astype(np.uint64)
    top = np.uint64(1 << (width - 1))
    magnitude = u & (top - np.uint64(1))
    return np.where(u & top, top - magnitude, top + magnitude)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in units in the last place, exactly (unsigned integer arithmetic: float64
    would round a distance between 64-bit patterns to a multiple of 2^11)."""
    oa, ob = ordered_bits(a), ordered_bits(b)
    return np.where(oa >= ob, oa - ob, ob - oa)


def differences(name: str, a: np.ndarray, b: np.ndarray, ulp=0) -> list:
    """[(index, a value, b value)] where the buffers differ beyond `ulp` (a number, or one
    per element)."""
    if a.dtype.kind == "f":
        allowed = np.asarray(ulp).astype(np.uint64)
        both_nan = np.isnan(a) & np.isnan(b)
        bad = (ulp_distance(a, b) > allowed) & ~both_nan
    else:
        bad = a != b
    return [(int(i), a[i], b[i]) for i in np.nonzero(bad)[0]]
