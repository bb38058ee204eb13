"""``lerp`` and ``lerp_``: rounded as PyTorch's CPU kernel (from the nearer end, one fused
multiply-add in float32 or float64), gradients to all three operands, split the same over threads."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck
from disttorch.kernels import threads

rng = np.random.default_rng(11)
A = rng.standard_normal(4099).astype(np.float32)
B = rng.standard_normal(4099).astype(np.float32)
W = rng.uniform(-1.0, 2.0, 4099).astype(np.float32)


def test_weight_one_gives_end_exactly():
    """From the nearer end, ``w = 1`` is ``end`` and ``w = 0`` is ``start`` to the bit
    (``start + 1 * (end - start)`` is not)."""
    a, b = dt.tensor(A * 1e3), dt.tensor(B)
    assert np.array_equal(dt.lerp(a, b, 1.0).numpy(), B)
    assert np.array_equal(dt.lerp(a, b, dt.ones(4099)).numpy(), B)
    assert np.array_equal(dt.lerp(a, b, 0.0).numpy(), A * 1e3)


def test_float32_is_one_fused_multiply_add():
    """Each element is ``fma(coeff, end - start, base)`` rounded once to float32: the exact
    value (in float64) rounded, which the unfused formula misses on many elements."""
    out = dt.lerp(dt.tensor(A), dt.tensor(B), dt.tensor(W)).numpy()
    small = np.abs(W) < 0.5
    coeff, base = np.where(small, W, W - np.float32(1)), np.where(small, A, B)
    exact = (coeff.astype(np.float64) * (B - A).astype(np.float64) + base).astype(np.float32)
    assert np.array_equal(out, exact)


def test_float64_is_one_fused_multiply_add(torch):
    """float64 is fused as well: PyTorch's bits, which the unfused formula misses on about a
    fifth of the elements."""
    a, b, w = (v.astype(np.float64) * 1.1 for v in (A, B, W))
    expected = torch.lerp(torch.tensor(a), torch.tensor(b), torch.tensor(w)).numpy()
    assert np.array_equal(dt.lerp(dt.tensor(a), dt.tensor(b), dt.tensor(w)).numpy(), expected)
    expected = torch.lerp(torch.tensor(a), torch.tensor(b), 0.3).numpy()
    assert np.array_equal(dt.lerp(dt.tensor(a), dt.tensor(b), 0.3).numpy(), expected)


@pytest.mark.parametrize("threads_n", [1, 2, 3])
def test_same_bits_for_every_thread_count(threads_n, monkeypatch):
    monkeypatch.setattr(threads, "MIN_PART_ELEMENTS", 256)
    before = dt.get_num_threads()
    dt.set_num_threads(threads_n)
    try:
        out = dt.lerp(dt.tensor(A), dt.tensor(B), 0.7).numpy()
    finally:
        dt.set_num_threads(before)
    dt.set_num_threads(1)
    try:
        assert np.array_equal(out, dt.lerp(dt.tensor(A), dt.tensor(B), 0.7).numpy())
    finally:
        dt.set_num_threads(before)


def test_gradients_of_all_operands():
    a = dt.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = dt.tensor(rng.standard_normal((1, 3)), requires_grad=True)
    w = dt.tensor(rng.uniform(-0.5, 1.5, 3), requires_grad=True)
    assert gradcheck(dt.lerp, (a, b, w))
    assert gradgradcheck(dt.lerp, (a, b, w))
    for weight in (0.3, 0.8):
        assert gradcheck(lambda x, y, s=weight: dt.lerp(x, y, s), (a, b))
    c = dt.tensor(rng.standard_normal(3) + 1j * rng.standard_normal(3), requires_grad=True)
    d = dt.tensor(rng.standard_normal(3) + 1j * rng.standard_normal(3), requires_grad=True)
    wc = dt.tensor(rng.standard_normal(3) + 1j * rng.standard_normal(3), requires_grad=True)
    assert gradcheck(dt.lerp, (c, d, wc))


def test_inplace_matches_out_of_place_and_records():
    x = dt.tensor(A.copy())
    x.lerp_(dt.tensor(B), 0.7)
    assert np.array_equal(x.numpy(), dt.lerp(dt.tensor(A), dt.tensor(B), 0.7).numpy())
    leaf = dt.tensor(rng.standard_normal(3), requires_grad=True)
    y = leaf * 1
    y.lerp_(dt.zeros(3, dtype=dt.float64), 0.25)
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), [0.75] * 3)
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype double"):
        dt.zeros(3).lerp_(dt.zeros(3, dtype=dt.float64), 0.5)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_bits_match_pytorch(torch, dtype):
    """The same bits as PyTorch, scalar weights on both sides of 0.5 and tensor weights."""
    for weight in (0.3, 0.7, W):
        args = [A, B] + ([weight] if isinstance(weight, np.ndarray) else [])

        def run(lib, args=args, weight=weight):
            ts = [lib.tensor(v).to(getattr(lib, dtype)) for v in args]
            w = ts.pop() if len(ts) == 3 else weight
            out = lib.lerp(ts[0], ts[1], w)
            inplace = ts[0].clone().lerp_(ts[1], w)
            return out.float().numpy(), inplace.float().numpy()

        ours, theirs = run(dt), run(torch)
        assert np.array_equal(ours[0], theirs[0]) and np.array_equal(ours[1], theirs[1])


@pytest.mark.parity
def test_float64_and_gradients_match_pytorch(torch):
    a, b, w = (rng.standard_normal(64) for _ in range(3))
    out = {}
    for lib in (dt, torch):
        ts = [lib.tensor(v, requires_grad=True) for v in (a, b, w)]
        y = lib.lerp(*ts)
        y.backward(lib.tensor(np.linspace(-1, 1, 64)))
        out[lib] = [y.detach().numpy()] + [t.grad.numpy() for t in ts]
    for ours, theirs in zip(out[dt], out[torch]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=1e-15)
