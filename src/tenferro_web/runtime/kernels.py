"""WGSL kernels: real ``.wgsl`` files specialised by explicit ``{{NAME}}`` substitution.

A ``KernelKey`` (file name + constants) identifies one pipeline; the runtime caches pipelines by
it. Rendering refuses unknown or missing placeholders, so a kernel can never run half-specialised.
A line ``#include "name.wgsl"`` (after substitution) pastes another file, e.g. the scalar helpers
of one dtype, so a kernel family is written once for F32 and C32.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib.resources import files

_PLACEHOLDER = re.compile(r"\{\{([A-Z0-9_]+)\}\}")
_INCLUDE = re.compile(r'^#include "([a-z0-9_]+)\.wgsl"$', re.MULTILINE)


@dataclass(frozen=True)
class KernelKey:
    name: str
    constants: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, name: str, **constants: object) -> KernelKey:
        return cls(name, tuple(sorted((k, str(v)) for k, v in constants.items())))

    @property
    def label(self) -> str:
        spec = ",".join(f"{k}={v}" for k, v in self.constants)
        return f"{self.name}[{spec}]"


@functools.cache
def kernel_source(name: str) -> str:
    return (files("tenferro_web") / "wgsl" / f"{name}.wgsl").read_text(encoding="utf-8")


def render(key: KernelKey) -> str:
    text = kernel_source(key.name)
    wanted = set(_PLACEHOLDER.findall(text))
    given = dict(key.constants)
    if wanted != set(given):
        raise ValueError(f"kernel {key.name}: placeholders {sorted(wanted)} but constants "
                         f"{sorted(given)}")
    text = _PLACEHOLDER.sub(lambda m: given[m.group(1)], text)
    # After substitution an include names one concrete file, e.g. the scalar helpers of a dtype.
    return _INCLUDE.sub(lambda m: kernel_source(m.group(1)), text)
