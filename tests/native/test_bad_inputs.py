"""Every public entry point given bad input: the error class, the words of its message, and
afterwards every operand downloads unchanged (native lane; the browser lane runs the same code
above the transport)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np
import pytest

import tenferro_web as tw

F32 = np.arange(6, dtype=np.float32).reshape(2, 3)
B32 = np.arange(12, dtype=np.float32).reshape(3, 4)
C32 = (np.arange(9) + 1j).astype(np.complex64).reshape(3, 3)


@pytest.fixture(scope="module")
def k():
    rt = tw.WebGpuRuntime.native(kernels="cpu")
    other = tw.WebGpuRuntime.native(kernels="cpu")
    closed = tw.WebGpuRuntime.native(kernels="cpu")
    ctx = SimpleNamespace(
        rt=rt, other=other, a=rt.upload(F32), b=rt.upload(B32), c=rt.upload(C32),
        f64=rt.upload(F32.astype(np.float64)), i32=rt.upload(np.arange(3, dtype=np.int32)),
        i64=rt.upload(np.arange(3, dtype=np.int64)), mask=rt.upload(np.array([True, False])),
        foreign=other.upload(B32), dead=closed.upload(B32), one=rt.upload(np.ones(1, np.float32)))
    closed.close()
    yield ctx
    rt.close()
    other.close()


def run(coroutine):
    return asyncio.run(coroutine)


def dg(*args):
    return tw.dot_general(*args)


ROWS = [
    # dot_general: upstream's validation order, then residency, then limits
    ("dg axis out of bounds", lambda k: dg(k.a, k.b, [2], [0]), tw.AxisOutOfBounds,
     "dot_general: lhs_contracting_dims axis 2 is out of bounds for rank 2"),
    ("dg negative axis", lambda k: dg(k.a, k.b, [-1], [0]), tw.AxisOutOfBounds, "axis -1"),
    ("dg duplicate axis", lambda k: dg(k.a, k.b, [1, 1], [0, 0]), tw.DuplicateAxis,
     "axis 1 appears more than once in lhs_contracting_dims"),
    ("dg role conflict", lambda k: dg(k.a, k.b, [1], [0], [1], [0]), tw.AxisRoleConflict,
     "lhs contracting and lhs batch"),
    ("dg contracting counts", lambda k: dg(k.a, k.b, [1], []), tw.InvalidArgument,
     "contracting dim counts differ (1 vs 0)"),
    ("dg batch counts", lambda k: dg(k.a, k.b, [], [], [0], []), tw.InvalidArgument,
     "batch dim counts differ"),
    ("dg contracted sizes", lambda k: dg(k.a, k.b, [0], [0]), tw.ShapeMismatch,
     "ContractedDimensions"),
    ("dg dtype mismatch", lambda k: dg(k.a, k.c, [1], [0], [0], [1]), tw.DTypeMismatch,
     "expected F32, got C32"),
    ("dg batch sizes f32", lambda k: dg(k.a, k.b, [1], [0], [0], [1]), tw.ShapeMismatch,
     "IncompatibleShapes"),
    ("dg float axis", lambda k: dg(k.a, k.b, [1.0], [0]), tw.InvalidArgument,
     "'lhs_contracting_dims': 1.0 is not an integer"),
    ("dg bool axis", lambda k: dg(k.a, k.b, [True], [0]), tw.InvalidArgument, "is a bool"),
    ("dg string dims", lambda k: dg(k.a, k.b, "1", [0]), tw.InvalidArgument,
     "not a sequence of integers"),
    ("dg None dims", lambda k: dg(k.a, k.b, None, [0]), tw.InvalidArgument,
     "None is not a sequence"),
    ("dg F64", lambda k: dg(k.f64, k.f64, [1], [1]), tw.UnsupportedDType,
     "dtype F64 on WebGPU; WebGPU GEMM runs F32 and C32 only (WGSL has no f64)"),
    ("dg I32", lambda k: dg(k.i32, k.i32, [0], [0]), tw.UnsupportedDType,
     "integer and bool products are not implemented"),
    ("dg Bool", lambda k: dg(k.mask, k.mask, [0], [0]), tw.UnsupportedDType, "dtype BOOL"),
    ("dg host operand", lambda k: dg(F32, k.b, [1], [0]), tw.RuntimeStateError,
     "got host numpy.ndarray; upload it first with runtime.upload(array)"),
    ("dg host f64 operand", lambda k: dg(F32.astype(np.float64), k.b, [1], [0]),
     tw.RuntimeStateError, "upload it first"),
    ("dg list operand", lambda k: dg([[1.0]], k.b, [1], [0]), tw.InvalidArgument,
     "expected a tenferro_web Tensor or TensorView, got list"),
    ("dg foreign runtime", lambda k: dg(k.a, k.foreign, [1], [0]), tw.ForeignDomain,
     "download it and upload it to this runtime"),
    ("dg closed runtime", lambda k: dg(k.dead, k.dead, [0], [0]), tw.RuntimeStateError,
     "this runtime was closed; create a new one"),
    ("dg K past 32 bits", lambda k: dg(k.one.view((1, 2**33), (0, 0), 0),
                                       k.one.view((2**33, 1), (0, 0), 0), [1], [0]),
     tw.LimitExceeded, "32-bit kernel parameter"),
    ("dg output past the binding limit",
     lambda k: dg(k.one.view((40_000, 1), (0, 0), 0), k.one.view((1, 40_000), (0, 0), 0),
                  [1], [0]), tw.LimitExceeded, "maxStorageBufferBindingSize"),
    ("dg with conj bad axis", lambda k: tw.dot_general_with_conj(k.c, k.c, [5], [0]),
     tw.AxisOutOfBounds, "axis 5"),
    # transpose and to_contiguous
    ("transpose perm length", lambda k: tw.transpose(k.a, [0]), tw.RankMismatch,
     "transpose: permutation length mismatch: expected 2, got 1"),
    ("transpose perm bounds", lambda k: tw.transpose(k.a, [0, 2]), tw.AxisOutOfBounds,
     "permutation axis 2"),
    ("transpose perm duplicate", lambda k: tw.transpose(k.a, [1, 1]), tw.DuplicateAxis,
     "appears more than once in permutation"),
    ("transpose float perm", lambda k: tw.transpose(k.a, [0.0, 1]), tw.InvalidArgument,
     "0.0 is not an integer"),
    ("transpose F64", lambda k: tw.transpose(k.f64), tw.UnsupportedDType,
     "transpose: does not support dtype F64"),
    ("transpose I64", lambda k: tw.transpose(k.i64), tw.UnsupportedDType, "dtype I64"),
    ("transpose host", lambda k: tw.transpose(F32), tw.RuntimeStateError, "upload it first"),
    ("transpose closed", lambda k: tw.transpose(k.dead), tw.RuntimeStateError, "was closed"),
    ("transpose not a tensor", lambda k: tw.transpose("x"), tw.InvalidArgument, "got str"),
    ("to_contiguous F64", lambda k: tw.to_contiguous(k.f64), tw.UnsupportedDType,
     "to_contiguous: does not support dtype F64"),
    ("to_contiguous host", lambda k: tw.to_contiguous(F32), tw.RuntimeStateError,
     "upload it first"),
    ("to_contiguous foreign view", lambda k: tw.to_contiguous(k.dead.view((2,), (1,), 0)),
     tw.RuntimeStateError, "was closed"),
    # views
    ("view float stride", lambda k: k.a.view((2, 2), (1.5, 3), 0), tw.InvalidArgument,
     "'strides': 1.5 is not an integer"),
    ("view None offset", lambda k: k.a.view((2, 2), (1, 2), None), tw.InvalidArgument,
     "'offset': None is not an integer"),
    ("view out of bounds", lambda k: k.a.view((2, 3), (1, 2), 1), tw.ViewOutOfBounds,
     "reaches elements 1..=6 of an allocation of 6"),
    ("view rank mismatch", lambda k: k.a.view((2, 3), (1,), 0), tw.RankMismatch,
     "shape/strides rank mismatch"),
    ("view negative extent", lambda k: k.a.view((2, -1), (1, 2), 0), tw.InvalidArgument,
     "extent -1 of axis 1 is negative"),
    ("view overflowing span", lambda k: k.a.view((4, 4), (2**62, 2**62), 0),
     tw.IntegerOverflow, "overflows isize"),
    ("transpose_view duplicate", lambda k: k.a.transpose_view([0, 0]), tw.DuplicateAxis,
     "permutation"),
    # uploads
    ("upload ragged", lambda k: k.rt.upload([[1.0, 2.0], [3.0]]), tw.InvalidArgument,
     "upload: invalid argument 'array': numpy cannot make a regular array"),
    ("upload float16", lambda k: k.rt.upload(np.zeros(3, np.float16)), tw.UnsupportedDType,
     "upload: does not support dtype float16"),
    ("upload uint8", lambda k: k.rt.upload(np.zeros(3, np.uint8)), tw.UnsupportedDType,
     "dtype uint8"),
    ("upload strings", lambda k: k.rt.upload(np.array(["ab"])), tw.UnsupportedDType, "dtype str64"),
    ("upload objects", lambda k: k.rt.upload([object()]), tw.UnsupportedDType, "object"),
    ("upload to closed", lambda k: k.dead.runtime.upload(F32), tw.RuntimeStateError,
     "was closed"),
    # downloads
    ("span negative", lambda k: run(k.b.download_span(-4, 4)), tw.InvalidArgument,
     "'byte_offset': -4 is negative"),
    ("span past the end", lambda k: run(k.b.download_span(40, 12)), tw.MappingSpanError,
     "40..52 exceeds the allocation of 48 bytes"),
    ("span unaligned", lambda k: run(k.b.download_span(2, 4)), tw.MappingSpanError,
     "not element-aligned"),
    ("span float", lambda k: run(k.b.download_span(4.0, 4)), tw.InvalidArgument,
     "4.0 is not an integer"),
    ("download a view", lambda k: run(k.a.view((2,), (1,), 0).download()), tw.UnsupportedError,
     "to_contiguous(view) first"),
    ("download closed", lambda k: k.dead.download_sync(), tw.RuntimeStateError, "was closed"),
    # einsum
    ("einsum bad character", lambda k: tw.einsum_sync("i$,jk", k.a, k.b), tw.SubscriptError,
     "invalid subscript character '$' (labels are a-z and A-Z) at position 1"),
    ("einsum operand count", lambda k: tw.einsum_sync("ij,jk,kl", k.a, k.b),
     tw.SubscriptError, "3 operand subscript(s) for 2 operand(s)"),
    ("einsum repeated output", lambda k: tw.einsum_sync("ij,jk->ikk", k.a, k.b),
     tw.SubscriptError, "appears more than once at position 9"),
    ("einsum extent mismatch", lambda k: tw.einsum_sync("ij,ik->jk", k.a, k.b),
     tw.ShapeMismatch, "label 'i' has extents 2 and 3"),
    ("einsum unknown optimize", lambda k: tw.einsum_sync("ij,jk", k.a, k.b, optimize="fast"),
     tw.InvalidArgument, "'fast' is not True, False, one of"),
    ("einsum bad path", lambda k: tw.einsum_sync("ij,jk", k.a, k.b, optimize=[(0, 2)]),
     tw.InvalidArgument, "not one or two distinct positions below 2"),
    ("einsum bad memory limit",
     lambda k: tw.einsum_sync("ij,jk", k.a, k.b, optimize=("greedy", -1)),
     tw.InvalidArgument, "memory limit -1"),
    ("einsum dtype mismatch", lambda k: tw.einsum_sync("ij,jk", k.a, k.c), tw.DTypeMismatch,
     "expected F32, got C32"),
    ("einsum F64", lambda k: tw.einsum_sync("ij,jk", k.f64, k.f64.transpose_view()),
     tw.UnsupportedDType, "einsum: does not support dtype F64"),
    ("einsum sum of I32", lambda k: tw.einsum_sync("i->", k.i32), tw.UnsupportedDType,
     "summing label(s) 'i' runs F32 and C32 on WebGPU"),
    ("einsum host operand", lambda k: tw.einsum_sync("ij,jk", F32, k.b), tw.RuntimeStateError,
     "upload it first"),
    ("einsum host f64 operand", lambda k: tw.einsum_sync("ij,jk", F32.astype(np.float64), k.b),
     tw.RuntimeStateError, "upload it first"),
    ("einsum foreign", lambda k: tw.einsum_sync("ij,jk", k.a, k.foreign), tw.ForeignDomain,
     "ForeignDomain"),
    ("einsum subscripts type", lambda k: tw.einsum_sync(3, k.a), tw.InvalidArgument,
     "expected a str, got int"),
    ("einsum_path bad character", lambda k: tw.einsum_path("i.j", F32), tw.SubscriptError,
     "'.' must be part of an ellipsis"),
    # runtimes, configuration and the unsupported rest of the backend
    ("native bad kernels", lambda k: tw.WebGpuRuntime.native(kernels="fast"),
     tw.InvalidArgument, "'fast' is not 'auto', 'cpu' or 'gpu'"),
    ("native negative pool cap",
     lambda k: tw.WebGpuRuntime.native(storage_pool_bytes=-1), tw.InvalidArgument,
     "WebGpuRuntime.native: invalid argument 'storage_pool_bytes': must be >= 0 bytes, got -1"),
    ("native float pool cap",
     lambda k: tw.WebGpuRuntime.native(staging_pool_bytes=1.5e6), tw.InvalidArgument,
     "'staging_pool_bytes': 1500000.0 is not an integer"),
    ("create_sync outside Pyodide", lambda k: tw.WebGpuRuntime.create_sync(),
     tw.RuntimeStateError, "await WebGpuRuntime.create()"),
    ("add", lambda k: tw.add(k.a, k.a), tw.UnsupportedError,
     "add: unsupported operation on WebGPU: elementwise op 'add'"),
    ("reduce_prod", lambda k: tw.reduce_prod(k.a), tw.UnsupportedError, "reduction op"),
    ("svd", lambda k: tw.svd(k.a), tw.UnsupportedError, "linear algebra op 'svd'"),
    ("event domains", lambda k: tw.event_domain_driver(k.rt), tw.EventDomainUnavailable,
     "no event-domain module"),
    ("cross-runtime transfer", lambda k: tw.transfer_between_runtimes(k.a, k.other),
     tw.EventDomainUnavailable, "download it and upload it there"),
]


@pytest.mark.parametrize("name, call, error, words", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_gets_a_typed_error_and_loses_nothing(k, name, call, error, words):
    with pytest.raises(error) as info:
        call(k)
    assert words in str(info.value), str(info.value)
    assert isinstance(info.value, tw.TenferroError)
    for tensor, host in ((k.a, F32), (k.b, B32), (k.c, C32), (k.foreign, B32)):
        np.testing.assert_array_equal(tensor.download_sync(), host)


def test_the_table_is_wide():
    assert len(ROWS) >= 60
