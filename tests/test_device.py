"""ptxc.device: kernels on a real GPU through the CUDA driver API; `ptxc run --device`,
`ptxc check --device` and scripts/device_check.py's report.

RUN: pytest tests/test_device.py        (the `device` tests skip with 'no CUDA GPU' without one)
CHECK: parameter offsets read from PTX `.param` declarations are ptxas's; without a GPU,
GPU() is `no CUDA GPU available: ...`, and `ptxc run --device` / `ptxc check --device`
say `ptxc: error: no CUDA GPU available: ...` and exit 1, never a traceback.
CHECK (no GPU): the --device plumbing (HostGPU under the interpreter, check --device's
report and timing) runs against EmulatedGPU, ptxc.device.GPU's interface over the
emulator: vadd prints its goal line, saxpy's check agrees.  Option errors, the JIT's PTX
version per driver, device_check.py's memory/compute rule and its kernel-time report
against numbers worked out by hand.
CHECK (device): ptxc's sm_90 PTX (`--ptx-version=9.0`) loads through the driver's JIT and
vadd gives c = a + b = 2; an sm_89 cubin (ptxc's own) is refused with both architectures
named; an unsupported `.version` says which option to use; `ptxc run --device vadd.cu`
prints `c[0]=2.000000 c[n-1]=2.000000` with ptxc's cubin, ptxc's PTX and nvcc's cubin;
`ptxc check --device` agrees on saxpy, stencil_1d, reduce_shared and fe_multi_kernel.
Where nvcc is absent (the device machine), nvcc's cubins come from
`scripts/device_check.py prepare .device_work` (docs/sm90.md "On the H200").
The whole testsuite on the GPU, against nvcc's sm_90 cubins, is scripts/device_check.py.
"""
from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxc.device as device_package
from ptxc import oracle
from ptxc.device import ArchMismatch, DeviceError, GPU, NoDevice, available, cubin_image, ptx_image, ptx_params
from ptxc.device import jit_ptx_version, run_launches
from ptxc.cli.check import check_command
from ptxc.cli.run import run_command
from ptxc.launch.spec import parse_file

ROOT = Path(__file__).resolve().parent.parent
TESTSUITE = ROOT / "testsuite"
VADD = TESTSUITE / "vadd.cu"
GOAL = "c[0]=2.000000 c[n-1]=2.000000\n"
WORK = ROOT / ".device_work"        # device_check.py prepare's output, carried to the device machine
needs_nvcc = pytest.mark.skipif(not oracle.available("nvcc"), reason="nvcc (the oracle) is not installed")
VADD_LAUNCH = ("// LAUNCH: vadd grid=64 block=256 a=f32[16384]:ones b=f32[16384]:ones "
               "c=f32[16384]:zero n=16384\n")

PTX_PARAMS = """
.visible .entry k(
	.param .u8 k_param_0,
	.param .f64 k_param_1,
	.param .align 4 .b8 k_param_2[12],
	.param .u64 .ptr .global .align 4 k_param_3,
	.param .u16 k_param_4
)
{ ret; }
"""


def test_ptx_params_at_natural_alignment():
    assert ptx_params(PTX_PARAMS) == {"k": [(0, 1), (8, 8), (16, 12), (32, 8), (40, 2)]}


def test_no_gpu_is_a_clear_error():
    if available():
        pytest.skip("a GPU is here")
    with pytest.raises(NoDevice, match="^no CUDA GPU available"):
        GPU()


@pytest.fixture(scope="module")
def gpu():
    if not available():
        pytest.skip("no CUDA GPU")
    return GPU()


