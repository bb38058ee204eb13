"""The element-wise arithmetic of one LSTM step, in two interchangeable implementations.

``kernels/rnn.py`` runs the time loop: per step a matrix product gives the gates, NumPy's
``tanh`` squashes them, and an *arithmetic* object does the rest. Both classes here compute
the same numbers:

* :class:`NumpyCell`: plain NumPy, one call per array pass (always available);
* :class:`JitCell`: the same formulas as loops compiled by numba (the optional ``fast``
  extra, ``pip install 'disttorch[fast]'``), one pass over a step's numbers per call.
  NumPy's ``tanh`` stays outside: it is vectorised, a compiled scalar ``tanh`` is not.

Conventions (see ``kernels/rnn.py``): ``g`` is a step's ``(b, 4H)`` gate block in PyTorch's
order ``i, f, g, o``. The sigmoid gates' pre-activations were halved beforehand, so one
``tanh`` serves all four gates and ``sigmoid(x) = 0.5 * tanh(x / 2) + 0.5``. A step is::

    gates(g, hw, bias)   # g += h @ W_hhᵀ + bias     (g: the step's rows of the input projection)
    tanh(g) -> g         # by the loop
    state(g, c, ct)      # i, f, o become sigmoids in place; ct = f * c + i * g
    tanh(ct) -> tc       # by the loop
    output(g, tc, h)     # h = o * tc

After it ``g`` holds the activated gates, which is what backward needs, with the step's
input cell state ``c`` and ``tc = tanh(c_t)``; backward's step is ``gates_grad(dht, g, c, tc,
dc, d)``: the pre-activation gradients ``d`` of the gates from the gradient ``dht`` of the
step's output, and the cell-state gradient ``dc`` carried to the step before (in place)::

    dc_t = dc + dht * o * (1 - tc^2)
    d_i = dc_t * g * i (1 - i)     d_f = dc_t * c * f (1 - f)
    d_g = dc_t * i * (1 - g^2)     d_o = dht * tc * o (1 - o)      dc <- dc_t * f

``DISTTORCH_JIT=0`` turns the compiled loops off (see ``kernels/jit.py``).
"""

from __future__ import annotations

import numpy as np

from .jit import compiled, njit
from .step_product import MIN_STEPS

__all__ = ["JitCell", "NumpyCell", "cell_arithmetic"]


class NumpyCell:
    """The step arithmetic as NumPy array passes (the reference; any float dtype)."""

    def __init__(self, bmax: int, hs: int, dtype: np.dtype) -> None:
        self.hs = hs
        self._half = np.full(4 * hs, 0.5, dtype=dtype)  # tanh(x/2) -> sigmoid(x) on i, f, o
        self._half[2 * hs : 3 * hs] = 1.0
        self._half_off = 1 - self._half
        self._tmp = np.empty((2, bmax, hs), dtype=dtype)
        self._d = np.empty((bmax, 4 * hs), dtype=dtype)

    def gates(self, g: np.ndarray, hw: np.ndarray, bias: np.ndarray | None) -> None:
        """``g += hw + bias``: the step's input projection plus its recurrent product and bias."""
        g += hw
        if bias is not None:
            g += bias

    def state(self, g: np.ndarray, c: np.ndarray, ct: np.ndarray) -> None:
        """``i, f, o`` of ``g`` become sigmoids; ``ct = f * c + i * g``."""
        hs, b = self.hs, g.shape[0]
        g *= self._half
        g += self._half_off
        np.multiply(g[:, hs : 2 * hs], c, out=ct)
        ig = self._tmp[0, :b]
        np.multiply(g[:, :hs], g[:, 2 * hs : 3 * hs], out=ig)
        ct += ig

    def output(self, g: np.ndarray, tc: np.ndarray, h: np.ndarray) -> None:
        """``h = o * tanh(c_t)``."""
        np.multiply(g[:, 3 * self.hs :], tc, out=h)

    def gates_grad(
        self, dht: np.ndarray, g: np.ndarray, c: np.ndarray, tc: np.ndarray, dc: np.ndarray, d: np.ndarray
    ) -> None:
        """A step's gate pre-activation gradients ``d``; ``dc`` becomes the previous step's."""
        hs, b = self.hs, g.shape[0]
        gg, o = g[:, 2 * hs : 3 * hs], g[:, 3 * hs :]
        s = self._d[:b]  # s (1 - s) of every gate (the g gate's entries are not used)
        np.subtract(1, g, out=s)
        s *= g
        dct, t = self._tmp[0, :b], self._tmp[1, :b]
        np.multiply(tc, tc, out=t)
        np.subtract(1, t, out=t)
        t *= o
        t *= dht
        np.add(dc, t, out=dct)  # dc_t = dc + dh o (1 - tc^2)
        np.multiply(dht, tc, out=d[:, 3 * hs :])
        d[:, 3 * hs :] *= s[:, 3 * hs :]
        np.multiply(dct, gg, out=d[:, :hs])
        d[:, :hs] *= s[:, :hs]
        np.multiply(dct, c, out=d[:, hs : 2 * hs])
        d[:, hs : 2 * hs] *= s[:, hs : 2 * hs]
        dg = d[:, 2 * hs : 3 * hs]
        np.multiply(gg, gg, out=dg)
        np.subtract(1, dg, out=dg)
        dg *= g[:, :hs]
        dg *= dct
        np.multiply(dct, g[:, hs : 2 * hs], out=dc)


