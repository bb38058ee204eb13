"""The two implementations of an LSTM step's arithmetic (kernels/lstm_cell.py): NumPy passes
and numba-compiled loops give the same numbers, the layer built on either passes gradcheck
and matches PyTorch, and DISTTORCH_JIT=0 or a missing numba leaves the NumPy one."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.autograd import gradcheck
from disttorch.kernels import jit
from disttorch.kernels import lstm_cell as L
from disttorch.nn.functional._recurrent import recurrent_layer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _loops():
    loops = jit.compiled(L._compile)
    if loops is None:
        pytest.skip("no compiled loops: numba is not installed (the fast extra) or DISTTORCH_JIT=0")
    return loops


@pytest.fixture(params=["numpy", "jit"])
def arithmetic(request, monkeypatch):
    """Run the test with one implementation forced."""
    if request.param == "numpy":
        monkeypatch.setenv("DISTTORCH_JIT", "0")
    else:
        _loops()
    return request.param


@pytest.mark.parametrize("dtype,tol", [(np.float32, 1e-6), (np.float64, 1e-14)])
def test_numpy_and_compiled_steps_give_the_same_numbers(dtype, tol):
    b, hs = 5, 7
    results = []
    for cell in (L.NumpyCell(b, hs, np.dtype(dtype)), L.JitCell(hs, _loops())):
        r = np.random.default_rng(1)
        pre = r.standard_normal((b, 4 * hs)).astype(dtype)
        hw = r.standard_normal((b, 4 * hs)).astype(dtype)
        bias = r.standard_normal(4 * hs).astype(dtype)
        cell.gates(pre, hw, bias)
        g, c = np.tanh(pre), r.standard_normal((b, hs)).astype(dtype)
        ct, h = np.empty_like(c), np.empty_like(c)
        cell.state(g, c, ct)
        tc = np.tanh(ct)
        cell.output(g, tc, h)
        dht, dc, d = r.standard_normal((b, hs)).astype(dtype), c.copy() * 0.5, np.empty_like(g)
        cell.gates_grad(dht, g, c, tc, dc, d)
        results.append((pre, g, ct, h, dc, d))
    for a, j in zip(*results):
        np.testing.assert_allclose(a, j, rtol=tol, atol=tol)
    # the formulas themselves, on the NumPy results (sigmoid(x) = 0.5 tanh(x/2) + 0.5)
    pre, g, ct, h, dc, d = results[0]
    r = np.random.default_rng(1)
    r.standard_normal((b, 4 * hs)), r.standard_normal((b, 4 * hs)), r.standard_normal(4 * hs)
    c0 = r.standard_normal((b, hs)).astype(dtype)
    dh0 = r.standard_normal((b, hs)).astype(dtype)
    i, f, n, o = np.split(np.tanh(pre.astype(np.float64)), 4, axis=1)
    i, f, o = 0.5 * i + 0.5, 0.5 * f + 0.5, 0.5 * o + 0.5
    c1 = f * c0 + i * n
    loose = dict(rtol=tol * 100, atol=tol * 100)
    np.testing.assert_allclose(g, np.concatenate([i, f, n, o], axis=1), **loose)
    np.testing.assert_allclose(ct, c1, **loose)
    np.testing.assert_allclose(h, o * np.tanh(c1), **loose)
    dct = 0.5 * c0 + dh0 * o * (1 - np.tanh(c1) ** 2)
    np.testing.assert_allclose(dc, dct * f, **loose)
    expect = np.concatenate(
        [
            dct * n * i * (1 - i),
            dct * c0 * f * (1 - f),
            dct * i * (1 - n * n),
            dh0 * np.tanh(c1) * o * (1 - o),
        ],
        axis=1,
    )
    np.testing.assert_allclose(d, expect, **loose)


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_gradcheck_with_either_arithmetic(arithmetic, reverse):
    rng = np.random.default_rng(2)
    batch_sizes = [3, 3, 2, 2, 2, 1, 1, 1, 1, 1]  # 10 steps: long enough for the compiled loops
    n, i_sz, h_sz = sum(batch_sizes), 3, 4

    def t(*shape):
        return dt.tensor(rng.standard_normal(shape) * 0.5, dtype=dt.float64, requires_grad=True)

    args = (
        t(n, i_sz),
        t(3, h_sz),
        t(3, h_sz),
        t(4 * h_sz, i_sz),
        t(4 * h_sz, h_sz),
        t(4 * h_sz),
        t(4 * h_sz),
    )
    expect = L.JitCell if arithmetic == "jit" else L.NumpyCell
    assert isinstance(L.cell_arithmetic(3, h_sz, np.dtype(np.float64), len(batch_sizes)), expect)

    def fn(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        return recurrent_layer("LSTM", x, h0, c0, w_ih, w_hh, b_ih, b_hh, None, batch_sizes, reverse)

    assert gradcheck(fn, args)


@pytest.mark.parity
def test_long_lstm_matches_pytorch_with_either_arithmetic(arithmetic):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm = torch.nn.LSTM(6, 8, num_layers=2, bidirectional=True)
    dm = nn.LSTM(6, 8, num_layers=2, bidirectional=True)
    dm.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((40, 5, 6)).astype(np.float32)
    grads = []
    for lib, model in ((torch, tm), (dt, dm)):
        xt = lib.tensor(x, requires_grad=True)
        out, (h, c) = model(xt)
        (out.sin().sum() + h.sum() + (c * c).sum()).backward()
        grads.append([out.detach().numpy(), xt.grad.numpy()] + [p.grad.numpy() for p in model.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=2e-4, atol=2e-5)


def test_short_sequences_and_other_dtypes_use_numpy():
    assert isinstance(L.cell_arithmetic(2, 3, np.dtype(np.float32), 1), L.NumpyCell)  # a cell's step
    assert isinstance(L.cell_arithmetic(2, 3, np.dtype(np.float16), 50), L.NumpyCell)


def test_disttorch_jit_0_turns_the_compiled_loops_off():
    code = (
        "from disttorch.kernels import jit, lstm_cell as L\n"
        "import sys, numpy as np\n"
        "print(jit.compiled(L._compile), type(L.cell_arithmetic(2, 3, np.dtype(np.float32), 50)).__name__,"
        " 'numba' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=REPO, DISTTORCH_JIT="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "NumpyCell", "False"]


def test_a_missing_numba_or_a_failed_compilation_falls_back_to_numpy(monkeypatch, caplog):
    def missing():
        raise ImportError("No module named 'numba'")

    def broken():
        raise RuntimeError("cannot cache function: no locator available")

    monkeypatch.delenv("DISTTORCH_JIT", raising=False)
    monkeypatch.setattr(jit, "_built", {})
    assert jit.compiled(missing) is None
    with caplog.at_level("WARNING", logger="disttorch.kernels"):
        assert jit.compiled(broken) is None
    assert "compiled loops unavailable (cannot cache function" in caplog.text
    assert "using NumPy" in caplog.text
    monkeypatch.setattr(L, "_compile", broken)
    assert isinstance(L.cell_arithmetic(2, 3, np.dtype(np.float32), 50), L.NumpyCell)
