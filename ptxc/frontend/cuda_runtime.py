"""The CUDA runtime API and the C library as host code sees them: the types, functions
and constants that cuda_runtime.h (which nvcc always includes), stdio.h and stdlib.h
declare, for sema to know and ptxc/host to implement.

The numbers and strings (enum values, flag macros, cudaDeviceProp's fields) are NVIDIA's,
learned by scripts/learn_cuda_runtime.py into cuda_runtime_data.py; this module turns
them into ptxc's types.  Default arguments (`cudaEventRecord(e, stream = 0)`) are one
overload per arity.  sema imports the tables while it builds its builtins, so the
functions below import sema lazily (its types exist by then).
"""
from __future__ import annotations

from . import cuda_runtime_data as D

# Type names the parser must know before sema runs.
TYPE_NAMES = frozenset({"cudaDeviceProp", "cudaDeviceAttr", "cudaUUID_t", "FILE", "clock_t", "time_t",
                        "cudaStream_t", "cudaEvent_t", "cudaError_t", "cudaMemcpyKind"})

# The C library's streams as constants of type FILE* (their file descriptors): host code
# only passes them to fprintf, fputs and fflush.
STREAMS = {"stdout": 1, "stderr": 2}
CLOCKS_PER_SEC = 1_000_000          # POSIX's value (clock() is in microseconds)


def typedefs() -> dict:
    from . import sema as S
    c_types = {"char": S.CHAR, "int": S.INT, "unsigned int": S.UINT, "size_t": S.SIZE_T}
    uuid = S.make_struct("CUuuid_st", [(n, S.ArrayType(c_types[t], k) if k else c_types[t])
                                       for n, t, k in D.CUDA_UUID_FIELDS])
    c_types["cudaUUID_t"] = uuid
    prop = S.make_struct("cudaDeviceProp", [(n, S.ArrayType(c_types[t], k) if k else c_types[t])
                                            for n, t, k in D.DEVICE_PROP_FIELDS])
    return {"cudaDeviceProp": prop, "cudaUUID_t": uuid, "cudaDeviceAttr": S.EnumType("cudaDeviceAttr"),
            "FILE": S.make_struct("_IO_FILE", []), "clock_t": S.LONG, "time_t": S.LONG}


def constants() -> dict:
    """name -> (value, type): the enums' values, the flag macros, stdout/stderr."""
    from . import sema as S
    table = {}
    table.update({k: (v, S.CUDA_ERROR) for k, v in D.CUDAERROR.items()})
    table.update({k: (v, S.CUDA_MEMCPY_KIND) for k, v in D.CUDAMEMCPYKIND.items()})
    attr = S.BUILTIN_TYPEDEFS["cudaDeviceAttr"]
    table.update({k: (v, attr) for k, v in D.CUDADEVICEATTR.items()})
    table.update({k: (v, S.UINT) for k, v in D.FLAGS.items()})
    file_p = S.PointerType(S.BUILTIN_TYPEDEFS["FILE"])
    table.update({k: (v, file_p) for k, v in STREAMS.items()})
    table["CLOCKS_PER_SEC"] = (CLOCKS_PER_SEC, S.LONG)
    return table


