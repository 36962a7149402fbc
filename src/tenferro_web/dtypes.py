"""The seven element types, their numpy counterparts and their device storage widths."""

from __future__ import annotations

import enum

import numpy as np

from .errors import UnsupportedDType


class DType(enum.Enum):
    """Element type of a tensor. ``value`` is the numpy dtype string (little-endian)."""

    F32 = "<f4"
    F64 = "<f8"
    I32 = "<i4"
    I64 = "<i8"
    BOOL = "|b1"
    C32 = "<c8"
    C64 = "<c16"

    # Members are singletons: identity hashing, in C (Enum's own hashes the name in Python, and
    # dtypes key every plan cache).
    __hash__ = object.__hash__

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(self.value)

    @property
    def itemsize(self) -> int:
        """Bytes per element on the device (Bool is one byte, C32 interleaved re/im f32)."""
        return _ITEMSIZES[self]

    @property
    def is_complex(self) -> bool:
        return self in (DType.C32, DType.C64)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def from_numpy(cls, dtype: np.dtype | type | str, op: str = "upload") -> DType:
        dt = np.dtype(dtype).newbyteorder("<") if np.dtype(dtype).itemsize > 1 else np.dtype(dtype)
        for member in cls:
            if member.numpy == dt:
                return member
        supported = ", ".join(f"{m.name} ({m.numpy.name})" for m in cls)
        raise UnsupportedDType(
            op, np.dtype(dtype).name,
            f"convert the array first, e.g. with .astype(np.float32); supported: {supported}",
        )


_ITEMSIZES = {member: member.numpy.itemsize for member in DType}
