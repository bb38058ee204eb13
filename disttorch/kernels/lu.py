"""LU factorisation with partial pivoting (``lu_factor``, ``lu``, ``lu_solve``), batched, in
NumPy: one vectorised elimination step per column (LAPACK's ``getrf`` ordering, so pivots
and factors match PyTorch's). The gradient is ``ops/linalg_lu.py``'s."""

from __future__ import annotations

import numpy as np


def lu_factor_np(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(LU, pivots)`` of a batch of ``m x n`` matrices; pivots are 1-based int32 as LAPACK's."""
    lu = np.array(a, dtype=a.dtype if a.dtype.kind == "f" else np.float64, copy=True)
    m, n = lu.shape[-2:]
    k = min(m, n)
    batch = lu.shape[:-2]
    flat = lu.reshape((int(np.prod(batch)), m, n))  # (not -1: empty matrices)
    piv = np.zeros((flat.shape[0], k), dtype=np.int32)
    rows = np.arange(flat.shape[0])
    for j in range(k):
        p = j + np.argmax(np.abs(flat[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        swap = flat[rows, p].copy()
        flat[rows, p] = flat[:, j]
        flat[:, j] = swap
        d = flat[:, j, j]
        with np.errstate(divide="ignore", invalid="ignore"):
            factors = np.where(d[:, None] != 0, flat[:, j + 1 :, j] / d[:, None], 0)
        flat[:, j + 1 :, j] = factors
        flat[:, j + 1 :, j + 1 :] -= factors[:, :, None] * flat[:, j, None, j + 1 :]
    return flat.reshape(lu.shape), piv.reshape(batch + (k,))


def pivots_to_perm(piv: np.ndarray, m: int) -> np.ndarray:
    """The row permutation (``P^T A = L U`` rows) of LAPACK pivots, batched."""
    flat = piv.reshape((-1, piv.shape[-1])) - 1
    perm = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        a, b = perm[rows, j].copy(), perm[rows, p].copy()
        perm[rows, j], perm[rows, p] = b, a
    return perm.reshape(piv.shape[:-1] + (m,))


def unpack_np(lu: np.ndarray, piv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(P, L, U)`` with ``A = P L U`` from a factorisation."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    up = np.triu(lu[..., :k, :])
    perm = pivots_to_perm(piv, m)
    p = np.zeros(perm.shape + (m,), dtype=lu.dtype)
    np.put_along_axis(p, perm[..., :, None], 1, axis=-1)  # row i of P^T is e_{perm[i]}
    return np.swapaxes(p, -1, -2), low, up
