"""WGSL kernels: real ``.wgsl`` files specialised by explicit ``{{NAME}}`` substitution.

A ``KernelKey`` (file name + constants) identifies one pipeline; the runtime caches pipelines by
it. Rendering refuses unknown or missing placeholders, so a kernel can never run half-specialised.
A line ``#include "name.wgsl"`` (after substitution) pastes another file once: the scalar
helpers of one dtype (so a kernel family is written once for F32 and C32), the launch-grid
decoding, the GEMM params layout. Lines ``#if NAME`` / ``#else`` / ``#endif`` keep one branch by
a true/false constant (code whose types differ between variants). A loop preceded by a line
``// unroll`` is expanded into copies of its body with the counter as a literal: CPU adapters
(SwiftShader) keep per-invocation arrays in registers only when every index is constant, which
makes register-blocked kernels several times faster there. The file stays valid WGSL either way.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib.resources import files

_PLACEHOLDER = re.compile(r"\{\{([A-Z0-9_]+)\}\}")
_CONDITION = re.compile(r"^#if ([A-Z0-9_]+)$", re.MULTILINE)
_INCLUDE = re.compile(r'^#include "([a-z0-9_]+)\.wgsl"$', re.MULTILINE)
_BINDING = re.compile(r"^@group\(0\) @binding\((\d+)\) var<storage, (read|read_write)> (\w+):",
                      re.MULTILINE)
# The trip count: a literal, or literals multiplied and divided left to right (``8u / 4u``).
_UNROLL = re.compile(r"^[ \t]*// unroll\n[ \t]*for \(var (\w+) = 0u; \1 < (\d+u(?: [*/] \d+u)*); "
                     r"\1\+\+\) \{\n", re.MULTILINE)


@dataclass(frozen=True)
class KernelKey:
    name: str
    constants: tuple[tuple[str, str], ...] = ()
    # Hashed once: a key is looked up in the pipeline cache at every launch.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.name, self.constants)))

    def __hash__(self) -> int:
        return self._hash

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
    wanted = set(_PLACEHOLDER.findall(text)) | set(_CONDITION.findall(text))
    given = dict(key.constants)
    if wanted != set(given):
        raise ValueError(f"kernel {key.name}: placeholders {sorted(wanted)} but constants "
                         f"{sorted(given)}")
    text = select_branches(_PLACEHOLDER.sub(lambda m: given[m.group(1)], text), given)
    # After substitution an include names one concrete file, e.g. the scalar helpers of a dtype.
    return unroll(expand_includes(text))


def buffer_bindings(text: str) -> tuple[str, ...]:
    """The access ("read" or "read_write") of a rendered kernel's buffers, bindings 1 to n, in
    order. Binding 0 is always ``params``, read-only, which the transports bind at a dynamic
    offset of one shared params buffer: the pipeline layout every transport builds."""
    found = {int(index): (access, name) for index, access, name in _BINDING.findall(text)}
    if found.get(0) != ("read", "params") or sorted(found) != list(range(len(found))):
        raise ValueError(f"a kernel binds read-only params at 0, then buffers 1..n: {found}")
    return tuple(found[i][0] for i in range(1, len(found)))


def select_branches(text: str, constants: dict[str, str]) -> str:
    """Keep the lines of each ``#if NAME`` block whose condition holds (nesting allowed)."""
    out: list[str] = []
    keep: list[bool] = []
    for line in text.splitlines(keepends=True):
        word = line.strip().split(" ")
        if word[0] == "#if":
            flag = constants.get(word[1])
            if flag not in ("true", "false"):
                raise ValueError(f"#if {word[1]}: not a true/false constant")
            keep.append(flag == "true")
        elif word[0] == "#else":
            keep[-1] = not keep[-1]
        elif word[0] == "#endif":
            keep.pop()
        elif all(keep):
            out.append(line)
    if keep:
        raise ValueError("#if without #endif")
    return "".join(out)


def expand_includes(text: str) -> str:
    """Paste included files, recursively; a file included twice is pasted once."""
    pasted: set[str] = set()

    def paste(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in pasted:
            return ""
        pasted.add(name)
        return _INCLUDE.sub(paste, kernel_source(name))

    return _INCLUDE.sub(paste, text)


def trip_count(expression: str) -> int:
    words = expression.replace("u", "").split(" ")
    count = int(words[0])
    for operator, value in zip(words[1::2], words[2::2], strict=True):
        count = count * int(value) if operator == "*" else count // int(value)
    return count


def unroll(text: str) -> str:
    """Expand every ``// unroll``-marked loop with a literal trip count, outermost first."""
    while match := _UNROLL.search(text):
        name, count = match.group(1), trip_count(match.group(2))
        depth, end = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        body = text[match.end(): end - 1]
        line_end = text.index("\n", end) + 1 if "\n" in text[end:] else len(text)
        counter = re.compile(rf"\b{name}\b")
        # Each copy keeps its own block, so declarations in the body stay local to it.
        copies = "".join("{\n" + counter.sub(f"{i}u", body) + "}\n" for i in range(count))
        text = text[: match.start()] + copies + text[line_end:]
    return text
