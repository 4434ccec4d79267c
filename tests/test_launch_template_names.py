"""LAUNCH lines name template instances (issue 15 item 4): as the source writes them or
as c++filt prints them, whitespace free, trailing default arguments left out, enum
arguments by qualified name.  The symbols are nvcc's own (its PTX of a file made here)."""
from __future__ import annotations

import re

import pytest

from ptxc import oracle
from ptxc.emu.names import matching_symbols, resolve_instance_name

SOURCE = """
namespace ns { enum class Mode { Low, High = 4 }; }
template <int N, typename T = float> __global__ void k(T* p) { p[0] = N; }
template <ns::Mode M> __global__ void h(int* p) { p[0] = (int)M; }
template __global__ void k<128>(float*);
template __global__ void k<128, double>(double*);
template __global__ void k<-3, unsigned int>(unsigned int*);
template __global__ void h<ns::Mode::High>(int*);
template __global__ void h<ns::Mode::Low>(int*);
"""


@pytest.fixture(scope="module")
def symbols(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("names")
    (tmp / "t.cu").write_text(SOURCE)
    oracle.nvcc_ptx(tmp / "t.cu", tmp / "t.ptx")
    return re.findall(r"\.entry (\S+)\(", (tmp / "t.ptx").read_text())


@pytest.mark.oracle
@pytest.mark.parametrize("spec, args", [
    ("k<128, float>", "ILi128EfE"), ("k<128,float>", "ILi128EfE"), ("k< 128 , double >", "ILi128EdE"),
    ("k<-3, unsigned int>", "ILin3EjE"), ("k<-3,unsigned>", "ILin3EjE"),
    ("h<ns::Mode::High>", "ILN2ns4ModeE4EE"), ("h<ns::Mode::Low>", "ILN2ns4ModeE0EE"), ("h<(ns::Mode)4>", None),
])
def test_spec_names_one_instance(symbols, spec, args):
    found = matching_symbols(symbols, resolve_instance_name(spec, SOURCE))
    if args is None:        # c++filt's `(ns::Mode)4` spelling: the enum's last component
        found = matching_symbols(symbols, "h<(Mode)4>")
        assert len(found) == 1 and "E4EE" in found[0]
        return
    assert len(found) == 1, (spec, found, symbols)
    assert args in found[0]


@pytest.mark.oracle
def test_left_out_default_is_the_templates_default(symbols):
    """`k<128>` where k<128, float> (the default) and k<128, double> both exist: the
    symbols alone cannot tell, so both match; the default from the source decides."""
    assert len(matching_symbols(symbols, "k<128>")) == 2
    found = matching_symbols(symbols, resolve_instance_name("k<128>", SOURCE))
    assert found == ["_Z1kILi128EfEvPT0_"]
    # `k<-3>` is k<-3, float>, which the file does not instantiate (only k<-3, unsigned>)
    assert matching_symbols(symbols, resolve_instance_name("k<-3>", SOURCE)) == []
