"""``disttorch.fft``: PyTorch's ``torch.fft`` (discrete Fourier transforms with gradients) on
NumPy's pocketfft. The functions live in ``disttorch/ops/fft_ops.py``; this package is their
public namespace."""

from ..ops.fft_ops import *  # noqa: F401,F403
from ..ops.fft_ops import __all__  # noqa: F401
from ..ops.out_arg import accept_declared_out as _accept_declared_out

_accept_declared_out(globals(), "fft_")  # out= writes into the given tensor, as PyTorch
