"""The element-wise arithmetic of one LSTM step, in two interchangeable implementations.

``kernels/rnn.py`` runs the time loop: per step a matrix product gives the gates, NumPy's
``tanh`` squashes them, and then an *arithmetic* object finishes the step. Both classes here
do exactly the same math:

* :class:`NumpyCell`: plain NumPy, a dozen array passes per step (always available);
* :class:`JitCell`: the same formulas as loops compiled by numba (the optional
  ``fast`` extra, ``pip install disttorch[fast]``), one pass over the step's numbers each.
  NumPy's ``tanh`` stays outside: it is vectorised, a compiled scalar ``tanh`` is not.

Conventions (see ``kernels/rnn.py``): ``g`` is a step's ``(b, 4H)`` gate block in PyTorch's
order ``i, f, g, o`` holding ``tanh`` of the pre-activations, whose sigmoid rows were halved,
so ``sigmoid(x) = 0.5 * tanh(x / 2) + 0.5``. A step is::

    gates(g, hw, bias)       # g += h @ W_hhᵀ + bias      (g: the input projection's rows)
    tanh(g) -> g             # by the loop
    state(g, c, ct)          # ct = f * c + i * g            (c: the previous cell state)
    tanh(ct) -> tc           # by the loop
    output(g, c, tc, h, save)  # h = o * tc; with save = (kc, forget, fac): what backward needs

and backward's step is ``gates_grad(dht, fac, kc, forget, dc, d)``: the pre-activation
gradients ``d`` of the gates and the cell-state gradient ``dc`` carried to the step before.
``fac`` holds the local derivatives: ``d = dc_t * fac`` for ``i, f, g`` and ``dh * fac`` for
``o``; ``kc = o (1 - tanh(c)^2)`` so that ``dc_t = dc + dh * kc``.

``DISTTORCH_JIT=0`` turns the compiled loops off (see ``kernels/jit.py``).
"""

from __future__ import annotations

import numpy as np

from .jit import compiled, njit

__all__ = ["JitCell", "NumpyCell", "cell_arithmetic"]


