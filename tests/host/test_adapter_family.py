"""kernels="auto" from what each engine tells a page about its adapter (pure; no GPU)."""

import pytest

from tenferro_web.runtime.device import AdapterInfo


def adapter(vendor="", architecture="", fallback=False):
    return AdapterInfo(vendor, architecture, "", "", fallback, (), {}, "window")


@pytest.mark.parametrize("info, cpu", [
    (adapter("google", "swiftshader"), True),         # Chromium without a GPU
    (adapter("mesa", "llvmpipe"), True),              # wgpu-native on lavapipe
    (adapter(fallback=True), True),                   # Firefox on lavapipe: no names, fallback
    (adapter(), False),                               # Firefox on a GPU: no names, not fallback
    (adapter("nvidia", "hopper"), False),             # Chromium on an NVIDIA GPU
])
def test_the_kernel_family_follows_the_fallback_flag_and_software_names(info, cpu):
    assert info.is_cpu == cpu
