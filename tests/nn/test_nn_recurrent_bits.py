"""GRU, GRUCell and LSTMCell in float32 round as PyTorch's CPU compositions (its ``gru_cell``,
``lstm_cell``; its float32 LSTM layer runs oneDNN's kernel instead): the
outputs and gradients are PyTorch's bits, once ``tanh`` and the matrix products give
PyTorch's bits too. The tests swap in the oracle's ``tanh`` and take inputs and weights on a
coarse dyadic grid, whose products are exact in any summation order (BLAS libraries add in
different orders), so that they check the composition, not ``tanh``'s rounding (the ``vml``
kernel's tests cover it) nor the BLAS's. With one row, the weight and bias gradients are
products of single numbers, exact too; the input's and state's gradients sum over the gates
in BLAS's order and are not compared."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.kernels import rnn as rnn_kernels
from disttorch.kernels.vec_exp import compiled_exp


@pytest.fixture
def torch_tanh(torch, monkeypatch):
    """The recurrent kernels' ``tanh`` replaced by PyTorch's own (and the compiled ``sigmoid``,
    which takes PyTorch's steps, required)."""
    if not compiled_exp():
        pytest.skip("float32 sigmoid takes PyTorch's steps only with numba")
    monkeypatch.setattr(
        rnn_kernels, "tanh", lambda a: torch.from_numpy(np.ascontiguousarray(a)).tanh().numpy()
    )
    return torch


def _run(lib, kind: str, x: np.ndarray, h: np.ndarray, params: list, threads: int) -> list:
    """The output, then the gradients of the input, the state(s) and the parameters (an
    LSTM cell: ``h'``, ``c'``, then those of ``x``, ``h``, ``c`` and the parameters; its
    cell state starts at ``h / 2``)."""
    lib.set_num_threads(threads)
    m = getattr(lib.nn, kind)(x.shape[-1], h.shape[-1])
    with lib.no_grad():
        for p, a in zip(m.parameters(), params):
            p.copy_(lib.from_numpy(a))
    states = (h, h / 2) if kind == "LSTMCell" else (h,)
    xt, *st = (lib.from_numpy(a.copy()).requires_grad_(True) for a in (x, *states))
    out = m(xt, tuple(st) if kind == "LSTMCell" else st[0])
    ys = list(out) if kind == "LSTMCell" else [out[0] if kind == "GRU" else out]
    rng = np.random.default_rng(5)
    grads = [lib.from_numpy(rng.standard_normal(tuple(y.shape)).astype(np.float32)) for y in ys]
    lib.autograd.backward(ys, grads)
    return [
        t.detach().numpy() for t in (*ys, xt.grad, *(s.grad for s in st), *(p.grad for p in m.parameters()))
    ]


def _case(kind: str, steps: int, batch: int, isz: int, hsz: int) -> tuple:
    rng = np.random.default_rng(steps * 100 + batch)
    lead = (steps,) if kind == "GRU" else ()
    x = _grid(rng, (*lead, batch, isz), 2.0)
    h = _grid(rng, (*((1,) if kind == "GRU" else ()), batch, hsz), 1.0)
    gates = (4 if kind == "LSTMCell" else 3) * hsz
    shapes = ((gates, isz), (gates, hsz), (gates,), (gates,))
    params = [_grid(rng, s, 0.5) for s in shapes]
    return x, h, params


def _grid(rng: np.random.Generator, shape: tuple, scale: float) -> np.ndarray:
    """Multiples of 1/64 up to ``scale``: sums of up to 2^10 of their products are exact."""
    return (np.round(rng.uniform(-scale, scale, shape) * 64) / 64).astype(np.float32)


def _same_bits(ours: list, theirs: list, which: tuple) -> None:
    for i in which:
        a, b = ours[i], theirs[i]
        assert np.array_equal(a.view(np.int32), b.view(np.int32)), f"result {i}: {(a != b).sum()} differ"


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["GRUCell", "LSTMCell"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("isz, hsz", [(10, 20), (7, 40), (33, 37), (5, 70)])
def test_cell_bits_as_pytorch(torch_tanh, kind, threads, isz, hsz):
    """One row: the outputs and every parameter's gradient, and an LSTM cell state's
    (``hsz`` of 32 or more: the sigmoid's vector blocks and its scalar tail)."""
    torch = torch_tanh
    before = torch.get_num_threads()
    try:
        x, h, params = _case(kind, 1, 1, isz, hsz)
        ours = _run(dt, kind, x, h, params, threads)
        theirs = _run(torch, kind, x, h, params, threads)
    finally:
        torch.set_num_threads(before)
        dt.set_num_threads(before)
    _same_bits(ours, theirs, (0, 1, 4, 5, 6, 7, 8) if kind == "LSTMCell" else (0, 3, 4, 5, 6))


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["GRUCell", "GRU", "LSTMCell"])
@pytest.mark.parametrize("batch, hsz", [(4, 20), (3, 45)])
def test_output_bits_as_pytorch(torch_tanh, kind, batch, hsz):
    """Several rows (each gate's sigmoid walks its rows of the gate block), one step."""
    x, h, params = _case(kind, 1, batch, 9, hsz)
    ours, theirs = _run(dt, kind, x, h, params, 1), _run(torch_tanh, kind, x, h, params, 1)
    _same_bits(ours, theirs, (0, 1) if kind == "LSTMCell" else (0,))
