"""Compute pipelines of one runtime, by kernel key: each compiled once.

``prepare`` compiles off the page's main thread (``createComputePipelineAsync``), a program's
kernels side by side, and concurrent requests for one kernel (two einsums awaited together,
say) share one compile.
``get`` compiles synchronously what was not prepared.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ..lowering.kernels import KernelKey, buffer_bindings, render
from ..lowering.program import Program
from ..transport.protocol import Transport

# Programs whose launches' pipelines are kept resolved, about the plan caches' size.
PROGRAMS_KEPT = 4096


def pipeline_source(key: KernelKey) -> tuple[str, str, tuple[str, ...]]:
    """What a transport compiles for ``key``: its WGSL, its label, and its buffers' accesses,
    which set the pipeline's layout."""
    code = render(key)
    return code, key.label, buffer_bindings(code)


class PipelineCache:
    def __init__(self, transport: Transport):
        self.transport = transport
        self.ready: dict[KernelKey, int] = {}
        self.compiling: dict[KernelKey, asyncio.Future[int]] = {}
        # Programs bound before -> their launches' pipelines, in order: a repeated op looks
        # them up once. Keyed by identity, holding the program: its id cannot be reused while
        # it is here.
        self.programs: dict[int, tuple[Program, tuple[int, ...]]] = {}

    def get(self, key: KernelKey) -> int:
        pipeline = self.ready.get(key)
        if pipeline is None:
            pipeline = self.ready[key] = self.transport.create_pipeline(*pipeline_source(key))
        return pipeline

    def of_program(self, program: Program) -> tuple[int, ...] | None:
        """The pipelines of ``program``'s launches, if it was bound before."""
        entry = self.programs.get(id(program))
        return entry[1] if entry is not None and entry[0] is program else None

    def bind(self, program: Program) -> tuple[int, ...]:
        """The pipelines of ``program``'s launches, in order (compiled where missing), kept."""
        pipelines = tuple(self.get(o.key) for o in program.launches)
        if len(self.programs) >= PROGRAMS_KEPT:
            self.programs.clear()
        self.programs[id(program)] = (program, pipelines)
        return pipelines

    def evict(self, pipelines: set[int]) -> None:
        """Forget pipelines the device could not create (reported after ``get`` returned), and
        every program bound to one."""
        for key in [k for k, pipeline in self.ready.items() if pipeline in pipelines]:
            del self.ready[key]
        self.programs.clear()

    async def prepare(self, keys: Iterable[KernelKey]) -> None:
        """Compile what is missing, all at once: the browser compiles them side by side."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # driven without an event loop (a native blocking call)
            for key in keys:
                self.get(key)
            return
        missing = sorted(set(keys) - self.ready.keys(), key=str)
        outcomes = await asyncio.gather(*(self._compile(key, loop) for key in missing),
                                        return_exceptions=True)
        for outcome in outcomes:  # every compile has settled; the first failure is raised
            if isinstance(outcome, BaseException):
                raise outcome

    async def _compile(self, key: KernelKey, loop: asyncio.AbstractEventLoop) -> None:
        compiling = self.compiling.get(key)
        if compiling is not None:  # requested already: share that compile
            await compiling
            return
        compiling = self.compiling[key] = loop.create_future()
        try:
            pipeline = await self.transport.create_pipeline_async(*pipeline_source(key))
        except BaseException as error:
            compiling.set_exception(error)
            compiling.exception()  # retrieved: the waiters (if any) re-raise it
            raise
        finally:
            del self.compiling[key]
        self.ready[key] = pipeline
        compiling.set_result(pipeline)
