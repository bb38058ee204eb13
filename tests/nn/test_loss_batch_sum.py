"""The batch sum of ``nll_loss``/``cross_entropy`` (``kernels/cascade_sum.py``) and their
16-bit forms: PyTorch's eight-level cascade, term for term, so a classification loss has
PyTorch's bits; float16/bfloat16 log-probabilities rounded where PyTorch rounds them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import disttorch as dt
from disttorch.kernels.cascade_sum import cascade_sum
from disttorch.kernels.vml import c_log

rng = np.random.default_rng(4)


def _loop(terms, valid):
    """The cascade written as PyTorch's kernel loops, one entry at a time."""
    n, levels = len(terms), 8
    power = max(4, math.ceil(math.log2(n)) // 4) if n > 1 else 4
    mask = (1 << power) - 1
    parts = [terms.dtype.type(0)] * levels
    for b in range(n):
        if not valid[b]:
            continue
        parts[0] = parts[0] + terms[b]
        for j in range(levels - 1):
            if b & (mask << (j * power)):
                break
            parts[j + 1], parts[j] = parts[j + 1] + parts[j], terms.dtype.type(0)
    total = terms.dtype.type(0)
    for p in parts:
        total = total + p
    return total


@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 17, 256, 257, 300, 5000, 65537])
def test_cascade_adds_as_the_loop_does(n):
    terms = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
    valid = rng.random(n) > 0.2
    assert cascade_sum(terms, valid) == _loop(terms, valid)
    assert cascade_sum(terms) == _loop(terms, np.ones(n, bool))


def test_cascade_is_not_a_plain_sum():
    """Some batch sums round otherwise than NumPy's pairwise sum (the test can fail)."""
    differs = 0
    for _ in range(50):
        terms = rng.standard_normal(300).astype(np.float32)
        differs += cascade_sum(terms) != terms.sum()
    assert differs > 5


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("weighted", [False, True])
def test_classification_losses_match_pytorch(torch, dtype, weighted):
    """Batch means and sums of ``(N, C)`` losses are PyTorch's bits (with class weights and
    ignored targets): ``nll_loss`` of the same log-probabilities in every dtype, and
    ``cross_entropy`` in the 16-bit types, whose log-softmax rounds as PyTorch's does.
    (float32 ``cross_entropy`` sums the same way, but its log-softmax may differ from
    PyTorch's vectorised ``exp``/``log`` in the last bit, and so the loss.) Gradients are
    within a unit in the last place of the 16-bit type."""
    for n in (7, 300):
        x = rng.standard_normal((n, 10)).astype(np.float32) * 3
        y = rng.integers(0, 10, n)
        y[0] = -100
        w = rng.uniform(0.2, 2.0, 10).astype(np.float32)
        for reduction in ("mean", "sum"):
            for name in ("cross_entropy", "nll_loss"):
                results = []
                logp = torch.log_softmax(torch.tensor(x).to(getattr(torch, dtype)), 1).float().numpy()
                for lib in (torch, dt):
                    d = getattr(lib, dtype)
                    xi = lib.tensor(logp if name == "nll_loss" else x).to(d).requires_grad_(True)
                    inp = xi
                    weight = lib.tensor(w).to(d) if weighted else None
                    loss = getattr(lib.nn.functional, name)(
                        inp, lib.tensor(y), weight=weight, reduction=reduction
                    )
                    loss.backward()
                    results.append((loss.detach().double().item(), xi.grad.double().numpy()))
                (loss_t, grad_t), (loss_d, grad_d) = results
                if name == "nll_loss" or dtype in ("bfloat16", "float16"):
                    assert loss_d == loss_t, (name, n, reduction)
                else:  # (float64 logits: NumPy's exp/log may differ from PyTorch's in the last bit)
                    assert loss_d == pytest.approx(loss_t, rel=1e-12 if dtype == "float64" else 1e-6)
                ulp = {"bfloat16": 2.0**-7, "float16": 2.0**-10}.get(dtype, 1e-6)
                np.testing.assert_allclose(grad_d, grad_t, rtol=0, atol=2 * ulp * np.abs(grad_t).max())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("seed", range(3))
