"""tenferro-web: tensor contractions on the GPU from Python in the browser (Pyodide + WebGPU).

    import numpy as np, tenferro_web as tw
    rt = await tw.WebGpuRuntime.create()
    a, b = rt.upload(np.random.rand(64, 32)), rt.upload(np.random.rand(32, 16))
    c = tw.dot_general(a, b, [1], [0])          # enqueued, returns a device tensor
    print(await c.download())                   # one readback through mapAsync

Device tensors are column-major (axis 0 fastest, batch axes last), as in tenferro-rs. Ops
enqueue work and return at once; ``await tensor.download()`` and ``await runtime.synchronize()``
are the host barriers (``*_sync`` variants block through JSPI where the browser allows it).
Everything outside the supported subset raises a typed error; nothing falls back to the CPU.
"""

from __future__ import annotations

from .api import (
    default_runtime,
    dot_general,
    dot_general_with_conj,
    einsum,
    einsum_path,
    einsum_sync,
    to_contiguous,
    transpose,
    webgpu_available,
)
from .config import CONFIG, event_domain_driver, transfer_between_runtimes
from .dtypes import DType
from .errors import (
    AxisOutOfBounds,
    AxisRoleConflict,
    BackendFailure,
    DeviceLost,
    DTypeMismatch,
    DuplicateAxis,
    ErrorKind,
    EventDomainUnavailable,
    ForeignDomain,
    HostAccessError,
    IntegerOverflow,
    InvalidArgument,
    JSPIUnavailable,
    LimitExceeded,
    MappingSpanError,
    NoAdapterError,
    OutOfDeviceMemory,
    RankMismatch,
    RuntimeStateError,
    ShapeMismatch,
    SubscriptError,
    TenferroError,
    UnsupportedDType,
    UnsupportedError,
    ValidationError,
    ViewOutOfBounds,
)
from .numpy_style import inner, matmul, outer, reduce_sum, sum, tensordot, trace
from .planning.einsum import EinsumPlan
from .runtime.device import AdapterInfo, RuntimeIdentity
from .runtime.runtime import KernelTimer, WebGpuRuntime
from .runtime.tensor import (
    AllocationDomainId,
    DeviceId,
    DeviceKind,
    MemoryKind,
    Placement,
    Tensor,
    TensorView,
)
from .unsupported import OPS as UNSUPPORTED_OPS

__version__ = "0.1.0"

__all__ = [
    # runtime and data model
    "WebGpuRuntime", "KernelTimer", "RuntimeIdentity", "AdapterInfo", "AllocationDomainId",
    "Tensor", "TensorView", "DType", "Placement", "MemoryKind", "DeviceKind", "DeviceId",
    "webgpu_available", "default_runtime",
    # ops
    "dot_general", "dot_general_with_conj", "transpose", "to_contiguous", "einsum",
    "einsum_sync", "einsum_path", "EinsumPlan", "matmul", "tensordot", "inner", "outer", "trace",
    "sum", "reduce_sum",
    # configuration (wasm: no event domains)
    "CONFIG", "event_domain_driver", "transfer_between_runtimes", "UNSUPPORTED_OPS",
    # errors
    "TenferroError", "ErrorKind", "ValidationError", "RankMismatch", "InvalidArgument",
    "AxisOutOfBounds", "DuplicateAxis", "AxisRoleConflict", "DTypeMismatch", "ShapeMismatch",
    "ViewOutOfBounds", "IntegerOverflow", "SubscriptError", "UnsupportedError",
    "UnsupportedDType", "LimitExceeded", "RuntimeStateError", "NoAdapterError",
    "JSPIUnavailable", "EventDomainUnavailable", "HostAccessError", "ForeignDomain",
    "MappingSpanError", "BackendFailure", "DeviceLost", "OutOfDeviceMemory",
    *UNSUPPORTED_OPS,
]

# The rejected rest of the backend surface: tw.add(...), tw.reduce_sum(...), ... raise
# UnsupportedError naming the op and what to do instead.
globals().update(UNSUPPORTED_OPS)
