"""The emulated GPU as cudaGetDeviceProperties and cudaDeviceGetAttribute describe it.

The values are the target's record (ptxc.sass.target), one per architecture the
emulator runs.  Two kinds of value:

- Facts of the compute capability (the CUDA C++ Programming Guide's table of technical
  specifications per compute capability; the emulator enforces the same record's
  limits): warp size, threads and dimensions of a block and a grid, shared memory per block (48 KiB by default, the opt-in maximum),
  per SM (8.0: 164 KiB, 8.6 and 8.9: 100 KiB, 9.0: 228 KiB), registers, resident threads
  (8.0: 2048, 8.6 and 8.9: 1536, 9.0: 2048) and blocks (8.0: 32, 8.6: 16, 8.9: 24, 9.0: 32)
  per SM, 64 KiB of constant memory.
  tests/test_host_runtime.py's device test compares them with the H200's own
  (cudaGetDeviceProperties through NVIDIA's libcudart) for sm_90.
- Facts of a product (SM count, memory size, L2 size, bus width): the emulator is not a
  product, so these are modelled on a part of each architecture (sm_80: A100 40GB; sm_86:
  an 82-SM GA102 part with 24 GiB; sm_89: a 128-SM Ada part with 24 GiB; sm_90: a 132-SM
  Hopper part with 141 GiB) and the name says it is ptxc's emulator.  Programs use them to size grids; no result may depend on them.
"""
from __future__ import annotations

from ..sass.target import KIB, target


def properties(arch: str) -> dict:
    """cudaDeviceProp's fields (those not named are 0) for the emulated `arch`."""
    from ..emu.device import MAX_BLOCK_THREADS
    record = target(arch)
    product = record.product
    major, minor = record.compute_capability
    return {
        "name": f"ptxc emulator ({arch})",
        "totalGlobalMem": product.global_memory, "sharedMemPerBlock": 48 * KIB, "regsPerBlock": 65536,
        "warpSize": 32, "memPitch": 2 ** 31 - 1, "maxThreadsPerBlock": MAX_BLOCK_THREADS,
        "maxThreadsDim": (1024, 1024, 64), "maxGridSize": (2 ** 31 - 1, 65535, 65535),
        "totalConstMem": 64 * KIB, "major": major, "minor": minor, "textureAlignment": 512,
        "texturePitchAlignment": 32, "multiProcessorCount": product.multiprocessors, "canMapHostMemory": 1,
        "concurrentKernels": 1, "asyncEngineCount": 2, "unifiedAddressing": 1,
        "memoryBusWidth": product.bus_width, "l2CacheSize": product.l2_cache,
        "maxThreadsPerMultiProcessor": record.threads_per_sm, "streamPrioritiesSupported": 1,
        "globalL1CacheSupported": 1, "localL1CacheSupported": 1,
        "sharedMemPerMultiprocessor": record.shared_per_sm, "regsPerMultiprocessor": 65536,
        "managedMemory": 1, "concurrentManagedAccess": 1, "computePreemptionSupported": 1,
        "cooperativeLaunch": 1, "sharedMemPerBlockOptin": record.max_shared_per_block,
        "maxBlocksPerMultiProcessor": record.blocks_per_sm, "reservedSharedMemPerBlock": record.reserved_shared,
        "clusterLaunch": 1 if major >= 9 else 0, "hostNumaId": -1, "deviceNumaId": -1,
    }


# cudaDeviceAttr (by its name in the runtime's enum) -> (field of cudaDeviceProp, index)
ATTRIBUTES = {
    "cudaDevAttrMaxThreadsPerBlock": ("maxThreadsPerBlock", None),
    "cudaDevAttrMaxBlockDimX": ("maxThreadsDim", 0), "cudaDevAttrMaxBlockDimY": ("maxThreadsDim", 1),
    "cudaDevAttrMaxBlockDimZ": ("maxThreadsDim", 2),
    "cudaDevAttrMaxGridDimX": ("maxGridSize", 0), "cudaDevAttrMaxGridDimY": ("maxGridSize", 1),
    "cudaDevAttrMaxGridDimZ": ("maxGridSize", 2),
    "cudaDevAttrMaxSharedMemoryPerBlock": ("sharedMemPerBlock", None),
    "cudaDevAttrTotalConstantMemory": ("totalConstMem", None), "cudaDevAttrWarpSize": ("warpSize", None),
    "cudaDevAttrMaxPitch": ("memPitch", None), "cudaDevAttrMaxRegistersPerBlock": ("regsPerBlock", None),
    "cudaDevAttrTextureAlignment": ("textureAlignment", None),
    "cudaDevAttrMultiProcessorCount": ("multiProcessorCount", None),
    "cudaDevAttrIntegrated": ("integrated", None), "cudaDevAttrCanMapHostMemory": ("canMapHostMemory", None),
    "cudaDevAttrConcurrentKernels": ("concurrentKernels", None), "cudaDevAttrEccEnabled": ("ECCEnabled", None),
    "cudaDevAttrAsyncEngineCount": ("asyncEngineCount", None),
    "cudaDevAttrUnifiedAddressing": ("unifiedAddressing", None),
    "cudaDevAttrGlobalMemoryBusWidth": ("memoryBusWidth", None), "cudaDevAttrL2CacheSize": ("l2CacheSize", None),
    "cudaDevAttrMaxThreadsPerMultiProcessor": ("maxThreadsPerMultiProcessor", None),
    "cudaDevAttrComputeCapabilityMajor": ("major", None), "cudaDevAttrComputeCapabilityMinor": ("minor", None),
    "cudaDevAttrStreamPrioritiesSupported": ("streamPrioritiesSupported", None),
    "cudaDevAttrGlobalL1CacheSupported": ("globalL1CacheSupported", None),
    "cudaDevAttrLocalL1CacheSupported": ("localL1CacheSupported", None),
    "cudaDevAttrMaxSharedMemoryPerMultiprocessor": ("sharedMemPerMultiprocessor", None),
    "cudaDevAttrMaxRegistersPerMultiprocessor": ("regsPerMultiprocessor", None),
    "cudaDevAttrManagedMemory": ("managedMemory", None),
    "cudaDevAttrConcurrentManagedAccess": ("concurrentManagedAccess", None),
    "cudaDevAttrComputePreemptionSupported": ("computePreemptionSupported", None),
    "cudaDevAttrCooperativeLaunch": ("cooperativeLaunch", None),
    "cudaDevAttrMaxSharedMemoryPerBlockOptin": ("sharedMemPerBlockOptin", None),
    "cudaDevAttrMaxBlocksPerMultiprocessor": ("maxBlocksPerMultiProcessor", None),
    "cudaDevAttrReservedSharedMemoryPerBlock": ("reservedSharedMemPerBlock", None),
    "cudaDevAttrClusterLaunch": ("clusterLaunch", None),
}


def attribute(arch: str, name: str) -> int | None:
    """cudaDeviceGetAttribute's value of the attribute `name`, None if ptxc lacks it."""
    entry = ATTRIBUTES.get(name)
    if entry is None:
        return None
    field, index = entry
    value = properties(arch).get(field, 0)
    return value[index] if index is not None else value