def test_spatial_class_losses_add_up_as_pytorch(torch, dtype, seed):
    """``nll_loss`` and ``cross_entropy`` of ``(N, C, d1, d2)`` inputs reduce through the
    cascade in ``(N, d1, d2)`` order (PyTorch's ``nll_loss2d``): the loss's bits (NumPy's
    pairwise sum gave another in most draws), and so ``nll_loss``'s 16-bit gradients'."""
    gen = np.random.default_rng(seed)
    shape = (int(gen.integers(1, 5)), 10, int(gen.integers(1, 30)), int(gen.integers(1, 30)))
    x = gen.standard_normal(shape).astype(np.float32)
    y = gen.integers(0, 10, (shape[0], *shape[2:]))
    y.flat[0] = -100
    w = gen.uniform(0.2, 2.0, 10).astype(np.float32)
    results = []
    for lib in (torch, dt):
        d = getattr(lib, dtype)
        xi = lib.tensor(x).to(d).requires_grad_(True)
        found = []
        for fn in (lib.nn.functional.nll_loss, lib.nn.functional.cross_entropy):
            for weight in (None, lib.tensor(w).to(d)):
                for reduction in ("mean", "sum"):
                    loss = fn(xi, lib.tensor(y), weight, reduction=reduction)
                    found.append(loss.detach().float().numpy())
                    if fn is lib.nn.functional.nll_loss:  # (cross_entropy's: its exp's last bit)
                        (grad,) = lib.autograd.grad(loss, xi)
                        found.append(grad.float().numpy())
        results.append(found)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16_bit_log_softmax_matches_pytorch(torch, dtype):
    x = rng.standard_normal((64, 1000)).astype(np.float32)
    g = rng.standard_normal((64, 1000)).astype(np.float32)
    results = []
    for lib in (torch, dt):
        d = getattr(lib, dtype)
        xi = lib.tensor(x).to(d).requires_grad_(True)
        out = lib.log_softmax(xi, -1)
        out.backward(lib.tensor(g).to(d))
        results.append((out.detach().float().numpy(), xi.grad.float().numpy()))
    assert np.array_equal(results[1][0], results[0][0])
    assert np.count_nonzero(results[1][1] != results[0][1]) < 20  # exp may differ in the last bit


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_16_bit_label_smoothing_matches_pytorch(torch, dtype):
    """``cross_entropy(label_smoothing=)`` on 16-bit logits is PyTorch's composition, each
    step rounded (the fused float32 kernel was up to an ulp off in the loss, 2 in gradients):
    with weights, ignored targets, every reduction, a spatial and an unbatched input."""
    x = rng.standard_normal((6, 10, 3)).astype(np.float32) * 2
    y = rng.integers(0, 10, (6, 3))
    y[0, 1] = -100
    w = rng.uniform(0.2, 2.0, 10).astype(np.float32)
    g = rng.standard_normal((6, 3)).astype(np.float32)
    results = []
    for lib in (torch, dt):
        d = getattr(lib, dtype)
        F = lib.nn.functional
        xi = lib.tensor(x).to(d).requires_grad_(True)
        out = []
        for weight in (None, lib.tensor(w).to(d)):
            for reduction in ("mean", "sum", "none"):
                out.append(
                    F.cross_entropy(xi, lib.tensor(y), weight, reduction=reduction, label_smoothing=0.15)
                )
        out.append(F.cross_entropy(xi[:, :, 0], lib.tensor(y[:, 0]), label_smoothing=0.3))
        out.append(F.cross_entropy(xi[0, :, 2], lib.tensor(y[0, 2]), label_smoothing=0.3))
        total = sum((o * lib.tensor(g).to(d)).sum() if o.ndim else o for o in out)
        total.backward()
        results.append([o.detach().float().numpy() for o in out] + [xi.grad.float().numpy()])
    for got, want in zip(results[1][:-1], results[0][:-1]):
        np.testing.assert_array_equal(got, want)
    # the gradient goes through log_softmax's backward, whose exp may differ in the last bit
    (got, want), ulp = (results[1][-1], results[0][-1]), {"bfloat16": 2.0**-7, "float16": 2.0**-10}[dtype]
    assert np.count_nonzero(got != want) <= 2
    np.testing.assert_allclose(got, want, rtol=4 * ulp, atol=0)


