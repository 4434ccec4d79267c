""".nv.info records: the attributes the CUDA driver reads to launch a kernel.

A section is a plain sequence of records, each
    u8 format, u8 attribute, u16 value-or-size, [payload of `size` bytes if SVAL]
with no padding between records.  NVAL/BVAL/HVAL records carry their value in the
16-bit field; SVAL records carry a payload whose layout depends on the attribute
(PAYLOADS below).  Codes and names are as cuobjdump 13.5 prints them; the table is
checked against cuobjdump by tests/test_cubin.py::test_attribute_names_match_cuobjdump.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

# Record formats (cuobjdump's "Format:" line).
EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4
FORMAT_NAMES = {EIFMT_NVAL: "EIFMT_NVAL", EIFMT_BVAL: "EIFMT_BVAL",
                EIFMT_HVAL: "EIFMT_HVAL", EIFMT_SVAL: "EIFMT_SVAL"}

# Attribute codes and the names cuobjdump 13.5 prints for them, probed by writing one
# record per code 0..255 (tests/test_cubin.py repeats the probe).  Codes it has no
# name for (0x2a, 0x30, 0x35, 0x47, 0x56, 0x5a, 0x5f, 0x60, 0x63, 0x67, >0x6d) are absent.
ATTRIBUTES = {
    0x00: "EIATTR_ERROR",
    0x01: "EIATTR_PAD",
    0x02: "EIATTR_IMAGE_SLOT",
    0x03: "EIATTR_JUMPTABLE_RELOCS",
    0x04: "EIATTR_CTAIDZ_USED",
    0x05: "EIATTR_MAX_THREADS",
    0x06: "EIATTR_IMAGE_OFFSET",
    0x07: "EIATTR_IMAGE_SIZE",
    0x08: "EIATTR_TEXTURE_NORMALIZED",
    0x09: "EIATTR_SAMPLER_INIT",
    0x0A: "EIATTR_PARAM_CBANK",
    0x0B: "EIATTR_SMEM_PARAM_OFFSETS",
    0x0C: "EIATTR_CBANK_PARAM_OFFSETS",
    0x0D: "EIATTR_SYNC_STACK",
    0x0E: "EIATTR_TEXID_SAMPID_MAP",
    0x0F: "EIATTR_EXTERNS",
    0x10: "EIATTR_REQNTID",
    0x11: "EIATTR_FRAME_SIZE",
    0x12: "EIATTR_MIN_STACK_SIZE",
    0x13: "EIATTR_SAMPLER_FORCE_UNNORMALIZED",
    0x14: "EIATTR_BINDLESS_IMAGE_OFFSETS",
    0x15: "EIATTR_BINDLESS_TEXTURE_BANK",
    0x16: "EIATTR_BINDLESS_SURFACE_BANK",
    0x17: "EIATTR_KPARAM_INFO",
    0x18: "EIATTR_SMEM_PARAM_SIZE",
    0x19: "EIATTR_CBANK_PARAM_SIZE",
    0x1A: "EIATTR_QUERY_NUMATTRIB",
    0x1B: "EIATTR_MAXREG_COUNT",
    0x1C: "EIATTR_EXIT_INSTR_OFFSETS",
    0x1D: "EIATTR_S2RCTAID_INSTR_OFFSETS",
    0x1E: "EIATTR_CRS_STACK_SIZE",
    0x1F: "EIATTR_NEED_CNP_WRAPPER",
    0x20: "EIATTR_NEED_CNP_PATCH",
    0x21: "EIATTR_EXPLICIT_CACHING",
    0x22: "EIATTR_ISTYPEP_USED",
    0x23: "EIATTR_MAX_STACK_SIZE",
    0x24: "EIATTR_SUQ_USED",
    0x25: "EIATTR_LD_CACHEMOD_INSTR_OFFSETS",
    0x26: "EIATTR_LOAD_CACHE_REQUEST",
    0x27: "EIATTR_ATOM_SYS_INSTR_OFFSETS",
    0x28: "EIATTR_COOP_GROUP_INSTR_OFFSETS",
    0x29: "EIATTR_COOP_GROUP_MASK_REGIDS",
    0x2B: "EIATTR_WMMA_USED",
    0x2C: "EIATTR_HAS_PRE_V10_OBJECT",
    0x2D: "EIATTR_ATOMF16_EMUL_INSTR_OFFSETS",
    0x2E: "EIATTR_ATOM16_EMUL_INSTR_REG_MAP",
    0x2F: "EIATTR_REGCOUNT",
    0x31: "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS",
    0x32: "EIATTR_SHARED_SCRATCH",
    0x33: "EIATTR_STATISTICS",
    0x34: "EIATTR_INDIRECT_BRANCH_TARGETS",
    0x36: "EIATTR_SW_WAR",
    0x37: "EIATTR_CUDA_API_VERSION",
    0x38: "EIATTR_NUM_MBARRIERS",
    0x39: "EIATTR_MBARRIER_INSTR_OFFSETS",
    0x3A: "EIATTR_COROUTINE_RESUME_ID_OFFSETS",
    0x3B: "EIATTR_SAM_REGION_STACK_SIZE",
    0x3C: "EIATTR_PER_REG_TARGET_PERF_STATS",
    0x3D: "EIATTR_CTA_PER_CLUSTER",
    0x3E: "EIATTR_EXPLICIT_CLUSTER",
    0x3F: "EIATTR_MAX_CLUSTER_RANK",
    0x40: "EIATTR_INSTR_REG_MAP",
    0x41: "EIATTR_RESERVED_SMEM_USED",
    0x42: "EIATTR_RESERVED_SMEM_0_SIZE",
    0x43: "EIATTR_UCODE_SECTION_DATA",
    0x44: "EIATTR_UNUSED_LOAD_BYTE_OFFSET",
    0x45: "EIATTR_KPARAM_INFO_V2",
    0x46: "EIATTR_SYSCALL_OFFSETS",
    0x48: "EIATTR_GRAPHICS_GLOBAL_CBANK",
    0x49: "EIATTR_SHADER_TYPE",
    0x4A: "EIATTR_VRC_CTA_INIT_COUNT",
    0x4B: "EIATTR_TOOLS_PATCH_FUNC",
    0x4C: "EIATTR_NUM_BARRIERS",
    0x4D: "EIATTR_TEXMODE_INDEPENDENT",
    0x4E: "EIATTR_PERF_STATISTICS",
    0x4F: "EIATTR_AT_ENTRY_FRAGMENTS",
    0x50: "EIATTR_SPARSE_MMA_MASK",
    0x51: "EIATTR_TCGEN05_1CTA_USED",
    0x52: "EIATTR_TCGEN05_2CTA_USED",
    0x53: "EIATTR_GEN_ERRBAR_AT_EXIT",
    0x54: "EIATTR_REG_RECONFIG",
    0x55: "EIATTR_ANNOTATIONS",
    0x57: "EIATTR_STACK_CANARY_TRAP_OFFSETS",
    0x58: "EIATTR_STUB_FUNCTION_KIND",
    0x59: "EIATTR_LOCAL_CTA_ASYNC_STORE_OFFSETS",
    0x5B: "EIATTR_BLOCKS_ARE_CLUSTERS",
    0x5C: "EIATTR_SANITIZE",
    0x5D: "EIATTR_SYSCALLS_FALLBACK",
    0x5E: "EIATTR_CUDA_REQ",
    0x61: "EIATTR_RTCORE_ENTRY",
    0x62: "EIATTR_CLUSTER_LAUNCH_CONTROL_USED",
    0x64: "EIATTR_MIN_PER_CTA_MEMORY_SIZE",
    0x65: "EIATTR_IGNOREOOB_CP_ASYNC_BULK_INSTR_OFFSETS",
    0x66: "EIATTR_LANGUAGE",
    0x68: "EIATTR_GRID_ATTRIBUTES",
    0x69: "EIATTR_STACK_OFFSET",
    0x6A: "EIATTR_RT_LIVESTATE_SASS_MAP",
    0x6B: "EIATTR_NVSAL_SW_WAR",
    0x6C: "EIATTR_INSTR_OFFSETS",
    0x6D: "EIATTR_PREEXIT_USED",
}
CODES = {name: code for code, name in ATTRIBUTES.items()}

# ptxas 13.5 writes this attribute (HVAL) into every kernel's .nv.info.<kernel>, just
# before EXIT_INSTR_OFFSETS; cuobjdump 13.5 has no name for it ("unknown Attribute").
# Value 0 on sm_89, 0x101 on sm_90.
EIATTR_UNNAMED_5F = 0x5F

LANGUAGE_PTX = 3  # EIATTR_LANGUAGE payload that cuobjdump prints as "PTX"


# .nv.compat (sm_90): the records nvcc's sm_90 cubins carry, which cuobjdump and nvdisasm
# require before they read an sm_90 file.  Names as cuobjdump prints them; 0x0d has none.
COMPAT_ATTRIBUTES = {
    0x02: "EICOMPAT_ATTR_ISA_CLASS",
    0x03: "EICOMPAT_ATTR_INST_TENSORMAP_V1",
    0x09: "EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET",
    0x0B: "EICOMPAT_ATTR_CAN_FASTPATH_FINALIZE",
    0x0C: "EICOMPAT_ATTR_CUDA_INTERNAL_TARGET",
    0x0E: "EICOMPAT_ATTR_FINALIZER_VERSION",
}


def name_of(attr: int) -> str:
    return ATTRIBUTES.get(attr, "unknown Attribute")


@dataclass(frozen=True)
class Record:
    """One .nv.info record.  `value` is an int for NVAL/BVAL/HVAL records and the raw
    payload (bytes) for SVAL records."""
    fmt: int
    attr: int
    value: int | bytes

    @property
    def name(self) -> str:
        return name_of(self.attr)

    def encode(self) -> bytes:
        if self.fmt == EIFMT_SVAL:
            return struct.pack("<BBH", self.fmt, self.attr, len(self.value)) + self.value
        return struct.pack("<BBH", self.fmt, self.attr, self.value)


def encode_records(records: list[Record]) -> bytes:
    return b"".join(r.encode() for r in records)


def decode_records(data: bytes) -> list[Record]:
    """Split a .nv.info section into records; ValueError if one runs past the end."""
    records, pos = [], 0
    while pos < len(data):
        if pos + 4 > len(data):
            raise ValueError(f"truncated .nv.info record header at offset {pos:#x}")
        fmt, attr, value = struct.unpack_from("<BBH", data, pos)
        pos += 4
        if fmt == EIFMT_SVAL:
            if pos + value > len(data):
                raise ValueError(f"{name_of(attr)} record at {pos - 4:#x} runs past the end")
            records.append(Record(fmt, attr, bytes(data[pos:pos + value])))
            pos += value
        elif fmt in FORMAT_NAMES:
            records.append(Record(fmt, attr, value))
        else:
            raise ValueError(f"unknown .nv.info record format {fmt} at offset {pos - 4:#x}")
    return records


# ---- builders for the records ptxc writes, one per attribute ----------------------

def sm90_compat_records() -> list[Record]:
    """nvcc 13.5's .nv.compat for sm_90, record for record."""
    return [Record(EIFMT_BVAL, 0x09, 0), Record(EIFMT_BVAL, 0x0C, 0),
            Record(EIFMT_BVAL, 0x02, 1), Record(EIFMT_HVAL, 0x0D, 0x101),
            Record(EIFMT_BVAL, 0x03, 0), Record(EIFMT_SVAL, 0x0B, bytes(8)),
            Record(EIFMT_HVAL, 0x0E, 0x440)]  # cuobjdump prints 0x440 as "1.1.0"


