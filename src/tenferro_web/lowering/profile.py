"""What lowering needs to know of an adapter: its kernel family and the limits launches obey."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from ..errors import InvalidArgument, LimitExceeded

KERNEL_FAMILIES = ("auto", "cpu", "gpu")


@dataclass(frozen=True)
class AdapterProfile:
    """``cpu``: register-blocked kernels without barriers (best on CPU adapters: SwiftShader,
    lavapipe); otherwise workgroup-memory tiles (GPUs). ``subgroups``: the device has WGSL's
    subgroup operations (the ``subgroups`` feature). The limits are the device's."""

    cpu: bool
    max_workgroups_per_dimension: int = 65535
    max_storage_binding: int = 1 << 27
    max_buffer: int = 1 << 28
    max_workgroup_bytes: int = 16384
    subgroups: bool = False

    def __hash__(self) -> int:
        # Hashed once: the profile keys every lowering cache, at every op.
        try:
            return self.__dict__["_hash"]  # type: ignore[no-any-return]
        except KeyError:
            value = hash((self.cpu, self.max_workgroups_per_dimension, self.max_storage_binding,
                          self.max_buffer, self.max_workgroup_bytes, self.subgroups))
            object.__setattr__(self, "_hash", value)
            return value

    @classmethod
    def of(cls, is_cpu_adapter: bool, limits: Mapping[str, int], kernels: str = "auto",
           features: Collection[str] = ()) -> AdapterProfile:
        """``kernels`` overrides the adapter's family: "auto", "cpu" or "gpu"; ``features``
        are the device's."""
        if kernels not in KERNEL_FAMILIES:
            raise InvalidArgument("WebGpuRuntime.create", "kernels",
                                  f"{kernels!r} is not 'auto', 'cpu' or 'gpu'")
        return cls(cpu=is_cpu_adapter if kernels == "auto" else kernels == "cpu",
                   max_workgroups_per_dimension=limits["maxComputeWorkgroupsPerDimension"],
                   max_storage_binding=limits["maxStorageBufferBindingSize"],
                   max_buffer=limits["maxBufferSize"],
                   max_workgroup_bytes=limits["maxComputeWorkgroupStorageSize"],
                   subgroups="subgroups" in features)

    def grid(self, op: str, groups: int) -> tuple[int, int, int]:
        """Spread ``groups`` workgroups over x and y; kernels decode ``y * nx + x``."""
        limit = self.max_workgroups_per_dimension
        if groups <= limit:
            return (max(groups, 1), 1, 1)
        rows = -(-groups // limit)
        if rows > limit:
            raise LimitExceeded(op, "maxComputeWorkgroupsPerDimension", groups, limit * limit,
                                "split the problem into smaller tensors")
        return (limit, rows, 1)

    def check_binding(self, op: str, byte_len: int) -> int:
        """The size of a storage buffer holding ``byte_len`` bytes (whole 16-byte units), or
        LimitExceeded when the device cannot bind one that large."""
        size = binding_size(byte_len)
        for name, limit in (("maxStorageBufferBindingSize", self.max_storage_binding),
                            ("maxBufferSize", self.max_buffer)):
            if size > limit:
                raise LimitExceeded(op, name, size, limit, "split the tensor into smaller "
                                    "ones, or use an adapter with a larger limit")
        return size


_PROFILE_IDS: dict[AdapterProfile, int] = {}


def profile_id(profile: AdapterProfile) -> int:
    """One small integer per distinct profile: the per-call program caches key on it (an int
    hashes in C, a profile in Python, and those caches are looked up at every op)."""
    return _PROFILE_IDS.setdefault(profile, len(_PROFILE_IDS))


# Every storage buffer is a whole number of 16-byte units, so a kernel may view any of them as
# array<vec4<f32>> without a partial last element.
BINDING_ALIGN = 16


def binding_size(byte_len: int) -> int:
    return max(BINDING_ALIGN, -(-byte_len // BINDING_ALIGN) * BINDING_ALIGN)
