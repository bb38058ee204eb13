"""Memory layouts: ``disttorch.strided`` (dense arrays), ``disttorch.sparse_coo``, the
compressed sparse layouts ``sparse_csr``, ``sparse_csc``, ``sparse_bsr``, ``sparse_bsc``, and
``disttorch.jagged`` (nested tensors), as ``Tensor.layout`` reports them."""

from __future__ import annotations

from ._public_name import package_name

__all__ = [
    "jagged",
    "layout",
    "sparse_bsc",
    "sparse_bsr",
    "sparse_coo",
    "sparse_csc",
    "sparse_csr",
    "strided",
]


class layout:
    """How a tensor's elements are stored, e.g. ``disttorch.strided``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{package_name()}.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # pickles as the global ``torch.strided``


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")


def _by_name(name: str) -> layout:
    """The layout named ``name``: how disttorch pickled layouts before they pickled as
    PyTorch's globals (such pickles still load)."""
    return {
        lay.name: lay for lay in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged)
    }[name]
