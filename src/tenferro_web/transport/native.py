"""A native transport: wgpu-native through the ``wgpu`` package (Vulkan, Metal, D3D12).

The same runtime, planners, kernels and command streams as in the browser, outside it: this is
how the real-GPU benchmark lane runs the product's own code on a GPU no browser here can reach,
and how CPU Vulkan drivers (lavapipe) can run the kernels natively. It decodes the command
stream exactly as ``js/bridge.mjs`` does.
"""

from __future__ import annotations

from array import array
from collections.abc import Coroutine
from typing import Any, cast

import numpy as np

from ..errors import BackendFailure, NoAdapterError, OutOfDeviceMemory
from .protocol import (
    MAX_BIND_GROUPS,
    AdapterDescription,
    Clear,
    Copy,
    DeviceErrors,
    Dispatch,
    T,
    decode,
)

_LIMITS = ("maxBufferSize", "maxStorageBufferBindingSize", "maxComputeWorkgroupsPerDimension",
           "maxComputeInvocationsPerWorkgroup", "maxComputeWorkgroupSizeX",
           "maxComputeWorkgroupSizeY", "maxComputeWorkgroupSizeZ",
           "maxComputeWorkgroupStorageSize", "maxStorageBuffersPerShaderStage",
           "minStorageBufferOffsetAlignment")

_OPTIONAL_FEATURES = ("timestamp-query",)


def _kebab(name: str) -> str:
    return "".join(f"-{ch.lower()}" if ch.isupper() else ch for ch in name)


