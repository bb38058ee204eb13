"""Sequence-layer benchmarks: forward + backward of recurrent and transformer stacks, side by
side with PyTorch on one thread.

Run by hand: ``python benchmarks/layers.py [--repeat N]``. Cases (training mode, the layers'
default dropout):

- ``LSTM``: 2 layers, input 256, hidden 256, sequence 64, batch 32.
- ``GRU``: the same sizes.
- ``TransformerEncoder``: 4 ``TransformerEncoderLayer(d_model=256, nhead=4)`` (feed-forward
  2048, dropout 0.1), sequence 128, batch 16.

Both libraries run the same weights (PyTorch's state dict loaded into disttorch) on the same
input; the loss is the sum of the output times a fixed random tensor. Every figure is CPU time
of this process (``time.process_time``), the minimum over several rounds, in milliseconds.
Target: disttorch within 1.2x of PyTorch for each.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from machine import KEEP_FLAG, describe, prepare_blas  # noqa: E402

prepare_blas()  # one thread, OpenBLAS's own kernels: before NumPy and PyTorch load

import numpy as np  # noqa: E402

import disttorch  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # PyTorch is an optional peer
    torch = None


def _cases() -> dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]]:
    """name -> (model factory given the library, input shape (sequence-first))."""
    return {
        "LSTM 2x256, seq 64, batch 32": (lambda L: L.nn.LSTM(256, 256, num_layers=2), (64, 32, 256)),
        "GRU 2x256, seq 64, batch 32": (lambda L: L.nn.GRU(256, 256, num_layers=2), (64, 32, 256)),
        "TransformerEncoder 4x(d256, 4 heads), seq 128, batch 16": (
            lambda L: L.nn.TransformerEncoder(
                L.nn.TransformerEncoderLayer(256, 4), 4, enable_nested_tensor=False
            ),
            (128, 16, 256),
        ),
    }


def _step(lib: Any, model: Any, x: Any, w: Any) -> Callable[[], None]:
    def run() -> None:
        model.zero_grad()
        out = model(x)
        if isinstance(out, tuple):
            out = out[0]
        (out * w).sum().backward()

    return run


def _time(fn: Callable[[], None], repeat: int) -> float:
    """Minimum CPU milliseconds of one call over ``repeat`` rounds (after one warm-up)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="timed rounds per case")
    parser.add_argument(KEEP_FLAG, action="store_true", help="keep OPENBLAS_CORETYPE as set")
    args = parser.parse_args()
    disttorch.manual_seed(0)
    rng = np.random.default_rng(0)
    peer = f"torch {torch.__version__}" if torch is not None else "no PyTorch installed"
    print(
        f"disttorch {disttorch.__version__} vs {peer}; {describe(torch)}; one thread, "
        f"forward + backward, training mode, min CPU ms of {args.repeat}\n"
    )
    rows = []
    for name, (factory, shape) in _cases().items():
        x_np = rng.standard_normal(shape).astype(np.float32)
        dm = factory(disttorch)
        d_ms = t_ms = None
        if torch is not None:
            torch.manual_seed(0)
            tm = factory(torch)
            dm.load_state_dict({k: disttorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
            tx = torch.tensor(x_np)
            with torch.no_grad():
                out = tm(tx)
            w_shape = (out[0] if isinstance(out, tuple) else out).shape
            w_np = rng.standard_normal(tuple(w_shape)).astype(np.float32)
            t_ms = _time(_step(torch, tm, tx, torch.tensor(w_np)), args.repeat)
        else:
            w_np = None
        dx = disttorch.tensor(x_np)
        if w_np is None:
            with disttorch.no_grad():
                out = dm(dx)
            w_np = rng.standard_normal(tuple((out[0] if isinstance(out, tuple) else out).shape))
            w_np = w_np.astype(np.float32)
        d_ms = _time(_step(disttorch, dm, dx, disttorch.tensor(w_np)), args.repeat)
        rows.append((name, d_ms, t_ms))
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'disttorch ms':>12}  {'torch ms':>9}  {'ratio':>6}")
    for name, d_ms, t_ms in rows:
        torch_col = f"{t_ms:9.1f}" if t_ms is not None else f"{'-':>9}"
        ratio = f"{d_ms / t_ms:6.2f}" if t_ms else f"{'-':>6}"
        print(f"{name:<{width}}  {d_ms:12.1f}  {torch_col}  {ratio}")
    print("\ntarget: ratio <= 1.2 for each case")


if __name__ == "__main__":
    main()
