"""``torch.masked``: reductions and normalisations that see only the elements where ``mask``
is True (``torch.masked.sum(x, 1, mask=m)``). ``MaskedTensor`` is not provided."""

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
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logsumexp",
    "mean",
    "norm",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]