def ptxc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxc", *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.device
def test_ptxc_ptx_runs_through_the_jit(gpu, tmp_path):
    out = tmp_path / "vadd.ptx"
    proc = ptxc(str(VADD), "-ptx", "-arch=sm_90", "--ptx-version=9.0", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    source = VADD_LAUNCH + VADD.read_text()
    run = run_launches(gpu, ptx_image(out.read_text(), "vadd.ptx"), parse_file(source, "vadd.cu"), source,
                       "vadd.cu")
    assert (run.buffers["c"] == np.float32(2)).all()


@pytest.mark.device
def test_sm89_cubin_is_refused(gpu, tmp_path):
    out = tmp_path / "vadd.cubin"
    proc = ptxc(str(VADD), "-arch=sm_89", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    image = cubin_image(out.read_bytes(), "vadd.cubin")
    if gpu.arch == "sm_89":
        pytest.skip("this GPU is sm_89")
    with pytest.raises(ArchMismatch, match=f"for sm_89, but the GPU .* is {gpu.arch}"):
        gpu.load_cubin(image.data, image.name, image.arch)


@pytest.mark.device
def test_ptx_version_the_driver_refuses_is_explained(gpu, tmp_path):
    out = tmp_path / "vadd.ptx"
    assert ptxc(str(VADD), "-ptx", "-arch=sm_90", "--ptx-version=9.5", "-o", str(out)).returncode == 0
    try:
        gpu.load_ptx(out.read_text(), "vadd.ptx").unload()
    except DeviceError as err:
        assert "--ptx-version" in str(err) or "refuses" in str(err), err


# ---- without a GPU: the commands say so ---------------------------------------------------------
@pytest.mark.parametrize("command", [["run", "--device", str(VADD)],
                                     ["check", "--device", str(TESTSUITE / "saxpy.cu")],
                                     ["run", "--device", "--ptx", str(VADD)]])
def test_device_commands_without_gpu(command):
    if available():
        pytest.skip("a GPU is here")
    proc = ptxc(*command)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("ptxc: error: no CUDA GPU available: "), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


# ---- options -------------------------------------------------------------------------------------
@pytest.mark.parametrize("command, args, message", [
    ("run", ["--ptx"], "--ptx needs --device"),
    ("check", ["--ptx-version=9.0"], "--ptx-version needs --device"),
    ("run", ["--device", "--max-steps=10"], "--max-steps: emulator option(s), not with --device"),
    ("check", ["--device", "--check-hazards"], "--check-hazards: emulator option(s), not with --device"),
    ("run", ["--device", "--ptx-version=9.0"], "--ptx-version needs --ptx"),
    ("run", ["--device", "--ptx", "--nvcc-cubin=x.cubin"], "--nvcc-cubin runs that cubin: not with --ptx"),
    ("check", ["--device", "--repeat=-1"], "--repeat must be 0 or more"),
    ("run", ["--device", "--timeout=0"], "--timeout must be positive"),
])
def test_option_errors(command, args, message, capsys):
    """Checked before anything runs (no GPU needed)."""
    main = {"run": run_command, "check": check_command}[command]
    assert main([*args, str(TESTSUITE / "saxpy.cu")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ptxc: error: {message}") and err.count("\n") == 1, err


@pytest.mark.parametrize("driver, version", [(13000, "9.0"), (13050, "9.0"), (12080, "8.7"), (12060, "8.5"),
                                             (12090, "8.8"), (12000, "8.0"), (11080, "7.8"), (10020, "7.8")])
def test_jit_ptx_version(driver, version):
    """The newest PTX a driver's JIT takes (CUDA 13.0: PTX ISA 9.0, 12.8: 8.7; 12.6 has no
    ISA of its own: 8.5)."""
    assert jit_ptx_version(driver) == version


# ---- the --device plumbing on the emulator (no GPU needed) ---------------------------------------
class EmulatedGPU:
    """ptxc.device.GPU's interface over ptxc's emulator (an sm_89 GPU): what `ptxc run
    --device` and `ptxc check --device` do with a GPU, testable without one.  PTX goes
    through ptxas (the oracle), as the driver's JIT would compile it."""
    name, arch, driver_version = "EmulatedGPU", "sm_89", 13000

    def __init__(self):
        from ptxc.emu.device import Device
        self.device = Device()
        self.launched = []

    def describe(self):
        return f"{self.name} ({self.arch})"

    check_arch = GPU.check_arch

    def load_cubin(self, data, filename="x.cubin", arch=None):
        from ptxc.emu.device import LaunchError
        self.check_arch(arch, filename)
        try:
            return EmulatedModule(self.device.load(bytes(data), filename))
        except LaunchError as err:
            raise DeviceError(str(err)) from None

    def load_ptx(self, text, filename="x.ptx"):
        ptx_path, cubin_path = self.tmp / "jit.ptx", self.tmp / "jit.cubin"
        ptx_path.write_text(text)
        oracle.ptxas(ptx_path, cubin_path, self.arch)
        return self.load_cubin(cubin_path.read_bytes(), filename)

    def alloc(self, nbytes):
        return self.device.malloc(nbytes)

    def free(self, address):
        self.device.free(address)

    def upload(self, address, array):
        self.device.memory.write(address, array.tobytes())

    def download(self, address, array):
        array.reshape(-1).view(np.uint8)[:] = np.frombuffer(self.device.memory.read(address, array.nbytes), np.uint8)

    def launch(self, function, grid, block, params, shared=0, repeat=1, timeout=None):
        from ptxc.emu.device import LaunchError
        kernel = function.handle
        args = [params[offset:offset + size] for offset, size in kernel.params]
        try:
            result = self.device.launch(kernel, grid, block, args, shared)
        except LaunchError as err:
            raise DeviceError(f"running {function.name}: {err}") from None
        self.launched.append((function.name, tuple(grid), tuple(block), bytes(params)))
        return 0.004 + 0.001 * len(self.launched)      # made-up milliseconds

    def synchronize(self):
        pass

    def recover(self):
        pass


class EmulatedModule:
    def __init__(self, module):
        self.module = module

    def function(self, name):
        from ptxc.device.driver_api import Function
        return Function(name, self.module.kernels[name])

    def unload(self):
        pass


@pytest.fixture
def emulated_gpu(monkeypatch, tmp_path):
    if available():     # the device tests below run the real thing; spare the device machine the emulator
        pytest.skip("a GPU is here")
    gpu = EmulatedGPU()
    gpu.tmp = tmp_path
    monkeypatch.setattr(device_package, "GPU", lambda: gpu)
    return gpu


def run_here(main, args, capsys):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_run_device_on_emulated_gpu(emulated_gpu, capsys):
    """ptxc's cubin for the GPU's architecture, host code interpreted, kernels launched
    through HostGPU: the seed's goal line."""
    status, out, err = run_here(run_command, ["--device", VADD, "--trace-launch"], capsys)
    assert (status, out) == (0, GOAL), err
    [(name, grid, block, params)] = emulated_gpu.launched
    assert (name, grid, block) == ("_Z4vaddPKfS0_Pfi", (4096, 1, 1), (256, 1, 1))
    assert params[24:28] == (1 << 20).to_bytes(4, "little")          # n, after three pointers
    assert "launch _Z4vaddPKfS0_Pfi grid=(4096,1,1) block=(256,1,1) shared=0: parameters" in err


@pytest.mark.oracle
@needs_nvcc
@pytest.mark.parametrize("args", [["--with=nvcc"], ["--ptx"], ["--with=nvcc", "--ptx"]])
def test_run_device_other_images_on_emulated_gpu(emulated_gpu, args, capsys):
    status, out, err = run_here(run_command, ["--device", *args, VADD], capsys)
    assert (status, out) == (0, GOAL), err


@pytest.mark.oracle
@needs_nvcc
def test_run_device_prebuilt_nvcc_cubin_and_arch_mismatch(emulated_gpu, tmp_path, capsys):
    cubin = tmp_path / "vadd.sm_89.cubin"
    oracle.nvcc_cubin(VADD, cubin, "sm_89")
    assert run_here(run_command, ["--device", f"--nvcc-cubin={cubin}", VADD], capsys)[:2] == (0, GOAL)
    status, out, err = run_here(run_command, ["--device", "--with=nvcc", "-arch=sm_90", VADD], capsys)
    assert status == 1 and out == ""
    assert err == ("ptxc: error: vadd.nvcc.cubin: the cubin is for sm_90, but the GPU (EmulatedGPU) is sm_89; "
                   "compile with -arch=sm_89\n")


def test_run_device_with_nvcc_where_there_is_none(emulated_gpu, monkeypatch, capsys):
    """The device machine has no nvcc: --with=nvcc is a clean error (--nvcc-cubin is the way)."""
    monkeypatch.setattr(oracle, "find", lambda tool: None)
    status, out, err = run_here(run_command, ["--device", "--with=nvcc", VADD], capsys)
    assert (status, out) == (1, "")
    assert err.startswith("ptxc: error: --with=nvcc: nvcc not found") and err.count("\n") == 1, err


def test_run_device_reports_a_bad_copy(emulated_gpu, tmp_path, capsys):
    """Device memory is tracked by HostGPU: a copy past an allocation is the program's
    error at its line, as on the emulator."""
    path = tmp_path / "bad.cu"
    path.write_text("int main() {\n    float h[4]; float* d;\n    cudaMalloc(&d, 8);\n"
                    "    cudaMemcpy(d, h, 16, cudaMemcpyHostToDevice);\n    return 0;\n}\n")
    status, out, err = run_here(run_command, ["--device", path], capsys)
    assert status == 1
    assert err.startswith(f"{path}:4:") and "cudaMemcpy: host access of 16 bytes at" in err and "Traceback" not in err


@pytest.mark.oracle
@needs_nvcc
def test_check_device_on_emulated_gpu(emulated_gpu, capsys):
    status, out, err = run_here(check_command, ["--device", "--repeat=3", TESTSUITE / "fe_multi_kernel.cu"], capsys)
    assert status == 0, out + err
    lines = out.splitlines()
    assert lines[0].endswith("on EmulatedGPU (sm_89): ptxc's sm_89 cubin against nvcc's sm_89 cubin")
    assert lines[1] == ("fill (line 4), scale_in_place (line 5), neighbour_diff (line 6), total (line 7): "
                        "ok (3 buffers agree)")
    times = [line for line in lines if line.startswith("    time ")]
    assert [t.split(" (line")[0] for t in times] == ["    time fill", "    time scale_in_place",
                                                      "    time neighbour_diff", "    time total"]
    # EmulatedGPU's made-up times: ptxc's 4 checked + 4x(warm-up, timed) launches, then nvcc's
    assert times[0].endswith("ptxc 10.0 us  nvcc 22.0 us  ptxc/nvcc x0.45")
    assert "kernel time ptxc/nvcc: geometric mean x" in lines[-1] and "over 4 launch(es)" in lines[-1]


@pytest.mark.oracle
@needs_nvcc
def test_check_device_reports_differences_on_emulated_gpu(emulated_gpu, tmp_path, monkeypatch, capsys):
    """The emulator check's comparison and report: a racy reduction as ptxc's cubin."""
    import ptxc.cli.images as emu_cli
    good = (TESTSUITE / "reduce_shared.cu").read_text()
    racy_path = tmp_path / "racy.cu"
    racy_path.write_text(good.replace("        __syncthreads();\n    }", "    }"))
    racy = emu_cli.nvcc_cubin(str(racy_path))
    monkeypatch.setattr(emu_cli, "ptxc_cubin", lambda module, path, arch="sm_89": (racy, {}))
    status, out, err = run_here(check_command, ["--device", "--limit=2", TESTSUITE / "reduce_shared.cu"], capsys)
    assert status == 1
    assert "block_reduce (line 2): buffer 'out': 64 of 64 elements differ" in out
    assert len([line for line in out.splitlines() if line.startswith("    [")]) == 2


# ---- device_check.py: classes and the kernel-time report -----------------------------------------
def device_check():
    spec = importlib.util.spec_from_file_location("device_check", ROOT / "scripts" / "device_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sass_mix_and_classes():
    dc = device_check()
    vadd_like = ["LDC", "S2R", "S2R", "LDC", "IMAD", "ISETP", "EXIT", "LDC", "LDC", "LDC", "ULDC", "IMAD.WIDE",
                 "IMAD.WIDE", "LDG", "LDG", "IMAD.WIDE", "FADD", "STG", "EXIT", "BRA", "NOP", "NOP"]
    assert dc.sass_mix(vadd_like) == (19, 3)                      # NOPs and the closing BRA left out
    assert dc.classify(19, 3) == "memory"                         # 3/19 >= 1/10
    assert dc.classify(30, 3) == "memory" and dc.classify(31, 3) == "compute"
    assert dc.classify(0, 0) == "compute"
    assert dc.sass_mix(["LDL", "STL", "LDS", "STS", "FFMA", "BRA"]) == (6, 0)   # no EXIT: a real branch


@pytest.mark.oracle
@needs_nvcc
def test_kernel_classes_of_nvcc_sm90_cubins(tmp_path):
    dc = device_check()
    classes = {}
    for name in ("vadd", "saxpy", "fe_math_float", "fe_nbody"):
        out = tmp_path / f"{name}.cubin"
        oracle.nvcc_cubin(TESTSUITE / f"{name}.cu", out, "sm_90")
        classes.update({k: v["class"] for k, v in dc.kernel_classes(out.read_bytes()).items()})
    assert classes == {"vadd": "memory", "saxpy": "memory", "math_float": "compute", "nbody": "compute"}


def rows_for_times():
    """Two files: a memory-bound kernel launched twice, a compute-bound one; ptxc-cubin
    gives nvcc's buffers for both, ptxc-ptx differs on the second."""
    ms = 1e-3
    return [
        {"source": "a.cu", "variant": "nvcc-cubin", "ok": True, "kernels": ["k", "k"], "times_ms": [10 * ms, 10 * ms]},
        {"source": "a.cu", "variant": "ptxc-cubin", "ok": True, "kernels": ["k", "k"], "times_ms": [8 * ms, 8 * ms]},
        {"source": "a.cu", "variant": "ptxc-ptx", "ok": True, "kernels": ["k", "k"], "times_ms": [15 * ms, 15 * ms]},
        {"source": "b.cu", "variant": "nvcc-cubin", "ok": True, "kernels": ["m"], "times_ms": [4 * ms]},
        {"source": "b.cu", "variant": "ptxc-cubin", "ok": True, "kernels": ["m"], "times_ms": [8 * ms]},
        {"source": "b.cu", "variant": "ptxc-ptx", "ok": False, "kernels": ["m"], "times_ms": [2 * ms]},
        {"source": "b.cu", "variant": "rewrap", "ok": False, "error": "CUDA_ERROR_ILLEGAL_ADDRESS"},
    ]


def test_kernel_times_and_geometric_means():
    dc = device_check()
    classes = {"a.cu": {"k": {"class": "memory"}}, "b.cu": {"m": {"class": "compute"}}}
    kernels = dc.kernel_times(rows_for_times(), classes)
    by_name = {k["kernel"]: k for k in kernels}
    assert by_name["k"]["class"] == "memory" and by_name["m"]["class"] == "compute"
    assert by_name["k"]["us"] == pytest.approx({"nvcc-cubin": 20.0, "ptxc-cubin": 16.0, "ptxc-ptx": 30.0})
    assert by_name["m"]["same"] == {"nvcc-cubin": True, "ptxc-cubin": True, "ptxc-ptx": False}
    ratios = dc.time_ratios(kernels)
    assert ratios["ptxc-cubin"]["memory"] == (pytest.approx(0.8), 1)
    assert ratios["ptxc-cubin"]["compute"] == (pytest.approx(2.0), 1)
    assert ratios["ptxc-cubin"]["all"] == (pytest.approx(math.sqrt(0.8 * 2.0)), 2)
    assert ratios["ptxc-ptx"]["memory"] == (pytest.approx(1.5), 1)
    assert ratios["ptxc-ptx"]["compute"] == (None, 0)          # its buffers differ: left out
    lines = dc.format_kernel_times(kernels, 10)
    assert lines[0].startswith("kernel time per kernel (us; CUDA events, mean of 10 launches after a warm-up")
    assert lines[2].split() == ["b", "m", "compute", "4.0", "8.0", "x2.00", "2.0", "x0.50!"]
    assert lines[3].split() == ["a", "k", "memory", "20.0", "16.0", "x0.80", "30.0", "x1.50"]
    assert lines[-2].split() == ["ptxc-cubin", "x0.80", "(1)", "x2.00", "(1)", "x1.26", "(2)"]
    assert lines[-1].split() == ["ptxc-ptx", "x1.50", "(1)", "-", "(0)", "x1.50", "(1)"]


# ---- on the GPU ------------------------------------------------------------------------------------
def nvcc_cubin_file(stem: str, arch: str, tmp_path, folder: Path = TESTSUITE) -> Path:
    """nvcc's cubin of testsuite/<stem>.cu (or folder/<stem>.cu): compiled here if nvcc
    is, else prepared by `device_check.py prepare .device_work` (sm_90 only)."""
    if oracle.available("nvcc"):
        out = tmp_path / f"{stem}.{arch}.cubin"
        oracle.nvcc_cubin(folder / f"{stem}.cu", out, arch)
        return out
    prepared = WORK / f"{stem}.nvcc-cubin.cubin"
    if arch == "sm_90" and prepared.exists():
        return prepared
    pytest.fail(f"no nvcc here and no {prepared.relative_to(ROOT)}: run "
                "`python scripts/device_check.py prepare .device_work` where nvcc is, and carry .device_work")


@pytest.mark.device
@pytest.mark.parametrize("args", [[], ["--ptx"]], ids=["ptxc-cubin", "ptxc-ptx"])
def test_run_device_vadd_goal_line(gpu, args):
    proc = ptxc("run", "--device", *args, str(VADD))
    assert (proc.returncode, proc.stdout) == (0, GOAL), proc.stderr


@pytest.mark.device
def test_run_device_vadd_with_nvcc(gpu, tmp_path):
    proc = ptxc("run", "--device", f"--nvcc-cubin={nvcc_cubin_file('vadd', gpu.arch, tmp_path)}", str(VADD))
    assert (proc.returncode, proc.stdout) == (0, GOAL), proc.stderr
    proc = ptxc("run", "--device", "--with=nvcc", str(VADD))
    if oracle.available("nvcc"):
        assert (proc.returncode, proc.stdout) == (0, GOAL), proc.stderr
    else:           # the device machine: no nvcc, a clean error
        assert proc.returncode == 1 and proc.stderr.startswith("ptxc: error: --with=nvcc: "), proc.stderr
        assert "Traceback" not in proc.stderr


@pytest.mark.device
def test_run_device_wrong_arch_names_both(gpu):
    other = "sm_89" if gpu.arch != "sm_89" else "sm_90"
    proc = ptxc("run", "--device", f"-arch={other}", str(VADD))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"the cubin is for {other}, but the GPU ({gpu.name}) is {gpu.arch}" in proc.stderr


@pytest.mark.device
@pytest.mark.parametrize("args", [[], ["--ptx"]], ids=["ptxc-cubin", "ptxc-ptx"])
@pytest.mark.parametrize("name", ["saxpy", "stencil_1d", "reduce_shared", "fe_multi_kernel"])
def test_check_device_agrees(gpu, name, args, tmp_path):
    proc = ptxc("check", "--device", *args, "--repeat=5", f"--nvcc-cubin={nvcc_cubin_file(name, gpu.arch, tmp_path)}",
                str(TESTSUITE / f"{name}.cu"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ": ok (" in proc.stdout and "ptxc/nvcc x" in proc.stdout and "geometric mean" in proc.stdout


@pytest.mark.device
def test_division_by_a_parameter_agrees_on_the_gpu(gpu, tmp_path):
    """Issue 16: ptxc's sm_90 cubin divided full-range u32 values by a kernel parameter of
    7 wrong on the H200 (4096 of 8192 elements; quotients about twice nvcc's).  Every
    launch of testsuite/regress/int_div_param.cu (every width, signed and unsigned,
    several parameter values) gives nvcc's cubin's buffers on the GPU."""
    regress = TESTSUITE / "regress"
    proc = ptxc("check", "--device", "--repeat=1",
                f"--nvcc-cubin={nvcc_cubin_file('int_div_param', gpu.arch, tmp_path, regress)}",
                str(regress / "int_div_param.cu"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ": ok (" in proc.stdout and "differ" not in proc.stdout, proc.stdout