def functions() -> list:
    """FunctionSymbols of the runtime API and C library beyond sema's own list."""
    from . import sema as S
    fn = S._fn
    err, kind, size, uint, vp, cvp, pc = S.CUDA_ERROR, S.CUDA_MEMCPY_KIND, S.SIZE_T, S.UINT, S._VP, S._CVP, S._PC
    stream, event = S.OPAQUE_STREAM, S.OPAQUE_EVENT
    any2 = S.AnyPointerType(2)
    sym = S.AnySymbolType()
    int_p, size_p = S.PointerType(S.INT), S.PointerType(S.SIZE_T)
    file_p = S.PointerType(S.BUILTIN_TYPEDEFS["FILE"])
    prop_p = S.PointerType(S.BUILTIN_TYPEDEFS["cudaDeviceProp"])
    char_pp = S.PointerType(S.PointerType(S.CHAR))
    out = [
        fn("cudaGetErrorName", pc, [err]),
        # events
        fn("cudaEventCreateWithFlags", err, [S.PointerType(event), uint]),
        fn("cudaEventRecord", err, [event, stream]),
        fn("cudaEventQuery", err, [event]),
        # streams
        fn("cudaStreamCreate", err, [S.PointerType(stream)]),
        fn("cudaStreamCreateWithFlags", err, [S.PointerType(stream), uint]),
        fn("cudaStreamSynchronize", err, [stream]), fn("cudaStreamDestroy", err, [stream]),
        fn("cudaStreamQuery", err, [stream]),
        fn("cudaStreamWaitEvent", err, [stream, event]), fn("cudaStreamWaitEvent", err, [stream, event, uint]),
        fn("cudaMemcpyAsync", err, [vp, cvp, size, kind]), fn("cudaMemcpyAsync", err, [vp, cvp, size, kind, stream]),
        fn("cudaMemsetAsync", err, [vp, S.INT, size]), fn("cudaMemsetAsync", err, [vp, S.INT, size, stream]),
        # host and managed memory
        fn("cudaMallocHost", err, [any2, size]), fn("cudaHostAlloc", err, [any2, size, uint]),
        fn("cudaFreeHost", err, [vp]), fn("cudaMallocManaged", err, [any2, size, uint]),
        fn("cudaMemGetInfo", err, [size_p, size_p]),
        # __device__ and __constant__ variables (`const T& symbol`)
        fn("cudaMemcpyToSymbol", err, [sym, cvp, size]), fn("cudaMemcpyToSymbol", err, [sym, cvp, size, size]),
        fn("cudaMemcpyToSymbol", err, [sym, cvp, size, size, kind]),
        fn("cudaMemcpyFromSymbol", err, [vp, sym, size]), fn("cudaMemcpyFromSymbol", err, [vp, sym, size, size]),
        fn("cudaMemcpyFromSymbol", err, [vp, sym, size, size, kind]),
        fn("cudaGetSymbolAddress", err, [any2, sym]), fn("cudaGetSymbolSize", err, [size_p, sym]),
        # the device
        fn("cudaGetDeviceProperties", err, [prop_p, S.INT]), fn("cudaGetDeviceCount", err, [int_p]),
        fn("cudaGetDevice", err, [int_p]), fn("cudaDeviceGetAttribute", err, [int_p, S.BUILTIN_TYPEDEFS["cudaDeviceAttr"], S.INT]),
        fn("cudaRuntimeGetVersion", err, [int_p]), fn("cudaDriverGetVersion", err, [int_p]),
        # the C library
        fn("fprintf", S.INT, [file_p, pc], variadic=True), fn("fputs", S.INT, [pc, file_p]),
        fn("fflush", S.INT, [file_p]), fn("puts", S.INT, [pc]), fn("putchar", S.INT, [S.INT]),
        fn("strtol", S.LONG, [pc, char_pp, S.INT]), fn("strtoul", S.ULONG, [pc, char_pp, S.INT]),
        fn("strtoll", S.LLONG, [pc, char_pp, S.INT]), fn("strtoull", S.ULLONG, [pc, char_pp, S.INT]),
        fn("strtod", S.DOUBLE, [pc, char_pp]), fn("strtof", S.FLOAT, [pc, char_pp]),
        fn("atol", S.LONG, [pc]), fn("atoll", S.LLONG, [pc]),
        fn("strlen", size, [pc]), fn("strcmp", S.INT, [pc, pc]), fn("strncmp", S.INT, [pc, pc, size]),
        fn("abort", S.VOID, []), fn("clock", S.LONG, []), fn("time", S.LONG, [S.PointerType(S.LONG)]),
    ]
    return out
