"""WGSL templating: every kernel renders completely, and nothing is left half-specialised."""

import re
from importlib.resources import files

import pytest

from tenferro_web.runtime.kernels import KernelKey, kernel_source, render


def test_rendering_substitutes_and_includes():
    text = render(KernelKey.of("gemm_blocked", SCALAR="c32", TM=2, TN=3, WX=8, WY=4))
    assert "{{" not in text and "#include" not in text
    assert "alias Scalar = vec2<f32>;" in text
    assert "const TM: u32 = 2u;" in text and "const WY: u32 = 4u;" in text


def test_missing_or_unknown_constants_are_refused():
    with pytest.raises(ValueError, match="placeholders"):
        render(KernelKey.of("gemm_blocked", SCALAR="f32"))
    with pytest.raises(ValueError, match="placeholders"):
        render(KernelKey.of("copy_strided", ELEM="u32", EXTRA=1))


def test_keys_are_canonical():
    assert KernelKey.of("k", A=1, B=2) == KernelKey.of("k", B=2, A=1)
    assert KernelKey.of("k", A=1).label == "k[A=1]"


def test_every_wgsl_file_is_shipped_and_used_with_its_placeholders():
    names = sorted(p.name[:-5] for p in (files("tenferro_web") / "wgsl").iterdir()
                   if p.name.endswith(".wgsl"))
    assert {"copy_strided", "copy_strided_bytes", "transpose_tiled", "gemm_blocked",
            "scalar_f32", "scalar_c32"} <= set(names)
    for name in names:
        for placeholder in re.findall(r"\{\{([A-Z0-9_]+)\}\}", kernel_source(name)):
            assert placeholder.isupper()