class NumpyCell:
    """The step arithmetic as NumPy array passes (the reference; works for every float dtype)."""

    def __init__(self, bmax: int, hs: int, dtype: np.dtype) -> None:
        self.hs = hs
        self._half = np.full(4 * hs, 0.5, dtype=dtype)  # tanh(x/2) -> sigmoid(x) on i, f, o
        self._half[2 * hs : 3 * hs] = 1.0
        self._half_off = 1 - self._half
        self._ig = np.empty((bmax, hs), dtype=dtype)
        self._d = np.empty((bmax, 4 * hs), dtype=dtype)

    def gates(self, g: np.ndarray, hw: np.ndarray, bias: np.ndarray | None) -> None:
        """``g += hw + bias``: the step's input projection plus its recurrent product and bias."""
        g += hw
        if bias is not None:
            g += bias

    def state(self, g: np.ndarray, c: np.ndarray, ct: np.ndarray) -> None:
        """``ct = f * c + i * g``; ``g``'s sigmoid gates become sigmoids in place."""
        hs, b = self.hs, g.shape[0]
        g *= self._half
        g += self._half_off
        np.multiply(g[:, hs : 2 * hs], c, out=ct)
        ig = self._ig[:b]
        np.multiply(g[:, :hs], g[:, 2 * hs : 3 * hs], out=ig)
        ct += ig

    def output(self, g: np.ndarray, c: np.ndarray, tc: np.ndarray, h: np.ndarray, save: tuple | None) -> None:
        """``h = o * tanh(c_t)``; with ``save = (kc, forget, fac)`` also backward's factors."""
        hs, b = self.hs, g.shape[0]
        i, f, gg, o = g[:, :hs], g[:, hs : 2 * hs], g[:, 2 * hs : 3 * hs], g[:, 3 * hs :]
        np.multiply(o, tc, out=h)
        if save is None:
            return
        kc, forget, fac = save
        forget[...] = f
        np.multiply(tc, tc, out=kc)
        np.subtract(1, kc, out=kc)
        kc *= o  # o (1 - tanh(c)^2)
        d = self._d[:b]
        np.subtract(1, g, out=d)
        d *= g  # s (1 - s) for i, f, o
        np.multiply(d[:, :hs], gg, out=fac[:, :hs])
        np.multiply(d[:, hs : 2 * hs], c, out=fac[:, hs : 2 * hs])
        dg = fac[:, 2 * hs : 3 * hs]
        np.multiply(gg, gg, out=dg)
        np.subtract(1, dg, out=dg)
        dg *= i  # i (1 - g^2)
        np.multiply(d[:, 3 * hs :], tc, out=fac[:, 3 * hs :])

    def gates_grad(
        self,
        dht: np.ndarray,
        fac: np.ndarray,
        kc: np.ndarray,
        forget: np.ndarray,
        dc: np.ndarray,
        d: np.ndarray,
    ) -> None:
        """Gate pre-activation gradients ``d`` of a step; ``dc`` becomes the previous step's."""
        hs, b = self.hs, d.shape[0]
        np.multiply(dht, fac[:, 3 * hs :], out=d[:, 3 * hs :])
        dct = self._ig[:b]
        np.multiply(dht, kc, out=dct)
        dct += dc
        np.multiply(dct[:, None, :], fac.reshape(b, 4, hs)[:, :3], out=d.reshape(b, 4, hs)[:, :3])
        np.multiply(dct, forget, out=dc)


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
            ti, tf, tg, cr, out = g[r, :hs], g[r, hs : 2 * hs], g[r, 2 * hs : 3 * hs], c[r], ct[r]
            for j in range(hs):
                out[j] = (half * tf[j] + half) * cr[j] + (half * ti[j] + half) * tg[j]

    @jit
    def output(g, tc, h):  # pragma: no cover - compiled
        hs = tc.shape[1]
        for r in range(g.shape[0]):
            to, t, hr = g[r, 3 * hs :], tc[r], h[r]
            for j in range(hs):
                hr[j] = (half * to[j] + half) * t[j]

    @jit
    def output_save(g, c, tc, h, kc, forget, fac):  # pragma: no cover - compiled
        hs = c.shape[1]
        for r in range(g.shape[0]):
            ti, tf, tg, to = g[r, :hs], g[r, hs : 2 * hs], g[r, 2 * hs : 3 * hs], g[r, 3 * hs :]
            ai, af, ag, ao = fac[r, :hs], fac[r, hs : 2 * hs], fac[r, 2 * hs : 3 * hs], fac[r, 3 * hs :]
            cr, t, hr, kr, fr = c[r], tc[r], h[r], kc[r], forget[r]
            for j in range(hs):
                i, f, o, gg, tj = half * ti[j] + half, half * tf[j] + half, half * to[j] + half, tg[j], t[j]
                hr[j] = o * tj
                kr[j] = o * (one - tj * tj)
                fr[j] = f
                ai[j] = i * (one - i) * gg
                af[j] = f * (one - f) * cr[j]
                ag[j] = i * (one - gg * gg)
                ao[j] = o * (one - o) * tj

    @jit
    def gates_grad(dht, fac, kc, forget, dc, d):  # pragma: no cover - compiled
        hs = dc.shape[1]
        for r in range(d.shape[0]):
            ai, af, ag, ao = fac[r, :hs], fac[r, hs : 2 * hs], fac[r, 2 * hs : 3 * hs], fac[r, 3 * hs :]
            di, df, dg, do = d[r, :hs], d[r, hs : 2 * hs], d[r, 2 * hs : 3 * hs], d[r, 3 * hs :]
            dh, kr, fr, dcr = dht[r], kc[r], forget[r], dc[r]
            for j in range(hs):
                dct = dcr[j] + dh[j] * kr[j]
                do[j] = dh[j] * ao[j]
                di[j] = dct * ai[j]
                df[j] = dct * af[j]
                dg[j] = dct * ag[j]
                dcr[j] = dct * fr[j]

    return gates, state, output, output_save, gates_grad


class JitCell:
    """The step arithmetic as numba-compiled loops (float32 and float64, C-contiguous rows)."""

    def __init__(self, hs: int, loops: tuple) -> None:
        self.hs = hs
        self._gates, self._state, self._output, self._output_save, self._gates_grad = loops

    def gates(self, g: np.ndarray, hw: np.ndarray, bias: np.ndarray | None) -> None:
        if bias is None:
            g += hw
        else:
            self._gates(g, hw, bias)

    def state(self, g: np.ndarray, c: np.ndarray, ct: np.ndarray) -> None:
        self._state(g, c, ct)

    def output(self, g: np.ndarray, c: np.ndarray, tc: np.ndarray, h: np.ndarray, save: tuple | None) -> None:
        if save is None:
            self._output(g, tc, h)
        else:
            self._output_save(g, c, tc, h, *save)

    def gates_grad(self, dht, fac, kc, forget, dc, d) -> None:
        self._gates_grad(dht, fac, kc, forget, dc, d)


def cell_arithmetic(bmax: int, hs: int, dtype: np.dtype, steps: int) -> NumpyCell | JitCell:
    """The arithmetic for a sequence of ``steps`` steps: compiled loops for float32/float64
    sequences long enough to repay a first compilation, NumPy otherwise."""
    if steps >= 8 and np.dtype(dtype) in (np.float32, np.float64):
        loops = compiled(_compile)
        if loops is not None:
            return JitCell(hs, loops)
    return NumpyCell(bmax, hs, dtype)
