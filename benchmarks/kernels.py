"""Kernel benchmarks: each pure-NumPy kernel of ``disttorch/kernels`` against the plain NumPy
spelling it replaces and, when installed, PyTorch's own CPU kernel.

Run by hand: ``python benchmarks/kernels.py [--repeat N]``. Prints one table, milliseconds
per call (CPU time of this process, the minimum over rounds in which the contenders take
turns; one BLAS and PyTorch thread), and the ratios kernel / NumPy and kernel / PyTorch.

- erf: ``kernels.erf`` on 1M float32 (NumPy has no erf: the NumPy column is
  ``math.erf`` through ``np.vectorize`` on a 10x smaller array, scaled up).
- gelu: exact GELU and its derivative on 1M float32 (``kernels.gelu``), against the
  tanh-free formula in NumPy with the erf above, and PyTorch's ``gelu`` forward.
- relu: ``max(x, 0)`` on 1M float32 against ``np.maximum(x, 0)`` and ``torch.relu``.
- column sum: ``(4096, 512)`` float32 summed over rows against ``a.sum(0)``.
- conv 3x3: a stride-1 3x3 convolution, 16 images of 32 channels at 32x32 to 32 channels
  (``kernels.conv_shifted``) against im2col with ``kernels.windows`` and a matmul, and
  PyTorch's ``conv2d``.
- max pool 2x2: the maximum over ``kernels.windows`` of the same input against a reshape.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from machine import KEEP_FLAG, describe, prepare_blas

prepare_blas()  # one thread, OpenBLAS's own kernels: before NumPy and PyTorch load

import numpy as np
from ops import best_times

from disttorch.kernels import conv_shifted
from disttorch.kernels.erf import erf
from disttorch.kernels.gelu import gelu_with_derivative
from disttorch.kernels.reductions import column_sum
from disttorch.kernels.relu import relu
from disttorch.kernels.windows import pad_spatial, windows

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # PyTorch is an optional peer
    torch = None

RNG = np.random.default_rng(0)


def _numpy_erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _numpy_gelu(x: np.ndarray) -> tuple:
    cdf = 0.5 * (1 + erf(x / math.sqrt(2)))
    return x * cdf, cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _im2col_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    n, c, h, wd = x.shape
    cols = windows(pad_spatial(x, ((1, 1), (1, 1))), (3, 3), (1, 1), (1, 1), (h, wd))
    cols = cols.reshape(n, c * 9, h * wd)
    return np.matmul(w.reshape(w.shape[0], -1), cols).reshape(n, w.shape[0], h, wd)


def cases() -> dict:
    """name -> (kernel, NumPy spelling, NumPy scale, PyTorch spelling or None)."""
    big = RNG.normal(size=1_000_000).astype(np.float32)
    small = big[:100_000]
    mat = RNG.normal(size=(4096, 512)).astype(np.float32)
    x = RNG.normal(size=(16, 32, 32, 32)).astype(np.float32)
    w = RNG.normal(size=(32, 32, 3, 3)).astype(np.float32)
    geo = SimpleNamespace(pads=((1, 1), (1, 1)), dilation=(1, 1), groups=1, kernel=(3, 3))
    t = (lambda a: torch.from_numpy(a)) if torch else None
    return {
        "erf 1M": (lambda: erf(big), lambda: _numpy_erf(small), 10, t and (lambda: torch.erf(t(big)))),
        "gelu+grad 1M": (
            lambda: gelu_with_derivative(big, True),
            lambda: _numpy_gelu(big),
            1,
            t and (lambda: torch.nn.functional.gelu(t(big))),
        ),
        "relu 1M": (lambda: relu(big), lambda: np.maximum(big, 0), 1, t and (lambda: torch.relu(t(big)))),
        "column sum 4096x512": (
            lambda: column_sum(mat),
            lambda: mat.sum(0),
            1,
            t and (lambda: t(mat).sum(0)),
        ),
        "conv 3x3 16x32x32x32": (
            lambda: conv_shifted.conv(x, w, geo),
            lambda: _im2col_conv(x, w),
            1,
            t and (lambda: torch.nn.functional.conv2d(t(x), t(w), padding=1)),
        ),
        "max pool 2x2": (
            lambda: windows(x, (2, 2), (2, 2), (1, 1), (16, 16)).max(axis=(2, 3)),
            lambda: x.reshape(16, 32, 16, 2, 16, 2).max(axis=(3, 5)),
            1,
            t and (lambda: torch.nn.functional.max_pool2d(t(x), 2)),
        ),
    }


def _fmt(v: float | None, spec: str) -> str:
    return format(v, spec) if v is not None else format("-", ">9")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="rounds per figure (min is kept)")
    parser.add_argument(KEEP_FLAG, action="store_true", help="keep the environment's OPENBLAS_CORETYPE")
    args = parser.parse_args()
    peer = f"PyTorch {torch.__version__} (1 thread)" if torch else "PyTorch not installed"
    print(f"disttorch kernels vs NumPy and {peer}; {describe()}\n")
    print(f"{'kernel':<22}{'kernel ms':>10}{'numpy ms':>10}{'torch ms':>10}{'/numpy':>8}{'/torch':>8}")
    for name, (ours, plain, scale, theirs) in cases().items():
        k, n, p = best_times([ours, plain, theirs], 3, args.repeat)
        k, n = k * 1e3, n * 1e3 * scale
        p = p * 1e3 if p is not None else None
        print(
            f"{name:<22}{k:10.2f}{n:10.2f}{_fmt(p, '10.2f')}{k / n:8.2f}{_fmt(k / p if p else None, '8.2f')}"
        )


if __name__ == "__main__":
    main()
