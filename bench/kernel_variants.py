"""gemm_tiled written differently, same arithmetic, side by side on one WebGPU lane: does the
shape of the WGSL change what a compiler (Tint in Dawn, naga in wgpu-native, then the driver)
makes of it? Each variant rewrites the kernel's source or its rendered text; the GEMM cases
are timed with bench/gemm_lane.py's rule, kernel time included where the adapter has
timestamp queries.

  * CPython on wgpu-native:  python bench/kernel_variants.py [--quick]
  * Pyodide on Node.js + Dawn:
    node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST --module bench/gemm_cases.py \
        --module bench/gemm_lane.py --module bench/kernel_variants.py kernel_variants:main
The last line is ``RESULT {json}``: per variant and case, GFLOP/s and the sampled error.

Variants:
  * as-is: the kernel as shipped;
  * inline: the helper calls of the inner product (``mac``, ``lane_of``) written in place;
  * scalars: the register block (``acc``, ``av``, ``bv``) as separate variables, no arrays;
  * k-loop: the BK loop over a tile left as a loop (the i, j loops still unrolled);
  * all: inline + scalars + k-loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path

import tenferro_web as tw
from tenferro_web.lowering import kernels
from tenferro_web.runtime import pipelines

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import CASES, QUICK, VARIED  # noqa: E402
from gemm_lane import POOL, run_cases  # noqa: E402

SHIPPED_SOURCE = kernels.kernel_source
SHIPPED_RENDER = kernels.render


def k_loop(text: str) -> str:
    marker = "    // unroll\n    for (var kk = 0u;"
    assert marker in text
    return text.replace(marker, "    for (var kk = 0u;")


def inline(text: str) -> str:
    if "alias Scalar = f32;" in text:  # C32's helpers are complex arithmetic: kept as calls
        text = re.sub(r"lane_of\((\w+), (\w+)\)", r"\1[\2]", text)
        text = re.sub(r"= mac\(([^,]+), ([^,]+), ([^)]+)\);", r"= fma(\2, \3, \1);", text)
    return text


def scalars(text: str) -> str:
    const = {name: int(value) for name, value in
             re.findall(r"^const (TM|TN|LANES): u32 = (\d+)u;", text, re.MULTILINE)}
    sizes = {"acc": const["TM"] * const["TN"], "av": const["TM"], "bv": const["TN"]}
    for name, size in sizes.items():
        declared = re.search(rf"^(\s*)var {name}: array<Scalar, [A-Z *]+>;\n", text, re.MULTILINE)
        assert declared, name
        indent = declared.group(1)
        text = text.replace(declared.group(0), "".join(
            f"{indent}var {name}_{i}: Scalar;\n" for i in range(size)))

    def element(match: re.Match) -> str:
        expression = match.group(2).replace("u", "")
        for name, value in const.items():
            expression = expression.replace(name, str(value))
        assert re.fullmatch(r"[0-9 *+/%]+", expression), match.group(0)
        return f"{match.group(1)}_{eval(expression.replace('/', '//'))}"

    return re.sub(r"\b(acc|av|bv)\[([^\]]+)\]", element, text)


VARIANTS = {
    "as-is": ((), ()),
    "inline": ((), (inline,)),
    "scalars": ((), (scalars,)),
    "k-loop": ((k_loop,), ()),
    "all": ((k_loop,), (inline, scalars)),
}


def use(variant: str) -> None:
    source_edits, text_edits = VARIANTS[variant]

    def source(name: str) -> str:
        text = SHIPPED_SOURCE(name)
        if name == "gemm_tiled":
            for edit in source_edits:
                text = edit(text)
        return text

    def render(key: kernels.KernelKey) -> str:
        text = SHIPPED_RENDER(key)
        if key.name == "gemm_tiled":
            for edit in text_edits:
                text = edit(text)
        return text

    kernels.kernel_source = source
    pipelines.render = render


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small cases (a smoke run)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args(argv)
    cases = QUICK if args.quick else [c for c in CASES if c[0] in VARIED]
    rows = []
    lane = "dawn" if sys.platform == "emscripten" else "wgpu-native"
    for variant in args.variants.split(","):
        use(variant)
        # A fresh runtime per variant: its pipeline cache holds only this variant's kernels.
        if lane == "dawn":
            rt = await tw.WebGpuRuntime.create(kernels="gpu", storage_pool_bytes=POOL)
        else:
            rt = tw.WebGpuRuntime.native(kernels="gpu", storage_pool_bytes=POOL)
        for row in await run_cases(rt, cases, log=lambda line, v=variant:
                                   print(f"{v:<10}{line}", flush=True)):
            rows.append({"variant": variant, **row})
        await rt.synchronize()
        del rt
    print("RESULT " + json.dumps({"lane": lane, "rows": rows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
