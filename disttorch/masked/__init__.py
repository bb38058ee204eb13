"""``torch.masked``: reductions and normalisations that see only the elements where ``mask``
is True (``torch.masked.sum(x, 1, mask=m)``), and ``MaskedTensor`` (``masked_tensor(data,
mask)``): a tensor that carries its mask through elementwise ops, reductions and autograd."""

from .maskedtensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor
from .reductions import (
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logsumexp,
    mean,
    norm,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)

__all__ = [
    "MaskedTensor",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "as_masked_tensor",
    "cumprod",
    "cumsum",
    "is_masked_tensor",
    "log_softmax",
    "logsumexp",
    "masked_tensor",
    "mean",
    "norm",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]