def hval(attr: int, value: int) -> Record:
    return Record(EIFMT_HVAL, attr, value)


def bval(attr: int, value: int) -> Record:
    return Record(EIFMT_BVAL, attr, value)


def words(attr: int, *values: int) -> Record:
    """An SVAL record whose payload is a list of u32 (API version, exit offsets, ...)."""
    return Record(EIFMT_SVAL, attr, struct.pack(f"<{len(values)}I", *values))


def per_function(attr: int, symbol: int, value: int) -> Record:
    """REGCOUNT / FRAME_SIZE / MIN_STACK_SIZE in the global .nv.info: (symbol, value)."""
    return words(attr, symbol, value)


def param_cbank(section_symbol: int, offset: int, size: int) -> Record:
    """Where the parameters live: the .nv.constant0 section's symbol, u16 offset, u16 size."""
    return Record(EIFMT_SVAL, CODES["EIATTR_PARAM_CBANK"],
                  struct.pack("<IHH", section_symbol, offset, size))


# KPARAM_INFO's last word, as cuobjdump labels its fields: bits 0-7 "Pointee's
# logAlignment", 8-11 "Space", 12-16 "cbank" (0x1f: none), 17 "Parameter Space"
# (0: CBANK), 18-31 the parameter's size in bytes.
KPARAM_NO_CBANK = 0x1F << 12
KPARAM_SIZE_SHIFT = 18


def kparam_info(ordinal: int, offset: int, size: int, index: int = 0) -> Record:
    flags = KPARAM_NO_CBANK | (size << KPARAM_SIZE_SHIFT)
    return Record(EIFMT_SVAL, CODES["EIATTR_KPARAM_INFO"],
                  struct.pack("<IHHI", index, ordinal, offset, flags))


def unpack_kparam_info(payload: bytes) -> tuple[int, int, int]:
    """(ordinal, offset, size) of a KPARAM_INFO payload."""
    _index, ordinal, offset, flags = struct.unpack("<IHHI", payload)
    return ordinal, offset, flags >> KPARAM_SIZE_SHIFT


def unpack_words(payload: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(payload) // 4}I", payload[:len(payload) // 4 * 4]))
