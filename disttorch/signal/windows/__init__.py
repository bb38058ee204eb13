"""``torch.signal.windows``: window functions of length ``M`` (``sym=True``: symmetric, for
filter design; ``sym=False``: periodic, for spectral analysis, the first ``M`` points of the
symmetric window of length ``M + 1``), computed in float64 and returned in ``dtype``."""

from .window_functions import (
    bartlett,
    blackman,
    cosine,
    exponential,
    gaussian,
    general_cosine,
    general_hamming,
    hamming,
    hann,
    kaiser,
    nuttall,
)

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]
