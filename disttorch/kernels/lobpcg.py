"""LOBPCG (Knyazev's locally optimal block preconditioned conjugate gradient) in NumPy: the
``k`` extreme eigenpairs of the symmetric generalised problem ``A x = lambda B x``.

Each step runs Rayleigh-Ritz on the span of the current block ``X``, the (preconditioned)
residuals ``W`` of the pairs not yet converged, and the previous search directions ``P``:

- ``method="ortho"``: the basis ``[X, W, P]`` is made ``B``-orthonormal first (``W`` and ``P``
  projected off ``X`` twice, then SVQB with near-dependent directions dropped), so the
  Rayleigh-Ritz problem is a standard symmetric one; robust, the default.
- ``method="basic"``: Rayleigh-Ritz with the Gram matrices of the basis as it is (the
  original algorithm), falling back to the orthonormalised basis when the ``B``-Gram matrix
  is numerically singular.

Convergence is PyTorch's backward-stable test
``||r_i|| / (||x_i|| (||A|| + |lambda_i| ||B||)) < tol`` on the leading pairs, with the norms
of ``A`` and ``B`` estimated on the initial block. Operators are callables on ``(m, p)``
blocks, so a sparse ``A`` is never densified.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

MatMul = Callable[[np.ndarray], np.ndarray]


def _b_orthonormal(Y: np.ndarray, bmul: MatMul, drop: float) -> np.ndarray:
    """A ``B``-orthonormal basis of ``span(Y)`` by SVQB (twice), dropping directions whose
    scaled Gram eigenvalue is below ``drop`` times the largest."""
    for _ in range(2):
        if Y.shape[1] == 0:
            return Y
        G = Y.T @ bmul(Y)
        G = (G + G.T) / 2
        d = np.sqrt(np.clip(np.diag(G), np.finfo(Y.dtype).tiny, None))
        theta, Z = np.linalg.eigh(G / d[:, None] / d[None, :])
        keep = theta > drop * max(theta.max(), np.finfo(Y.dtype).tiny)
        Y = (Y / d) @ (Z[:, keep] / np.sqrt(theta[keep]))
    return Y


def _pick(vals: np.ndarray, n: int, largest: bool) -> np.ndarray:
    order = np.argsort(vals)
    return order[::-1][:n] if largest else order[:n]


def lobpcg_np(
    amul: MatMul,
    bmul: MatMul | None,
    kmul: MatMul | None,
    X: np.ndarray,
    k: int,
    niter: int,
    tol: float,
    largest: bool,
    method: str,
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(E, X, iterations)``: the ``k`` largest (or smallest) eigenvalues and their
    ``B``-orthonormal eigenvectors, starting from the ``(m, n)`` block ``X``. ``niter < 0``
    iterates until convergence."""
    bmul = bmul or (lambda Y: Y)
    kmul = kmul or (lambda Y: Y)
    eps = np.finfo(X.dtype).eps
    drop = 10 * eps
    n = X.shape[1]
    x_norm = np.linalg.norm(X)
    a_norm = np.linalg.norm(amul(X)) / x_norm
    b_norm = np.linalg.norm(bmul(X)) / x_norm

    def rayleigh_ritz(S: np.ndarray, plain: bool) -> tuple[np.ndarray, np.ndarray]:
        AS = amul(S)
        T = S.T @ AS
        T = (T + T.T) / 2
        if plain:
            G = S.T @ bmul(S)
            L = np.linalg.cholesky((G + G.T) / 2)  # raises LinAlgError when not positive definite
            Li = np.linalg.inv(L)
            vals, Z = np.linalg.eigh(Li @ T @ Li.T)
            Z = Li.T @ Z
        else:
            vals, Z = np.linalg.eigh(T)
        idx = _pick(vals, n, largest)
        return vals[idx], Z[:, idx]

    X = _b_orthonormal(X, bmul, drop)
    if X.shape[1] < n:
        raise ValueError(
            f"lobpcg: the initial block X has rank {X.shape[1]} < n={n}; give independent columns"
        )
    E, C = rayleigh_ritz(X, plain=False)
    X = X @ C
    P = np.zeros((X.shape[0], 0), dtype=X.dtype)
    steps = 0
    while True:
        R = amul(X) - bmul(X) * E
        rerr = np.linalg.norm(R, axis=0) / (np.linalg.norm(X, axis=0) * (a_norm + np.abs(E) * b_norm))
        done = int(np.argmin(np.append(rerr < tol, False)))  # leading converged pairs
        if done >= k or steps == niter:
            break
        steps += 1
        W = kmul(R[:, done:])
        if method == "basic":
            S = np.concatenate([X, W, P], axis=1)
            try:
                E, C = rayleigh_ritz(S, plain=True)
            except np.linalg.LinAlgError:
                S, C = None, None
        if method != "basic" or S is None:
            Y = np.concatenate([W, P], axis=1)
            for _ in range(2):
                Y = Y - X @ (X.T @ bmul(Y))
            S = np.concatenate([X, _b_orthonormal(Y, bmul, drop)], axis=1)
            E, C = rayleigh_ritz(S, plain=False)
        X = S @ C  # B-orthonormal: C is orthonormal w.r.t. the basis' B-Gram matrix
        P = S[:, n:] @ C[n:]
    return E[:k], X[:, :k], steps
