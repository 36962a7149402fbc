"""The error taxonomy and the dtype mapping."""

import numpy as np
import pytest

import tenferro_web as tw
from tenferro_web.runtime.tensor import mapping_range


def test_kinds_follow_upstream():
    assert tw.ValidationError.kind is tw.ErrorKind.VALIDATION
    assert tw.UnsupportedError.kind is tw.ErrorKind.UNSUPPORTED
    assert tw.UnsupportedDType.kind is tw.ErrorKind.UNSUPPORTED
    assert tw.LimitExceeded.kind is tw.ErrorKind.UNSUPPORTED
    assert tw.RuntimeStateError.kind is tw.ErrorKind.RUNTIME_STATE
    assert tw.ForeignDomain.kind is tw.ErrorKind.RUNTIME_STATE
    assert tw.BackendFailure.kind is tw.ErrorKind.BACKEND_FAILURE
    assert issubclass(tw.DeviceLost, tw.BackendFailure)
    assert issubclass(tw.JSPIUnavailable, tw.RuntimeStateError)
    assert issubclass(tw.ForeignDomain, tw.HostAccessError)


def test_messages_start_with_the_op():
    err = tw.UnsupportedDType("webgpu_transpose", tw.DType.F64, "do this instead")
    assert str(err) == ("webgpu_transpose: does not support dtype F64 on WebGPU; "
                        "do this instead")
    assert err.op == "webgpu_transpose" and err.dtype is tw.DType.F64
    limit = tw.LimitExceeded("upload", "maxBufferSize", 10, 5, "split it")
    assert "adapter's maxBufferSize is 5" in str(limit) and limit.limit == "maxBufferSize"


@pytest.mark.parametrize("np_dtype,dtype,itemsize", [
    (np.float32, tw.DType.F32, 4), (np.float64, tw.DType.F64, 8), (np.int32, tw.DType.I32, 4),
    (np.int64, tw.DType.I64, 8), (np.bool_, tw.DType.BOOL, 1), (np.complex64, tw.DType.C32, 8),
    (np.complex128, tw.DType.C64, 16), (">f4", tw.DType.F32, 4),
])
def test_numpy_mapping(np_dtype, dtype, itemsize):
    assert tw.DType.from_numpy(np_dtype) is dtype
    assert dtype.itemsize == itemsize


def test_other_numpy_dtypes_are_refused_with_advice():
    with pytest.raises(tw.UnsupportedDType, match=r"astype\(np.float32\)"):
        tw.DType.from_numpy(np.float16)


def test_mapping_range_checks_in_upstream_order():
    assert mapping_range("m", 8, 8, 32, 4) == range(8, 16)
    with pytest.raises(tw.MappingSpanError, match="overflows"):
        mapping_range("m", 2**63, 8, 32, 4)
    with pytest.raises(tw.MappingSpanError, match="exceeds the allocation"):
        mapping_range("m", 30, 4, 32, 4)
    with pytest.raises(tw.MappingSpanError, match="not element-aligned"):
        mapping_range("m", 4, 6, 32, 4)
    with pytest.raises(tw.InvalidArgument):
        mapping_range("m", -1, 4, 32, 4)


def test_host_python_has_no_browser_webgpu():
    import asyncio

    assert asyncio.run(tw.webgpu_available()) is False
    with pytest.raises(tw.NoAdapterError, match="not Pyodide"):
        asyncio.run(tw.WebGpuRuntime.create())


def test_unsupported_ops_need_no_device_to_refuse():
    with pytest.raises(tw.UnsupportedError, match="^add: unsupported operation"):
        tw.add(1, 2)


def test_wasm_config_is_visible_without_a_browser():
    assert tw.CONFIG.event_domains is False
    with pytest.raises(tw.EventDomainUnavailable):
        tw.event_domain_driver(None)


def test_errors_survive_pickling():
    import pickle

    for err in (tw.UnsupportedDType("op", tw.DType.F64, "advice"),
                tw.SubscriptError("einsum", "ij,j?", 4, "bad"),
                tw.ForeignDomain("op", tw.AllocationDomainId(1), tw.AllocationDomainId(2))):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err) and back.op == err.op
        assert back.__dict__ == err.__dict__
