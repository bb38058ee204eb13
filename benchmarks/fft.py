"""FFT benchmark: ``torch.fft`` transforms and ``stft``/``istft``, forward and forward +
backward, disttorch beside PyTorch.

Run by hand: ``python benchmarks/fft.py [--repeat N]``. Prints one table: for each case the
milliseconds of disttorch and PyTorch (when installed) and their ratio (>1: disttorch slower).
Every figure is CPU time of this process (``time.process_time``), the minimum over several
rounds; BLAS and PyTorch run on one thread each.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from machine import describe, prepare_blas  # noqa: E402

prepare_blas()

import numpy as np  # noqa: E402
from ops import best_times  # noqa: E402

import disttorch  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # PyTorch is an optional peer
    torch = None


def _signal(lib: Any, shape: tuple, grad: bool) -> Any:
    x = lib.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    return x.requires_grad_() if grad else x


def _case(lib: Any, name: str) -> Callable[[], Any]:
    if name == "fft 64x4096 (complex64)":
        x = _signal(lib, (64, 4096), False).to(lib.complex64)
        return lambda: lib.fft.fft(x)
    if name == "rfft 64x4096":
        x = _signal(lib, (64, 4096), False)
        return lambda: lib.fft.rfft(x)
    if name == "fft2 256x256 + backward":
        x = _signal(lib, (256, 256), True)
        return lambda: lib.fft.fft2(x).abs().sum().backward()
    if name == "rfft + irfft 64x4096 + backward":
        x = _signal(lib, (64, 4096), True)
        return lambda: lib.fft.irfft(lib.fft.rfft(x), n=4096).square().sum().backward()
    if name == "stft 8x16000 n_fft=512":
        x, w = _signal(lib, (8, 16000), False), lib.hann_window(512)
        return lambda: lib.stft(x, 512, hop_length=128, window=w, return_complex=True)
    if name == "stft + istft 8x16000 + backward":
        x, w = _signal(lib, (8, 16000), True), lib.hann_window(512)

        def run() -> None:
            spec = lib.stft(x, 512, hop_length=128, window=w, return_complex=True)
            lib.istft(spec, 512, hop_length=128, window=w, length=16000).square().sum().backward()

        return run
    raise KeyError(name)


CASES = [
    "fft 64x4096 (complex64)",
    "rfft 64x4096",
    "fft2 256x256 + backward",
    "rfft + irfft 64x4096 + backward",
    "stft 8x16000 n_fft=512",
    "stft + istft 8x16000 + backward",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(describe())
    print(f"{'case':36s} {'disttorch ms':>13s} {'torch ms':>10s} {'ratio':>7s}")
    for name in CASES:
        fns = [_case(disttorch, name), _case(torch, name) if torch is not None else None]
        ours, theirs = best_times(fns, number=3, repeat=args.repeat)
        ratio = f"{ours / theirs:7.2f}" if theirs else "      -"
        theirs_ms = f"{theirs * 1e3:10.2f}" if theirs else "         -"
        print(f"{name:36s} {ours * 1e3:13.2f} {theirs_ms} {ratio}")


if __name__ == "__main__":
    main()