def _compile():
    """The numba loops (numba is imported only when a long LSTM first runs)."""
    jit = njit()
    half, one = np.float32(0.5), np.float32(1)  # float32 constants keep float32 math in float32

    @jit
    def gates(g, hw, bias):  # pragma: no cover - compiled
        for r in range(g.shape[0]):
            gr, hr = g[r], hw[r]
            for j in range(g.shape[1]):
                gr[j] += hr[j] + bias[j]

    @jit
    def state(g, c, ct):  # pragma: no cover - compiled
        hs = c.shape[1]
        for r in range(g.shape[0]):
            gr = g[r]
            for j in range(2 * hs):  # i, f
                gr[j] = half * gr[j] + half
            for j in range(3 * hs, 4 * hs):  # o
                gr[j] = half * gr[j] + half
        for r in range(g.shape[0]):  # a second pass that only reads g: it vectorises
            gi, gf, gg, cr, out = g[r, :hs], g[r, hs : 2 * hs], g[r, 2 * hs : 3 * hs], c[r], ct[r]
            for j in range(hs):
                out[j] = gf[j] * cr[j] + gi[j] * gg[j]

    @jit
    def output(g, tc, h):  # pragma: no cover - compiled
        hs = tc.shape[1]
        for r in range(g.shape[0]):
            go, t, hr = g[r, 3 * hs :], tc[r], h[r]
            for j in range(hs):
                hr[j] = go[j] * t[j]

    @jit
    def gates_grad(dht, g, c, tc, dc, d):  # pragma: no cover - compiled
        hs = dc.shape[1]
        for r in range(d.shape[0]):
            gi, gf, gg, go = g[r, :hs], g[r, hs : 2 * hs], g[r, 2 * hs : 3 * hs], g[r, 3 * hs :]
            di, df, dg, do = d[r, :hs], d[r, hs : 2 * hs], d[r, 2 * hs : 3 * hs], d[r, 3 * hs :]
            dh, cr, t, dcr = dht[r], c[r], tc[r], dc[r]
            for j in range(hs):
                i, f, n, o, tj = gi[j], gf[j], gg[j], go[j], t[j]
                dct = dcr[j] + dh[j] * o * (one - tj * tj)
                do[j] = dh[j] * tj * o * (one - o)
                di[j] = dct * n * i * (one - i)
                df[j] = dct * cr[j] * f * (one - f)
                dg[j] = dct * i * (one - n * n)
                dcr[j] = dct * f

    return gates, state, output, gates_grad


class JitCell:
    """The step arithmetic as numba-compiled loops (float32 and float64)."""

    def __init__(self, hs: int, loops: tuple) -> None:
        self.hs = hs
        self._gates, self.state, self.output, self.gates_grad = loops

    def gates(self, g: np.ndarray, hw: np.ndarray, bias: np.ndarray | None) -> None:
        if bias is None:
            g += hw
        else:
            self._gates(g, hw, bias)


def cell_arithmetic(bmax: int, hs: int, dtype: np.dtype, steps: int) -> NumpyCell | JitCell:
    """The arithmetic for a sequence of ``steps`` steps: compiled loops for float32/float64
    sequences long enough to repay a first compilation, NumPy otherwise."""
    if steps >= MIN_STEPS and np.dtype(dtype) in (np.float32, np.float64):
        loops = compiled(_compile)
        if loops is not None:
            return JitCell(hs, loops)
    return NumpyCell(bmax, hs, dtype)
