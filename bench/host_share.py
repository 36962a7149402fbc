"""Where the wall clock of a host-bound GEMM trial goes (bench/gemm_lane.py's rule: r products
enqueued, then one wait): Python planning and enqueueing, the transport's encode and submit
(JavaScript and Dawn in the browser transport, wgpu-native natively), the wait, and the
kernels' own time from timestamp queries. Median of 7 trials after the warm-up, with
bench/gemm_lane.py's storage pool.

  * CPython on wgpu-native:  python bench/host_share.py
  * Pyodide on Node.js + Dawn:
    node --import tools/dawn_host.mjs tools/dawn_run.mjs DIST --module bench/gemm_cases.py \
        --module bench/gemm_lane.py --module bench/host_share.py host_share:main
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import tenferro_web as tw

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import CASES, WARMUP_SECONDS, operands  # noqa: E402
from gemm_lane import POOL  # noqa: E402

SHARED = ("f32 1024", "f32 2048")
TRIALS = 7


class CallTimes:
    """Seconds spent in a few WebGPU calls of the transport, summed since ``reset``."""

    def __init__(self, read, reset):
        self.totals, self.reset = read, reset


def time_transport_calls(transport) -> CallTimes:
    calls = ("createBuffer", "writeBuffer", "createBindGroup", "finish", "submit")
    if sys.platform == "emscripten":
        from pyodide.code import run_js

        # Wrapped in JavaScript: a Python wrapper would add its own crossing to each call.
        share = run_js("""(ctx) => {
          const spent = { createBuffer: 0, writeBuffer: 0, createBindGroup: 0, finish: 0,
                          submit: 0 };
          const wrap = (target, name) => {
            const real = target[name].bind(target);
            target[name] = (...args) => {
              const start = performance.now();
              try { return real(...args); } finally { spent[name] += performance.now() - start; }
            };
          };
          const device = ctx.device;
          wrap(device.queue, "writeBuffer");
          wrap(device.queue, "submit");
          wrap(device, "createBindGroup");
          wrap(device, "createBuffer");
          const createEncoder = device.createCommandEncoder.bind(device);
          device.createCommandEncoder = (...args) => {
            const encoder = createEncoder(...args);
            wrap(encoder, "finish");
            return encoder;
          };
          return {
            read: () => Object.fromEntries(Object.entries(spent).map(([k, v]) => [k, v / 1e3])),
            reset: () => { for (const k in spent) spent[k] = 0; },
          };
        }""")(transport._ctx)
        return CallTimes(lambda: share.read().to_py(), share.reset)
    spent = dict.fromkeys(calls, 0.0)

    def wrap(target, attribute, name):
        real = getattr(target, attribute)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - start

        setattr(target, attribute, timed)

    device = transport._device
    wrap(device.queue, "write_buffer", "writeBuffer")
    wrap(device.queue, "submit", "submit")
    wrap(device, "create_bind_group", "createBindGroup")
    wrap(device, "create_buffer", "createBuffer")
    create_encoder = device.create_command_encoder

    def encoder_with_timed_finish(*args, **kwargs):
        encoder = create_encoder(*args, **kwargs)
        wrap(encoder, "finish", "finish")
        return encoder

    device.create_command_encoder = encoder_with_timed_finish
    return CallTimes(lambda: dict(spent), lambda: spent.update(dict.fromkeys(calls, 0.0)))


async def main(argv: list[str] | None = None) -> int:
    quick = bool(argv) and "--quick" in argv
    if sys.platform == "emscripten":
        rt = await tw.WebGpuRuntime.create(kernels="gpu", storage_pool_bytes=POOL)
        lane = "dawn"
    else:
        rt, lane = tw.WebGpuRuntime.native(kernels="gpu", storage_pool_bytes=POOL), "wgpu-native"
    transport = rt.device.transport
    submitted = []
    submit = transport.submit

    def timed_submit(commands, params):
        start = time.perf_counter()
        submit(commands, params)
        submitted.append(time.perf_counter() - start)

    transport.submit = timed_submit
    calls = time_transport_calls(transport)
    cases = [("f32 256", 256, 256, 256, 1, "float32", 20)] if quick else \
        [c for c in CASES if c[0] in SHARED]
    for name, m, n, k, batch, dtype, reps in cases:
        a, b = (rt.upload(x) for x in operands(name, m, n, k, batch, dtype))
        warm_until = time.perf_counter() + WARMUP_SECONDS
        while time.perf_counter() < warm_until:
            outs = [tw.dot_general(a, b, [1], [0]) for _ in range(reps)]
            await rt.synchronize()
            del outs
        rows, spent = [], []
        for _ in range(TRIALS):
            submitted.clear()
            calls.reset()
            start = time.perf_counter()
            outs, marks = [], [start]
            for _ in range(reps):
                outs.append(tw.dot_general(a, b, [1], [0]))
                marks.append(time.perf_counter())
            enqueued = marks[-1]
            per_op = sorted(t1 - t0 for t0, t1 in zip(marks, marks[1:]))
            await rt.synchronize()
            end = time.perf_counter()
            times = list(submitted)
            spent.append(calls.totals())
            del outs
            async with rt.kernel_timer() as timer:
                outs = [tw.dot_general(a, b, [1], [0]) for _ in range(reps)]
            del outs
            rows.append((end - start, enqueued - start, sum(times[:-1]), times[-1],
                         end - enqueued, timer.seconds, len(times), per_op[len(per_op) // 2]))
        med = [statistics.median(r[i] for r in rows) * 1e3 for i in range(6)]
        print(f"{lane} {name} x{reps}: wall {med[0]:.3f} ms = enqueue {med[1]:.3f} (of it "
              f"submits while enqueueing {med[2]:.3f}) + wait {med[4]:.3f} (of it the last "
              f"submit {med[3]:.3f}); kernels alone {med[5]:.3f} ms; "
              f"{rows[0][6]} submits per trial; an op without a submit "
              f"{statistics.median(r[7] for r in rows) * 1e6:.0f} us", flush=True)
        print(f"{lane} {name} x{reps}: WebGPU calls in the trial: " + ", ".join(
            f"{call} {statistics.median(t[call] for t in spent) * 1e3:.3f} ms"
            for call in spent[0]), flush=True)
    rt.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