@pytest.mark.parametrize("n", [7, 1000, 40000])
def test_elementwise_losses_reduce_in_pytorchs_order(torch, n):
    """``mse_loss``, ``l1_loss``, ``smooth_l1_loss`` and ``binary_cross_entropy`` reduce with
    PyTorch's ``loss.mean()``/``sum()`` order (``kernels/torch_sum.py``): their bits (without
    numba, binary cross-entropy's NumPy logs may be a unit off PyTorch's C library's)."""
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy"):
        for reduction in ("mean", "sum"):
            ours = getattr(dt.nn.functional, name)(dt.from_numpy(a), dt.from_numpy(b), reduction=reduction)
            theirs = getattr(torch.nn.functional, name)(
                torch.from_numpy(a), torch.from_numpy(b), reduction=reduction
            )
            if name == "binary_cross_entropy" and c_log(a) is None:  # NumPy's float32 logs
                assert ours.item() == pytest.approx(theirs.item(), rel=1e-6)
            else:
                assert ours.item() == theirs.item(), (name, reduction)


@pytest.mark.parametrize("seed", range(4))
def test_binary_cross_entropy_entries_are_pytorchs_for_every_draw(torch, seed):
    """float32 ``binary_cross_entropy`` per entry is PyTorch's scalar loop: the C library's
    ``logf``/``log1pf`` (NumPy's float32 ``log`` was a unit off in some 10% of the entries,
    so the reduced loss of 7 entries differed in some 7% of the draws)."""
    gen = np.random.default_rng(100 + seed)
    a, b, w = gen.random((3, 4096), dtype=np.float32)
    a[:3] = (0.0, 1.0, 1e-30)  # (the logs clamped at -100)
    for weight in (None, w):
        got, want = (
            lib.nn.functional.binary_cross_entropy(
                lib.from_numpy(a), lib.from_numpy(b), None if weight is None else lib.from_numpy(weight),
                reduction="none",
            ).numpy()
            for lib in (dt, torch)
        )  # fmt: skip
        if c_log(a) is None:  # without numba: NumPy's logs
            np.testing.assert_allclose(got, want, rtol=3e-7)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("jit", ["1", "0"])  # the compiled loop (with numba) and the NumPy form
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 17, 300, 65537])
def test_both_cascade_forms_give_the_loops_bits(monkeypatch, n, dtype, jit):
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    gen = np.random.default_rng(n)  # (its own draws: the module's stream feeds the tests above)
    terms = (gen.standard_normal(n) * 10.0 ** gen.integers(-3, 4, n)).astype(dtype)
    valid = gen.random(n) > 0.2
    for counted in (valid, None):
        got, expected = (
            cascade_sum(terms, counted),
            _loop(terms, np.ones(n, bool) if counted is None else counted),
        )
        assert type(got) is dtype and got.tobytes() == expected.tobytes()
    negative_zeros = np.full(n, -0.0, dtype)  # added from a zero, as PyTorch's loop: 0.0
    assert cascade_sum(negative_zeros).tobytes() == dtype(0).tobytes()


@pytest.mark.parametrize("shape", [(6, 4), (0, 4), (3, 4, 2, 5)])
def test_class_index_picks_as_take_along_axis(shape):
    """The loss's pick of each entry's target class is NumPy's take_along_axis over dim 1."""
    from disttorch.nn.functional.loss import _class_index

    gen = np.random.default_rng(0)
    a = gen.standard_normal(shape)
    t = gen.integers(0, shape[1], (shape[0],) + shape[2:])
    index = _class_index(t)
    np.testing.assert_array_equal(a[index], np.take_along_axis(a, t[:, None], 1)[:, 0])
    a[index] = -1.0  # written back in place
    assert (np.take_along_axis(a, t[:, None], 1) == -1.0).all()
