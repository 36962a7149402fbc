"""The rest of the backend surface, rejected explicitly: WebGPU here runs transfers,
dot_general, transpose, compaction, einsum and what is built on them (matmul, tensordot,
inner, outer, trace, sum, reduce_sum). Each function raises ``UnsupportedError``
naming the op and what to do instead; nothing falls back to the CPU.
"""

from __future__ import annotations

from collections.abc import Callable

from .errors import UnsupportedError

FAMILIES: dict[str, tuple[str, ...]] = {
    "elementwise": ("add", "sub", "mul", "div", "neg", "conj", "abs", "sign", "maximum",
                    "minimum", "compare", "select", "clamp", "elementwise_into"),
    "analytic": ("exp", "log", "sin", "cos", "tanh", "sqrt", "rsqrt", "pow", "expm1", "log1p"),
    "reduction": ("reduce_prod", "reduce_max", "reduce_min"),
    "reshape/broadcast": ("reshape", "broadcast_in_dim", "cast", "extract_diagonal",
                          "embed_diagonal", "tril", "triu"),
    "indexing": ("gather", "scatter", "slice", "dynamic_slice", "dynamic_update_slice", "pad",
                 "concatenate", "reverse"),
    "linear algebra": ("cholesky", "qr", "svd", "eigh", "lu", "solve", "fft"),
    "strided copy into a caller's destination": ("copy_into",),
}


def _rejecting(name: str, family: str) -> Callable[..., None]:
    def op(*args: object, **kwargs: object) -> None:
        raise UnsupportedError(
            name,
            f"{family} op {name!r} is not implemented on WebGPU; download the tensors with "
            "`await tensor.download()` and use numpy (or another backend) for it")

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Not available on WebGPU ({family}): raises UnsupportedError."
    return op


OPS: dict[str, Callable[..., None]] = {
    name: _rejecting(name, family) for family, names in FAMILIES.items() for name in names
}
