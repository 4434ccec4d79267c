"""A SASS emulator: runs sm_89 and sm_90 cubins (nvcc's and ptxc's) on the CPU, bit-exact.

    from ptxc.emu.device import Device
    dev = Device()
    module = dev.load(open("vadd.cubin", "rb").read())
    a = dev.malloc(4 * n) ...
    dev.launch(module.kernel("vadd"), grid=4096, block=256, args=[a, b, c, n])

The pieces, in the order a launch meets them: program.py (decoded SASS -> flat rows),
device.py (memory, modules, constant bank 0, the launch descriptor), runner.py (the
arrays and the reports), core.py (the numba interpreter; fp.py its IEEE arithmetic),
hazards.py (the scoreboard/stall checker).  docs/emulator.md describes the machine.
Importing this package does not import numba; launching does.
"""