class NativeTransport:
    name = "native"
    # While a MAP_READ buffer of 64 MiB lives, every later submit through wgpu-native waits
    # about 4 ms longer on an NVIDIA H200 (16 MiB and less: no change); a download that large
    # pays for its own staging buffer instead.
    largest_kept_staging: int | None = 16 << 20

    def __init__(self, wgpu: Any, adapter: Any, device: Any):
        self._wgpu = wgpu
        self._adapter = adapter
        self._device = device
        self._buffers: dict[int, Any] = {}
        self._next_id = 1
        self._pipelines: list[Any] = []
        # As in js/bridge.mjs: one layout per list of buffer accesses (params at binding 0, a
        # dynamic offset), and bind groups reused while their buffers live (ids never recur).
        self._layouts: dict[tuple[str, ...], tuple[int, Any, Any]] = {}
        self._pipeline_layouts: list[tuple[int, Any, Any]] = []
        self._bind_groups: dict[tuple[int, ...], tuple[Any, tuple[int, ...]]] = {}
        self._bind_groups_of: dict[int, set[tuple[int, ...]]] = {}
        self._params_buffer = None
        self._lost: str | None = None
        self._rejected: list[tuple[int, str]] = []  # (stream, message), as the bridge reports
        # While kernels are timed: (query set, resolved timestamps buffer, count) per submit.
        self._timing: list[tuple[Any, Any, int]] | None = None
        from wgpu.backends.wgpu_native import ffi, lib

        self._set_bind_group = lib.wgpuComputePassEncoderSetBindGroup
        self._dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self._offset = ffi.new("uint32_t[1]")  # a dispatch's one dynamic offset
        self._poll = lib.wgpuDevicePoll
        self._null = ffi.NULL

    @classmethod
    def open(cls, power_preference: str | None, op: str) -> NativeTransport:
        try:
            import wgpu
        except ImportError:
            raise NoAdapterError(op, "the native transport needs the 'wgpu' package "
                                     "(pip install wgpu)") from None
        adapter = wgpu.gpu.request_adapter_sync(
            power_preference=power_preference or "high-performance")
        if adapter is None:
            raise NoAdapterError(op, "wgpu-native found no adapter")
        limits = {_kebab(n): adapter.limits[_kebab(n)] for n in _LIMITS
                  if not n.startswith("min")}
        features = [f for f in _OPTIONAL_FEATURES if f in adapter.features]
        try:
            device = adapter.request_device_sync(required_limits=limits,
                                                 required_features=features)
        except Exception as e:  # wgpu raises its own error types
            raise NoAdapterError(op, f"requestDevice failed: {e}") from None
        return cls(wgpu, adapter, device)

    def describe(self) -> AdapterDescription:
        info = self._adapter.info
        return {
            "vendor": info.get("vendor", ""), "architecture": info.get("architecture", ""),
            "device": info.get("device", ""), "description": info.get("description", ""),
            "isFallbackAdapter": info.get("adapter_type", "") == "CPU",
            "features": sorted(str(f) for f in self._device.features),
            "limits": {n: self._device.limits[_kebab(n)] for n in _LIMITS},
            "context": "native",
        }

    def take_errors(self) -> DeviceErrors:
        # wgpu-native raises errors as Python exceptions where they happen: a refused allocation
        # at create_buffer, a pipeline it cannot create at create_pipeline; a rejected submit
        # is kept for the next barrier, as the browser reports it.
        rejected, self._rejected = self._rejected, []
        return DeviceErrors(self._lost, [], [], rejected, [])

    def create_buffer(self, byte_length: int, staging: bool) -> int:
        usage = self._wgpu.BufferUsage
        flags = (usage.MAP_READ | usage.COPY_DST) if staging else \
            (usage.STORAGE | usage.COPY_SRC | usage.COPY_DST)
        try:
            buffer = self._device.create_buffer(size=byte_length, usage=flags)
        except self._wgpu.GPUOutOfMemoryError as e:
            raise OutOfDeviceMemory("allocate", f"the GPU refused {byte_length} bytes ({e}); "
                                                "free tensors you no longer need (del) or work "
                                                "in smaller pieces") from None
        buffer_id = self._next_id
        self._next_id += 1
        self._buffers[buffer_id] = buffer
        return buffer_id

    def destroy_buffer(self, buffer_id: int) -> None:
        buffer = self._buffers.pop(buffer_id, None)
        if buffer is not None:
            for key in list(self._bind_groups_of.pop(buffer_id, ())):
                self._drop_bind_group(key)
            buffer.destroy()

    def _layout_for(self, buffers: tuple[str, ...]) -> tuple[int, Any, Any]:
        layout = self._layouts.get(buffers)
        if layout is None:
            kind = self._wgpu.BufferBindingType
            compute = self._wgpu.ShaderStage.COMPUTE
            entries = [{"binding": 0, "visibility": compute,
                        "buffer": {"type": kind.read_only_storage, "has_dynamic_offset": True}}]
            entries += [{"binding": b + 1, "visibility": compute,
                         "buffer": {"type": kind.read_only_storage if access == "read"
                                    else kind.storage}}
                        for b, access in enumerate(buffers)]
            group_layout = self._device.create_bind_group_layout(entries=entries)
            layout = self._layouts[buffers] = (
                len(self._layouts), group_layout,
                self._device.create_pipeline_layout(bind_group_layouts=[group_layout]))
        return layout

    def _bind_group(self, layout: tuple[int, Any, Any], params_size: int,
                    buffer_ids: tuple[int, ...]) -> Any:
        key = (layout[0], params_size, *buffer_ids)
        cached = self._bind_groups.get(key)
        if cached is not None:
            return cached[0]
        entries = [{"binding": 0, "resource": {"buffer": self._params_buffer, "offset": 0,
                                               "size": params_size}}]
        entries += [{"binding": b + 1, "resource": {"buffer": self._buffers[buffer_id]}}
                    for b, buffer_id in enumerate(buffer_ids)]
        group = self._device.create_bind_group(layout=layout[1], entries=entries)
        if len(self._bind_groups) >= MAX_BIND_GROUPS:
            self._drop_bind_group(next(iter(self._bind_groups)))
        self._bind_groups[key] = (group, buffer_ids)
        for buffer_id in buffer_ids:
            self._bind_groups_of.setdefault(buffer_id, set()).add(key)
        return group

    def _drop_bind_group(self, key: tuple[int, ...]) -> None:
        entry = self._bind_groups.pop(key, None)
        if entry is not None:
            for buffer_id in entry[1]:
                self._bind_groups_of.get(buffer_id, set()).discard(key)

    def write_buffer(self, buffer_id: int, byte_offset: int, data: np.ndarray) -> None:
        self._device.queue.write_buffer(self._buffers[buffer_id], byte_offset, data)

    def create_pipeline(self, code: str, label: str, buffers: tuple[str, ...]) -> int:
        layout = self._layout_for(buffers)
        try:
            module = self._device.create_shader_module(code=code, label=label)
            pipeline = self._device.create_compute_pipeline(
                layout=layout[2], compute={"module": module, "entry_point": "main"}, label=label)
        except Exception as e:
            raise BackendFailure("pipeline", f"{label}: {e}") from None
        self._pipelines.append(pipeline)
        self._pipeline_layouts.append(layout)
        return len(self._pipelines) - 1

    async def create_pipeline_async(self, code: str, label: str,
                                    buffers: tuple[str, ...]) -> int:
        return self.create_pipeline(code, label, buffers)

    def submit(self, commands: array[int], params: array[int], stream: int) -> None:
        try:
            self._encode_and_submit(commands, params)
        except self._wgpu.GPUError as e:
            self._rejected.append((stream, f"{type(e).__name__}: {e}"))

    def _encode_and_submit(self, commands: array[int], params: array[int]) -> None:
        device = self._device
        words = np.frombuffer(params, np.uint32)
        if words.size:
            if self._params_buffer is None or self._params_buffer.size < words.nbytes:
                self._bind_groups.clear()  # they bound the old params buffer
                self._bind_groups_of.clear()
                self._params_buffer = device.create_buffer(
                    size=max(words.nbytes, 1 << 16),
                    usage=self._wgpu.BufferUsage.STORAGE | self._wgpu.BufferUsage.COPY_DST)
            device.queue.write_buffer(self._params_buffer, 0, words)
        encoder = device.create_command_encoder()
        commands_list = list(decode(commands))
        # Timed: each dispatch is a compute pass of its own, with a timestamp at its beginning
        # and end (a stream holds at most MAX_PENDING_DISPATCHES of them), resolved here.
        query_set = None
        if self._timing is not None:
            timed = sum(type(c) is Dispatch for c in commands_list)
            if timed:
                query_set = device.create_query_set(type="timestamp", count=2 * timed)
        passes = 0
        compute = None
        bound = None  # the pass's pipeline: a chain of one kernel sets it once
        # A long op chain is host-bound here: a dispatch's bind group and grid go straight to
        # wgpu-native's C functions, as wgpu's own methods do after their per-call error
        # capture (20 -> 9 us per dispatch with set_pipeline). Errors in a pass are reported
        # at its end and at finish(), which go through wgpu's methods and raise as before.
        set_bind_group, dispatch = self._set_bind_group, self._dispatch
        offset = self._offset
        for command in commands_list:
            if type(command) is Dispatch:
                pipeline = self._pipelines[command.pipeline]
                group = self._bind_group(self._pipeline_layouts[command.pipeline],
                                         command.params_count * 4, command.buffers)
                if compute is None:
                    compute = encoder.begin_compute_pass(timestamp_writes=None if query_set is None
                                                         else {"query_set": query_set,
                                                               "beginning_of_pass_write_index":
                                                                   2 * passes,
                                                               "end_of_pass_write_index":
                                                                   2 * passes + 1})
                    passes += 1
                    bound = None
                if pipeline is not bound:
                    compute.set_pipeline(pipeline)
                    bound = pipeline
                offset[0] = command.params_offset * 4
                set_bind_group(compute._internal, 0, group._internal, 1, offset)
                dispatch(compute._internal, *command.grid)
                if query_set is not None:
                    compute.end()
                    compute = None
                continue
            if compute is not None:
                compute.end()
                compute = None
            if type(command) is Copy:
                encoder.copy_buffer_to_buffer(self._buffers[command.src], command.src_offset,
                                              self._buffers[command.dst], command.dst_offset,
                                              command.size)
            elif type(command) is Clear:
                encoder.clear_buffer(self._buffers[command.buffer], command.offset, command.size)
        if compute is not None:
            compute.end()
        if query_set is not None and self._timing is not None:
            usage = self._wgpu.BufferUsage
            resolved = device.create_buffer(size=16 * passes,
                                            usage=usage.QUERY_RESOLVE | usage.COPY_SRC)
            encoder.resolve_query_set(query_set, 0, 2 * passes, resolved, 0)
            self._timing.append((query_set, resolved, 2 * passes))
        device.queue.submit([encoder.finish()])

    def begin_kernel_timing(self) -> None:
        self._timing = []

    async def end_kernel_timing(self) -> list[int]:
        # Vulkan's timestamp period is 1 ns on the adapters this lane runs (NVIDIA, lavapipe);
        # wgpu-native resolves raw ticks, and the wgpu package does not expose the period.
        timed, self._timing = self._timing or [], None
        durations: list[int] = []
        try:
            for _, resolved, count in timed:
                stamps = np.frombuffer(self._device.queue.read_buffer(resolved, 0, 8 * count),
                                       np.uint64)
                durations += [int(end) - int(begin) for begin, end in
                              zip(stamps[0::2], stamps[1::2])]
        except Exception as e:
            raise BackendFailure("kernel_timer", f"reading timestamps failed: {e}") from None
        finally:
            for query_set, resolved, _ in timed:
                query_set.destroy()
                resolved.destroy()
        return durations

    async def synchronize(self) -> None:
        # Blocks until every submitted command buffer has run (wgpuDevicePoll with wait). It
        # costs 3-6 us on an idle queue where a 4-byte readback (a staging buffer, a copy, a
        # submit and a map) cost 167-295 us on lavapipe; on_submitted_work_done_sync is broken
        # in wgpu 0.32.
        if self._device._internal:  # a destroyed device has nothing left to wait for
            self._poll(self._device._internal, True, self._null)

    async def map_staging(self, staging_id: int, op: str) -> None:
        try:
            self._buffers[staging_id].map_sync(self._wgpu.MapMode.READ)
        except Exception as e:
            raise BackendFailure(op, f"mapping failed: {e}") from None

    def copy_mapped(self, staging_id: int, dest: np.ndarray, byte_length: int) -> None:
        staging = self._buffers[staging_id]
        try:
            view = staging.read_mapped(0, (byte_length + 3) & ~3, copy=False)
            dest.view(np.uint8)[:] = np.frombuffer(view, np.uint8)[:byte_length]
        finally:
            staging.unmap()

    def destroy(self) -> None:
        for buffer in self._buffers.values():
            buffer.destroy()
        self._buffers.clear()
        self._device.destroy()

    def run_sync(self, coroutine: Coroutine[Any, Any, T], op: str, alternative: str) -> T:
        """Native calls never suspend: drive the coroutine to its end right here."""
        try:
            coroutine.send(None)
        except StopIteration as done:
            return cast(T, done.value)
        coroutine.close()
        raise BackendFailure(op, "a native transport call suspended unexpectedly")
