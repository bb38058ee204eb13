"""Float32 ``softplus`` and ``logsigmoid`` with PyTorch's kernels' steps (``kernels/softplus.py``):
SLEEF's ``expf``/``log1pf`` on whole 32-element blocks, the C library's after them (softplus),
SLEEF's on every element (logsigmoid); forward and backward, contiguous, transposed and
sliced inputs, rows of every length."""

import numpy as np
import pytest

import disttorch as dt

VIEWS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(0, -1),
    "sliced": lambda t: t[..., ::2],
}


def _run(lib, x, g, view, fn):
    xt = VIEWS[view](lib.from_numpy(x.copy())).requires_grad_(True)
    out = fn(lib, xt)
    out.backward(lib.from_numpy(g[: out.numel()].reshape(tuple(out.shape))))
    return out.detach().numpy(), xt.grad.numpy()


FUNCTIONS = {
    "softplus": lambda lib, t: lib.nn.functional.softplus(t),
    "softplus beta 2 threshold 3": lambda lib, t: lib.nn.functional.softplus(t, 2.0, 3.0),
    "logsigmoid": lambda lib, t: lib.nn.functional.logsigmoid(t),
}


@pytest.mark.parity
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_float32_softplus_and_logsigmoid_have_pytorchs_bits(torch, threads, name):
    pytest.importorskip("numba")
    rng = np.random.default_rng(threads)
    before = (dt.get_num_threads(), torch.get_num_threads())
    dt.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        for shape in [(5,), (37,), (3, 70), (4, 9, 33), (2, 64)]:
            x = (rng.standard_normal(shape) * 6).astype(np.float32)
            x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
            g = rng.standard_normal(x.size).astype(np.float32)
            for view in VIEWS:
                ours = _run(dt, x, g, view, FUNCTIONS[name])
                theirs = _run(torch, x, g, view, FUNCTIONS[name])
                for what, a, b in zip(("output", "gradient"), ours, theirs):
                    np.testing.assert_array_equal(a, b, err_msg=f"{shape} {view} {what}")
    finally:
        dt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


@pytest.mark.parametrize("jit", ["1", "0"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_float32_softplus_and_logsigmoid_agree_with_float64(monkeypatch, jit, name):
    """Compiled and NumPy forms, against the float64 op (checked by gradcheck)."""
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    x = (np.random.default_rng(0).standard_normal((3, 70)) * 6).astype(np.float32)
    g = np.random.default_rng(1).standard_normal(x.size)
    for view in VIEWS:
        narrow = _run(dt, x, g.astype(np.float32), view, FUNCTIONS[name])
        wide = _run(dt, x.astype(np.float64), g, view, FUNCTIONS[name])
        for a, b in zip(narrow, wide):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_logsigmoid_float64_gradients():
    x = dt.tensor(np.random.default_rng(2).standard_normal((4, 5)) * 4, requires_grad=True)
    assert dt.autograd.gradcheck(dt.nn.functional.logsigmoid, (x,))
    assert dt.autograd.gradgradcheck(dt.nn.functional.logsigmoid, (x,))
