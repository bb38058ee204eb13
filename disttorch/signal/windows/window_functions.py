"""The window functions of ``torch.signal.windows`` (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import _dtype
from ..._tensor import Tensor, _check_device

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


def _window(
    name: str,
    M: int,
    sym: bool,
    dtype: Any,
    device: Any,
    requires_grad: bool,
    points: Callable[[np.ndarray, int], np.ndarray],
) -> Tensor:
    """``points(n, L)`` gives the symmetric window of length ``L`` at ``n = 0..L-1``."""
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)):
        raise TypeError(f"{name}: M must be an int, got {type(M).__name__}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if dtype is not None and not dtype.is_floating_point:
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    if device is not None:
        _check_device(device)
    np_dt = _dtype.to_numpy(dtype if dtype is not None else _dtype.get_default_dtype())
    if M <= 1:
        values = np.ones(M)
    else:
        length = M if sym else M + 1
        values = points(np.arange(length, dtype=np.float64), length)[:M]
    t = Tensor._make(values.astype(np_dt))
    return t.requires_grad_(True) if requires_grad else t


def general_cosine(
    M: int,
    *,
    a: Sequence[float],
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``w[n] = sum_k (-1)^k a[k] cos(2 pi k n / (M - 1))``."""
    if not isinstance(a, (list, tuple)) or not a:
        raise TypeError(f"general_cosine: coefficients a must be a non-empty list or tuple, got {a!r}")
    coeffs = np.asarray(a, dtype=np.float64)

    def points(n: np.ndarray, L: int) -> np.ndarray:
        k = np.arange(len(coeffs))[:, None]
        return ((-1.0) ** k * coeffs[:, None] * np.cos(2 * np.pi * k * n / (L - 1))).sum(0)

    return _window("general_cosine", M, sym, dtype, device, requires_grad, points)


def general_hamming(
    M: int,
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``w[n] = alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(
        M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, device=device, requires_grad=requires_grad
    )


def hann(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hann window: ``general_hamming`` with ``alpha = 0.5``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def hamming(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hamming window: ``general_hamming`` with ``alpha = 0.54``."""
    return general_hamming(M, alpha=0.54, sym=sym, dtype=dtype, device=device, requires_grad=requires_grad)


def blackman(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Blackman window: ``general_cosine`` with ``a = (0.42, 0.5, 0.08)``."""
    return general_cosine(
        M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, device=device, requires_grad=requires_grad
    )


def nuttall(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(
        M,
        a=[0.3635819, 0.4891775, 0.1365995, 0.0106411],
        sym=sym,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
    )


def bartlett(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The triangular window ``w[n] = 1 - |2 n / (M - 1) - 1|``."""
    return _window(
        "bartlett", M, sym, dtype, device, requires_grad, lambda n, L: 1.0 - np.abs(2.0 * n / (L - 1) - 1.0)
    )


def cosine(
    M: int,
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The cosine (sine) window ``w[n] = sin(pi (n + 1/2) / M)``."""
    return _window("cosine", M, sym, dtype, device, requires_grad, lambda n, L: np.sin(np.pi * (n + 0.5) / L))


def gaussian(
    M: int,
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``w[n] = exp(-((n - (M - 1) / 2) / std)^2 / 2)``."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _window(
        "gaussian",
        M,
        sym,
        dtype,
        device,
        requires_grad,
        lambda n, L: np.exp(-(((n - (L - 1) / 2.0) / std) ** 2) / 2.0),
    )


def exponential(
    M: int,
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``w[n] = exp(-|n - center| / tau)``, ``center`` defaulting to the middle ``(M - 1) / 2``
    (a center may only be given for a periodic window, ``sym=False``)."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def points(n: np.ndarray, L: int) -> np.ndarray:
        c = (L - 1) / 2.0 if center is None else center
        return np.exp(-np.abs(n - c) / tau)

    return _window("exponential", M, sym, dtype, device, requires_grad, points)


def kaiser(
    M: int,
    *,
    beta: float = 12.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``w[n] = I0(beta sqrt(1 - (2 n / (M - 1) - 1)^2)) / I0(beta)``."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window(
        "kaiser",
        M,
        sym,
        dtype,
        device,
        requires_grad,
        lambda n, L: (
            np.i0(beta * np.sqrt(np.clip(1 - (2.0 * n / (L - 1) - 1.0) ** 2, 0, None))) / np.i0(beta)
        ),
    )
