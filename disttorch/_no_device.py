"""The errors a CPU-only build raises when a program reaches for an accelerator.

One place for the wording so ``torch.cuda``, ``torch.xpu``, ``torch.mps``, ``torch.mtia``,
``torch.accelerator`` and the tensor/module methods say the same thing.
"""

from __future__ import annotations

from typing import NoReturn

from ._tensor import _NO_ACCELERATOR

HINT = (
    " (disttorch computes on the CPU only, like a CPU build of PyTorch: use device='cpu'; "
    "torch.cuda.is_available() and torch.accelerator.is_available() are False)"
)


def no_cuda() -> NoReturn:
    """AssertionError, as ``torch.cuda`` functions raise on a CPU build."""
    raise AssertionError("Torch not compiled with CUDA enabled" + HINT)


def no_xpu() -> NoReturn:
    """AssertionError, as ``torch.xpu`` functions raise on a CPU build."""
    raise AssertionError("Torch not compiled with XPU enabled" + HINT)


def no_mps(what: str) -> NoReturn:
    """RuntimeError, as ``torch.mps`` functions raise without the MPS backend."""
    raise RuntimeError(f"Cannot execute {what} without MPS backend." + HINT)


def no_mtia(what: str) -> NoReturn:
    """RuntimeError, as ``torch.mtia`` functions raise without the MTIA backend."""
    raise RuntimeError(f"Cannot execute {what} without MTIA backend." + HINT)


def no_accelerator() -> NoReturn:
    """RuntimeError, as ``torch.accelerator`` functions raise with no accelerator."""
    raise RuntimeError(_NO_ACCELERATOR + HINT)
