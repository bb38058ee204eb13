"""Time sparse operations in disttorch and, when installed, in PyTorch, on one thread, side by
side in one run; print a table with the ratios (disttorch's median time over PyTorch's).

    python benchmarks/sparse.py [--n 4000] [--density 0.005] [--cols 64] [--repeat 7]

Cases: dense -> CSR conversion, CSR @ dense forward, CSR @ dense forward + backward (to the
values and the dense operand), COO @ dense, CSR -> CSC, sparse softmax (COO, dim 1),
sampled_addmm.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from machine import describe, prepare_blas

prepare_blas()

import disttorch

try:
    import torch
except ImportError:
    torch = None


def _cases(lib, a: np.ndarray, d: np.ndarray) -> dict:
    x = lib.tensor(a)
    dense = lib.tensor(d)
    csr = x.to_sparse_csr()
    coo = x.to_sparse()
    m1 = lib.ones(a.shape[0], d.shape[1], dtype=lib.float64)
    m2 = lib.ones(d.shape[1], a.shape[1], dtype=lib.float64)

    def fwd_bwd():
        v = csr.values().detach().requires_grad_()
        dd = dense.detach().requires_grad_()
        s = lib.sparse_csr_tensor(csr.crow_indices(), csr.col_indices(), v, tuple(csr.shape))
        (s @ dd).sum().backward()

    return {
        "to_sparse_csr": lambda: x.to_sparse_csr(),
        "csr @ dense": lambda: csr @ dense,
        "csr @ dense fwd+bwd": fwd_bwd,
        "coo @ dense": lambda: coo @ dense,
        "csr -> csc": lambda: csr.to_sparse_csc(),
        "sparse.softmax (coo)": lambda: lib.sparse.softmax(coo, 1),
        "sampled_addmm": lambda: lib.sparse.sampled_addmm(csr, m1, m2),
    }


def _time(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=4000)
    p.add_argument("--density", type=float, default=0.005)
    p.add_argument("--cols", type=int, default=64)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.n, args.n)) * (rng.random((args.n, args.n)) < args.density)
    d = rng.standard_normal((args.n, args.cols))
    if torch is not None:
        torch.set_num_threads(1)
    print(describe())
    print(
        f"{args.n}x{args.n} float64, density {args.density} (nnz {int((a != 0).sum())}), dense {args.n}x{args.cols}"
    )
    ours = _cases(disttorch, a, d)
    theirs = _cases(torch, a, d) if torch is not None else {}
    print(f"{'case':24} {'disttorch ms':>13} {'torch ms':>10} {'ratio':>7}")
    for name, fn in ours.items():
        t_ours = _time(fn, args.repeat) * 1e3
        if name in theirs:
            t_theirs = _time(theirs[name], args.repeat) * 1e3
            print(f"{name:24} {t_ours:13.2f} {t_theirs:10.2f} {t_ours / t_theirs:7.2f}")
        else:
            print(f"{name:24} {t_ours:13.2f} {'-':>10} {'-':>7}")


if __name__ == "__main__":
    main()
