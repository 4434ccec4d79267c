"""Host memory for the interpreted program: the heap (malloc), the stack (locals whose
address is taken, arrays) and static data (string literals, globals), each a byte
array at its own address range, so that pointers are plain 64-bit addresses as in C;
and mapped ranges at addresses the device chose (the host's copy of managed memory)."""
from __future__ import annotations

import struct

import numpy as np

STATIC_BASE = 0x5555_5555_0000
HEAP_BASE = 0x5600_0000_0000
STACK_BASE = 0x7FFC_0000_0000
REGION_SPAN = 1 << 40
ALIGN = 16


class HostMemoryError(Exception):
    pass


class Region:
    def __init__(self, name: str, base: int):
        self.name = name
        self.base = base
        self.buf = np.zeros(1 << 16, dtype=np.uint8)
        self.top = 0
        self.blocks: dict[int, int] = {}          # heap: address -> size of live allocations

    def reserve(self, size: int, align: int = ALIGN) -> int:
        offset = (self.top + align - 1) // align * align
        end = offset + max(size, 1)
        if end > len(self.buf):
            grown = np.zeros(max(end, 2 * len(self.buf)), dtype=np.uint8)
            grown[:self.top] = self.buf[:self.top]
            self.buf = grown
        self.top = end
        return self.base + offset


class HostMemory:
    def __init__(self):
        self.static = Region("static", STATIC_BASE)
        self.heap = Region("heap", HEAP_BASE)
        self.stack = Region("stack", STACK_BASE)
        self.regions = (self.heap, self.stack, self.static)
        self.strings: dict[bytes, int] = {}

    def map(self, address: int, size: int) -> None:
        """Host bytes at [address, address + size) (cudaMallocManaged's range), zeroed."""
        region = Region("mapped", address)
        region.reserve(size, 1)
        self.regions = self.regions + (region,)

    def unmap(self, address: int) -> None:
        self.regions = tuple(r for r in self.regions if not (r.name == "mapped" and r.base == address))

    def region(self, address: int, size: int = 1) -> Region:
        for r in self.regions:
            off = address - r.base
            if 0 <= off and off + size <= r.top:
                return r
        raise HostMemoryError(f"invalid host memory access of {size} bytes at {address:#x}")

    # ---- typed access ----
    def load(self, address: int, fmt: str):
        size = struct.calcsize(fmt)
        r = self.region(address, size)
        return struct.unpack_from("<" + fmt, r.buf, address - r.base)[0]

    def store(self, address: int, fmt: str, value) -> None:
        size = struct.calcsize(fmt)
        r = self.region(address, size)
        struct.pack_into("<" + fmt, r.buf, address - r.base, value)

    def read(self, address: int, size: int) -> bytes:
        if size == 0:
            return b""
        r = self.region(address, size)
        off = address - r.base
        return r.buf[off:off + size].tobytes()

    def write(self, address: int, data: bytes) -> None:
        if not data:
            return
        r = self.region(address, len(data))
        off = address - r.base
        r.buf[off:off + len(data)] = np.frombuffer(bytes(data), dtype=np.uint8)

    def view(self, address: int, dtype, count: int) -> np.ndarray:
        """A numpy view of `count` elements at `address` (for vectorized loops)."""
        dtype = np.dtype(dtype)
        r = self.region(address, max(count * dtype.itemsize, 1))
        off = address - r.base
        return r.buf[off:off + count * dtype.itemsize].view(dtype)

    def fill(self, address: int, byte: int, size: int) -> None:
        if size == 0:
            return
        r = self.region(address, size)
        off = address - r.base
        r.buf[off:off + size] = byte & 0xFF

    def read_string(self, address: int, limit: int = 1 << 20) -> str:
        r = self.region(address, 1)
        off = address - r.base
        end = off
        while end < r.top and end - off < limit and r.buf[end] != 0:
            end += 1
        return r.buf[off:end].tobytes().decode("latin-1")

    # ---- allocation ----
    def malloc(self, size: int) -> int:
        address = self.heap.reserve(size)
        self.heap.blocks[address] = size
        return address

    def free(self, address: int) -> None:
        if address == 0:
            return
        if address not in self.heap.blocks:
            raise HostMemoryError(f"free({address:#x}): not an address malloc returned (or freed twice)")
        del self.heap.blocks[address]

    def string(self, text: str) -> int:
        data = text.encode("latin-1", "replace") + b"\0"
        if data not in self.strings:
            address = self.static.reserve(len(data), 1)
            self.write(address, data)
            self.strings[data] = address
        return self.strings[data]
