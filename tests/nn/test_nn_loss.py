"""Losses: closed-form values, float64 gradient checks, reductions, weights, ignore_index,
label smoothing, K-dim inputs and PyTorch's error messages."""

import numpy as np
import pytest
from parity_helpers import both, check

import disttorch as dt
from disttorch import nn
from disttorch.autograd import gradcheck
from disttorch.kernels.vec_exp import compiled_exp
from disttorch.nn import functional as F


def f64(*shape, seed=0, requires_grad=True):
    dt.manual_seed(seed)
    return dt.randn(*shape, dtype=dt.float64, requires_grad=requires_grad)


def log_softmax_np(x, axis=1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


X = f64(4, 5, requires_grad=False)
T = dt.tensor([1, 0, 4, 2])
W = dt.tensor([0.5, 1.0, 2.0, 1.5, 0.2], dtype=dt.float64)


# ---------------------------------------------------------------------- cross entropy / nll
def test_cross_entropy_closed_form():
    lp = log_softmax_np(X.numpy())
    picked = -lp[np.arange(4), T.numpy()]
    np.testing.assert_allclose(F.cross_entropy(X, T).item(), picked.mean())
    np.testing.assert_allclose(F.cross_entropy(X, T, reduction="sum").item(), picked.sum())
    np.testing.assert_allclose(F.cross_entropy(X, T, reduction="none").numpy(), picked)
    w = W.numpy()[T.numpy()]
    np.testing.assert_allclose(F.cross_entropy(X, T, weight=W).item(), (picked * w).sum() / w.sum())
    assert abs(F.cross_entropy(dt.zeros(2, 4), dt.tensor([1, 2])).item() - np.log(4)) < 1e-6


def test_cross_entropy_ignore_index_and_label_smoothing():
    lp = log_softmax_np(X.numpy())
    t = dt.tensor([1, -100, 4, 2])
    keep = np.array([0, 2, 3])
    nll = -lp[keep, t.numpy()[keep]]
    np.testing.assert_allclose(F.cross_entropy(X, t).item(), nll.mean())
    eps = 0.2
    smooth = -lp[keep].sum(1)
    expected = (1 - eps) * nll.mean() + eps / 5 * smooth.mean()
    np.testing.assert_allclose(F.cross_entropy(X, t, label_smoothing=eps).item(), expected)
    w = W.numpy()
    wt = w[t.numpy()[keep]]
    expected_w = ((1 - eps) * (nll * wt).sum() + eps / 5 * (-(lp[keep] * w).sum(1)).sum()) / wt.sum()
    np.testing.assert_allclose(F.cross_entropy(X, t, weight=W, label_smoothing=eps).item(), expected_w)
    assert np.isnan(F.cross_entropy(X, dt.full((4,), -100)).item())


def test_cross_entropy_probability_targets():
    p = F.softmax(f64(4, 5, seed=3, requires_grad=False), 1)
    lp = log_softmax_np(X.numpy())
    np.testing.assert_allclose(F.cross_entropy(X, p).item(), -(lp * p.numpy()).sum(1).mean())
    smoothed = p.numpy() * 0.9 + 0.1 / 5
    np.testing.assert_allclose(
        F.cross_entropy(X, p, label_smoothing=0.1, weight=W).item(),
        -(lp * smoothed * W.numpy()).sum(1).mean(),
    )
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(X, p, ignore_index=1)
    # one class: every term is 0 and PyTorch negates the whole sum, giving -0.0
    one = dt.rand(4, 1)
    for reduction in ("mean", "sum", "none"):
        assert np.signbit(F.cross_entropy(dt.randn(4, 1), one, reduction=reduction).numpy()).all()


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"reduction": "sum"},
        {"reduction": "none"},
        {"weight": W},
        {"label_smoothing": 0.1},
        {"ignore_index": 0, "weight": W},
        {"ignore_index": 4, "label_smoothing": 0.3, "weight": W},
    ],
)
def test_cross_entropy_and_nll_gradcheck(kw):
    x = f64(4, 5)
    assert gradcheck(lambda a: F.cross_entropy(a, T, **kw), (x,))
    nll_kw = {k: v for k, v in kw.items() if k != "label_smoothing"}
    assert gradcheck(lambda a: F.nll_loss(a, T, **nll_kw), (x,))


def test_cross_entropy_backward_is_softmax_minus_onehot():
    x = f64(4, 5)
    F.cross_entropy(x, T, reduction="sum").backward()
    p = np.exp(log_softmax_np(x.detach().numpy()))
    p[np.arange(4), T.numpy()] -= 1
    np.testing.assert_allclose(x.grad.numpy(), p, rtol=1e-12)


def test_cross_entropy_k_dim_and_unbatched():
    x = f64(2, 3, 4, 2)
    t = dt.randint(0, 3, (2, 4, 2))
    lp = log_softmax_np(x.detach().numpy(), axis=1)
    picked = -np.take_along_axis(lp, t.numpy()[:, None], 1)[:, 0]
    np.testing.assert_allclose(F.cross_entropy(x, t, reduction="none").detach().numpy(), picked)
    assert gradcheck(lambda a: F.cross_entropy(a, t, label_smoothing=0.1), (x,))
    x1 = f64(5)
    out = F.cross_entropy(x1, dt.tensor(2), reduction="none")
    assert out.shape == ()
    np.testing.assert_allclose(out.item(), -log_softmax_np(x1.detach().numpy()[None])[0, 2])
    assert gradcheck(lambda a: F.cross_entropy(a, dt.tensor(2)), (x1,))
    p = F.softmax(f64(2, 3, 4, seed=1, requires_grad=False), 1)
    assert gradcheck(lambda a: F.cross_entropy(a, p), (f64(2, 3, 4),))


def test_class_target_errors():
    with pytest.raises(IndexError, match="Target 10 is out of bounds."):
        F.cross_entropy(dt.randn(3, 5), dt.tensor([1, 2, 10]))
    with pytest.raises(IndexError, match="Target -3 is out of bounds."):
        F.nll_loss(dt.randn(3, 5), dt.tensor([1, 2, -3]))
    with pytest.raises(
        ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)."
    ):
        F.cross_entropy(dt.randn(3, 5), dt.tensor([1, 2]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[3, 2\], got \[3, 3\]"):
        F.cross_entropy(dt.randn(3, 5, 2), dt.zeros(3, 3, dtype=dt.int64))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.cross_entropy(dt.randn(3, 5), dt.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.cross_entropy(dt.randn(3, 5), dt.tensor([0, 0, 0]), reduction="bad")


_TARGET_SHAPES = [((1, 5), ()), ((2, 5, 3), ()), ((0, 5), ()), ((3, 5), (2, 2)), ((1, 5), (1, 1))]
_TARGET_SHAPES += [((5,), (2,)), ((5,), (1, 1)), ((5,), (1,)), ((5,), ())]


def _class_target_story(L):
    """Errors for mismatched class-target shapes, in PyTorch's order, and the sign of a
    zero loss (PyTorch adds the entries up from a zero)."""
    seen = []
    for loss in (L.nn.functional.cross_entropy, L.nn.functional.nll_loss):
        for x, t in _TARGET_SHAPES:
            try:
                out = loss(L.zeros(x), L.zeros(t, dtype=L.int64))
                seen.append(str(out))
            except (ValueError, IndexError, RuntimeError) as e:
                seen.append(f"{type(e).__name__}: {e}")
    for reduction in ("mean", "sum", "none"):
        seen += [
            str(L.nn.functional.nll_loss(L.zeros(x), L.zeros(t, dtype=L.int64), reduction=reduction))
            for x, t in (((5,), ()), ((2, 5), (2,)))
        ]
    return seen


@pytest.mark.parity
def test_class_target_shapes_and_zero_losses_as_pytorchs(torch):
    assert _class_target_story(dt) == _class_target_story(torch)


def test_nll_loss_closed_form():
    lp = F.log_softmax(X, 1)
    expected = -lp.numpy()[np.arange(4), T.numpy()]
    np.testing.assert_allclose(F.nll_loss(lp, T).item(), expected.mean())
    w = W.numpy()[T.numpy()]
    np.testing.assert_allclose(F.nll_loss(lp, T, weight=W).item(), (expected * w).sum() / w.sum())
    np.testing.assert_allclose(nn.NLLLoss(reduction="none")(lp, T).numpy(), expected)


# ---------------------------------------------------------------------- regression losses
Y = f64(4, 5, seed=1)


@pytest.mark.parametrize(
    "fn, per_entry",
    [
        (F.mse_loss, lambda d: d * d),
        (F.l1_loss, np.abs),
        (F.smooth_l1_loss, lambda d: np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)),
        (
            lambda a, b, **k: F.smooth_l1_loss(a, b, beta=0.5, **k),
            lambda d: np.where(np.abs(d) < 0.5, 0.5 * d * d / 0.5, np.abs(d) - 0.25),
        ),
        (F.huber_loss, lambda d: np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)),
        (
            lambda a, b, **k: F.huber_loss(a, b, delta=0.3, **k),
            lambda d: np.where(np.abs(d) < 0.3, 0.5 * d * d, 0.3 * (np.abs(d) - 0.15)),
        ),
    ],
)
def test_regression_losses(fn, per_entry):
    x = f64(4, 5)
    d = x.detach().numpy() - Y.detach().numpy()
    np.testing.assert_allclose(fn(x, Y).item(), per_entry(d).mean())
    np.testing.assert_allclose(fn(x, Y, reduction="sum").item(), per_entry(d).sum())
    np.testing.assert_allclose(fn(x, Y, reduction="none").detach().numpy(), per_entry(d))
    for reduction in ("mean", "none"):
        assert gradcheck(lambda a, b: fn(a, b, reduction=reduction), (x, Y))


def test_regression_broadcast_warns_and_mismatch_raises():
    with pytest.warns(UserWarning, match="Using a target size"):
        out = F.mse_loss(dt.zeros(3, 5), dt.ones(3, 1))
    assert out.item() == 1.0
    with pytest.raises(
        RuntimeError, match="The size of tensor a \\(5\\) must match the size of tensor b \\(4\\)"
    ):
        with pytest.warns(UserWarning):
            F.mse_loss(dt.randn(3, 5), dt.randn(3, 4))


# ---------------------------------------------------------------------- binary losses
def test_binary_cross_entropy():
    dt.manual_seed(0)
    p = (dt.rand(4, 5, dtype=dt.float64) * 0.8 + 0.1).requires_grad_()
    y = dt.rand(4, 5, dtype=dt.float64, requires_grad=True)
    pv, yv = p.detach().numpy(), y.detach().numpy()
    per = -(yv * np.log(pv) + (1 - yv) * np.log(1 - pv))
    np.testing.assert_allclose(F.binary_cross_entropy(p, y).item(), per.mean())
    w = dt.rand(5, dtype=dt.float64)
    np.testing.assert_allclose(
        F.binary_cross_entropy(p, y, weight=w, reduction="sum").item(), (per * w.numpy()).sum()
    )
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b, weight=w), (p, y))
    assert F.binary_cross_entropy(dt.tensor([0.0]), dt.tensor([1.0])).item() == 100.0
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(dt.tensor([1.5]), dt.tensor([1.0]))
    with pytest.raises(ValueError, match="that is different to the input size"):
        F.binary_cross_entropy(dt.rand(3), dt.rand(4))


def test_binary_cross_entropy_with_logits():
    x = f64(4, 5)
    dt.manual_seed(1)
    y = dt.rand(4, 5, dtype=dt.float64, requires_grad=True)
    pw = dt.tensor([1.0, 2.0, 3.0, 0.5, 1.0], dtype=dt.float64)
    s = 1 / (1 + np.exp(-x.detach().numpy()))
    yv = y.detach().numpy()
    per = -(pw.numpy() * yv * np.log(s) + (1 - yv) * np.log(1 - s))
    np.testing.assert_allclose(F.binary_cross_entropy_with_logits(x, y, pos_weight=pw).item(), per.mean())
    assert gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=pw), (x, y))
    assert gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"), (x, y))
    big = F.binary_cross_entropy_with_logits(
        dt.tensor([1000.0, -1000.0]), dt.tensor([0.0, 1.0]), reduction="none"
    )
    np.testing.assert_allclose(big.numpy(), [1000.0, 1000.0])
    with pytest.raises(
        ValueError, match=r"Target size \(disttorch.Size\(\[4\]\)\) must be the same as input size"
    ):
        F.binary_cross_entropy_with_logits(dt.rand(3), dt.rand(4))


def test_kl_div():
    x = F.log_softmax(f64(4, 5), 1)
    q = F.softmax(f64(4, 5, seed=2, requires_grad=False), 1)
    xv, qv = x.detach().numpy(), q.numpy()
    per = qv * (np.log(qv) - xv)
    np.testing.assert_allclose(F.kl_div(x, q, reduction="batchmean").item(), per.sum() / 4)
    np.testing.assert_allclose(F.kl_div(x, q.log(), reduction="sum", log_target=True).item(), per.sum())
    with pytest.warns(UserWarning, match="batchmean"):
        np.testing.assert_allclose(F.kl_div(x, q).item(), per.mean())
    leaf = f64(4, 5)
    target = dt.rand(4, 5, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction="batchmean"), (leaf, target))
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), (leaf, f64(4, 5, seed=7)))
    assert F.kl_div(dt.zeros(2), dt.zeros(2), reduction="sum").item() == 0.0


# ---------------------------------------------------------------------- loss modules
def test_loss_modules_forward_options():
    ce = nn.CrossEntropyLoss(weight=W, ignore_index=0, label_smoothing=0.1, reduction="sum")
    assert "weight" in dict(ce.named_buffers())
    np.testing.assert_allclose(
        ce(X, T).item(),
        F.cross_entropy(X, T, weight=W, ignore_index=0, label_smoothing=0.1, reduction="sum").item(),
    )
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert nn.MSELoss(reduction="none")(X, X).shape == (4, 5)
    assert nn.L1Loss(size_average=False).reduction == "sum"
    assert nn.SmoothL1Loss(beta=0.5).beta == 0.5 and nn.HuberLoss(delta=2.0).delta == 2.0
    pw = dt.ones(5)
    assert nn.BCEWithLogitsLoss(pos_weight=pw).pos_weight is pw
    assert nn.KLDivLoss(reduction="batchmean", log_target=True).log_target
    p = dt.full((2,), 0.5)
    np.testing.assert_allclose(nn.BCELoss()(p, dt.ones(2)).item(), np.log(2), rtol=1e-6)


def test_regression_losses_support_double_backward():
    from disttorch.autograd import gradgradcheck

    x, y = f64(3, 4), f64(3, 4, seed=5)
    assert gradgradcheck(F.mse_loss, (x, y))
    assert gradgradcheck(lambda a, b: F.huber_loss(a, b, delta=0.5, reduction="sum"), (x, y))
    loss = F.mse_loss(x, y, reduction="sum")
    (gx,) = dt.autograd.grad(loss, x, create_graph=True)
    (hx,) = dt.autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(hx.numpy(), 2.0)


@pytest.mark.parametrize(
    "kw", [{}, {"reduction": "none"}, {"weight": W, "label_smoothing": 0.2}, {"ignore_index": 0}]
)
def test_cross_entropy_double_backward(kw):
    from disttorch.autograd import gradgradcheck

    assert gradgradcheck(lambda a: F.cross_entropy(a, T, **kw), (f64(4, 5),))
    assert gradgradcheck(lambda a: F.cross_entropy(a, dt.tensor(3), **kw), (f64(5),))
    p = F.softmax(f64(4, 5, seed=3, requires_grad=False), 1)
    assert gradgradcheck(lambda a: F.cross_entropy(a, p), (f64(4, 5),))


def test_binary_and_kl_losses_double_backward():
    from disttorch.autograd import gradgradcheck

    dt.manual_seed(0)
    p = (dt.rand(3, 4, dtype=dt.float64) * 0.8 + 0.1).requires_grad_()
    y = dt.rand(3, 4, dtype=dt.float64, requires_grad=True)
    pw = dt.tensor([1.0, 2.0, 0.5, 3.0], dtype=dt.float64)
    assert gradgradcheck(F.binary_cross_entropy, (p, y))
    assert gradgradcheck(lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=pw), (f64(3, 4), y))
    assert gradgradcheck(lambda a, b: F.kl_div(a, b, reduction="batchmean"), (f64(3, 4), y))
    assert gradgradcheck(
        lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), (f64(3, 4), f64(3, 4, seed=2))
    )


# ---------------------------------------------------------------------- parity with PyTorch
N, C = 6, 5
TARGET = np.array([0, 4, 2, 2, 1, 3])
IGNORED = np.array([0, -100, 2, 2, -100, 3])
WEIGHT = np.array([0.5, 1.0, 2.0, 1.5, 0.2])


@pytest.mark.parity
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"reduction": "sum"},
        {"reduction": "none"},
        {"weight": WEIGHT},
        {"label_smoothing": 0.15},
        {"weight": WEIGHT, "label_smoothing": 0.3, "target": IGNORED},
        {"target": IGNORED, "reduction": "none"},
        {"ignore_index": 2, "weight": WEIGHT},
    ],
)
def test_cross_entropy_and_nll_parity(torch, kwargs):
    kwargs = dict(kwargs)
    target = kwargs.pop("target", TARGET)
    wkw = {"weight": kwargs.pop("weight")} if "weight" in kwargs else {}
    dx, tx = both((N, C), 4)
    dl = F.cross_entropy(dx, dt.tensor(target), **{k: dt.tensor(v) for k, v in wkw.items()}, **kwargs)
    tl = torch.nn.functional.cross_entropy(
        tx, torch.tensor(target), **{k: torch.tensor(v) for k, v in wkw.items()}, **kwargs
    )
    check(dl, tl, [dx], [tx])
    kwargs.pop("label_smoothing", None)
    dx, tx = both((N, C), 5)
    dl = F.nll_loss(dx, dt.tensor(target), **{k: dt.tensor(v) for k, v in wkw.items()}, **kwargs)
    tl = torch.nn.functional.nll_loss(
        tx, torch.tensor(target), **{k: torch.tensor(v) for k, v in wkw.items()}, **kwargs
    )
    check(dl, tl, [dx], [tx])


@pytest.mark.parity
def test_cross_entropy_k_dim_and_probability_parity(torch):
    dx, tx = both((2, C, 3, 4), 6)
    target = np.random.default_rng(0).integers(0, C, (2, 3, 4))
    check(
        F.cross_entropy(dx, dt.tensor(target), label_smoothing=0.1),
        torch.nn.functional.cross_entropy(tx, torch.tensor(target), label_smoothing=0.1),
        [dx],
        [tx],
    )
    probs = np.random.default_rng(1).dirichlet(np.ones(C), N)
    dx, tx = both((N, C), 7)
    check(
        F.cross_entropy(dx, dt.tensor(probs), weight=dt.tensor(WEIGHT), label_smoothing=0.2),
        torch.nn.functional.cross_entropy(
            tx, torch.tensor(probs), weight=torch.tensor(WEIGHT), label_smoothing=0.2
        ),
        [dx],
        [tx],
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("mse_loss", {}),
        ("l1_loss", {"reduction": "sum"}),
        ("smooth_l1_loss", {"beta": 0.5}),
        ("huber_loss", {"delta": 0.4, "reduction": "none"}),
        ("smooth_l1_loss", {"beta": 0.0}),
    ],
)
def test_regression_loss_parity(torch, name, kwargs):
    dx, tx = both((4, 3), 8)
    dy, ty = both((4, 3), 9)
    check(
        getattr(F, name)(dx, dy, **kwargs),
        getattr(torch.nn.functional, name)(tx, ty, **kwargs),
        [dx, dy],
        [tx, ty],
    )


@pytest.mark.parametrize("name, kwargs", [("mse_loss", {}), ("l1_loss", {}), ("huber_loss", {"delta": 0.5})])
def test_weighted_regression_losses_gradcheck_and_errors(name, kwargs):
    rng = np.random.default_rng(5)
    x = dt.tensor(rng.normal(size=(2, 3)), requires_grad=True)
    y = dt.tensor(rng.normal(size=(2, 3)))
    w = dt.tensor(rng.uniform(0.1, 1.0, size=(2, 3)), requires_grad=True)
    fn = getattr(F, name)
    for reduction in ("mean", "sum", "none"):
        assert gradcheck(lambda a, b: fn(a, y, reduction=reduction, weight=b, **kwargs), (x, w))
    by_count = name == "huber_loss"  # PyTorch's weighted Huber 'mean' divides by the count
    total = (fn(x, y, reduction="none", **kwargs) * w).sum()
    expected = total / (6 if by_count else w.sum())
    assert dt.allclose(fn(x, y, weight=w, **kwargs), expected)
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        fn(x, y, weight=dt.ones(3), **kwargs)


@pytest.mark.parity
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("mse_loss", {}),
        ("l1_loss", {"reduction": "sum"}),
        ("huber_loss", {"delta": 0.4}),
        ("mse_loss", {"reduction": "none"}),
    ],
)
def test_weighted_regression_loss_parity(torch, name, kwargs):
    dx, tx = both((4, 3), 8)
    dy, ty = both((4, 3), 9)
    dw, tw = both((4, 3), 10, low=0.1)
    check(
        getattr(F, name)(dx, dy, weight=dw, **kwargs),
        getattr(torch.nn.functional, name)(tx, ty, weight=tw, **kwargs),
        [dx, dy, dw],
        [tx, ty, tw],
    )


@pytest.mark.parity
def test_binary_and_kl_loss_parity(torch):
    dp, tp = both((4, 3), 10, low=0.05)
    dy, ty = both((4, 3), 11, low=0.0)
    w = np.array([0.5, 1.0, 2.0])
    check(
        F.binary_cross_entropy(dp, dy, weight=dt.tensor(w)),
        torch.nn.functional.binary_cross_entropy(tp, ty, weight=torch.tensor(w)),
        [dp, dy],
        [tp, ty],
    )
    dx, tx = both((4, 3), 12)
    dy, ty = both((4, 3), 13, low=0.0)
    check(
        F.binary_cross_entropy_with_logits(dx, dy, pos_weight=dt.tensor(w), reduction="sum"),
        torch.nn.functional.binary_cross_entropy_with_logits(
            tx, ty, pos_weight=torch.tensor(w), reduction="sum"
        ),
        [dx, dy],
        [tx, ty],
    )
    dx, tx = both((4, 3), 14)
    dy, ty = both((4, 3), 15, low=0.01)
    check(
        F.kl_div(dx, dy, reduction="batchmean"),
        torch.nn.functional.kl_div(tx, ty, reduction="batchmean"),
        [dx, dy],
        [tx, ty],
    )
    dx, tx = both((4, 3), 16)
    dy, ty = both((4, 3), 17)
    check(
        F.kl_div(dx, dy, reduction="sum", log_target=True),
        torch.nn.functional.kl_div(tx, ty, reduction="sum", log_target=True),
        [dx, dy],
        [tx, ty],
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "kw",
    [{}, {"label_smoothing": 0.2, "weight": [1.0, 2.0, 0.5]}, {"reduction": "none"}, {"reduction": "sum"}],
)
def test_probability_targets_that_require_grad_get_pytorchs_gradient(torch, kw):
    """A soft target computed from the model (distillation, say) gets a gradient too."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    results = []
    for L in (dt, torch):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        k = dict(kw, **({"weight": L.tensor(kw["weight"], dtype=L.float64)} if "weight" in kw else {}))
        out = L.nn.functional.cross_entropy(x, L.softmax(y, 1), **k)
        out.sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_margin_and_embedding_losses_on_edge_inputs_as_pytorch(torch):
    calls = [  # a class listed twice counts twice; empty rows, 16-bit floats and bad shapes refused
        lambda L: L.nn.functional.multilabel_margin_loss(
            L.tensor([[0.1, 0.5, -0.2], [0.3, 0.2, 0.9]]), L.tensor([[0, 1, -1], [2, 2, 2]])
        ),
        lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 0), L.ones(2, 0, dtype=L.int64)),
        lambda L: L.nn.functional.multilabel_margin_loss(L.ones(3), L.tensor(0)),
        lambda L: L.nn.functional.multilabel_margin_loss(L.ones(2, 3).half(), L.zeros(2, 3, dtype=L.int64)),
        lambda L: L.nn.functional.multi_margin_loss(L.ones(2, 3).bfloat16(), L.zeros(2, dtype=L.int64)),
        lambda L: L.nn.functional.multi_margin_loss(L.ones(2, 0).half(), L.zeros(2, dtype=L.int64)),
        lambda L: L.nn.functional.cosine_embedding_loss(L.ones(3), L.ones(3), L.ones(3)),
        lambda L: L.nn.functional.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 1)),
        lambda L: L.nn.functional.cosine_embedding_loss(L.ones(3), L.ones(3), L.tensor(1.0)),
        lambda L: L.nn.functional.cross_entropy(L.ones(2, 0), L.ones(2, 0)),
    ]

    def answer(L, call):
        try:
            r = call(L)
        except (RuntimeError, NotImplementedError) as e:
            return type(e).__name__, str(e)
        return str(r.dtype).split(".")[-1], f"{r.item():.5g}"  # (each loss here is one number)

    for i, call in enumerate(calls):
        assert answer(dt, call) == answer(torch, call), i


def _mse_gradient(lib, dtype_name, reduction):
    g = np.random.default_rng(2)
    x, y = (
        lib.tensor(g.standard_normal((7, 91)), dtype=lib.float32).to(getattr(lib, dtype_name)) for _ in "xy"
    )
    x.requires_grad_()
    loss = lib.nn.functional.mse_loss(x, y, reduction=reduction)
    loss.backward(lib.tensor(0.37, dtype=lib.float32).to(loss.dtype).expand(loss.shape))
    return x.grad.float().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse_loss_gradient_bits_as_pytorch(torch, dtype_name, reduction):
    """PyTorch's kernel computes ``norm * (x - y) * g`` with ``norm = 2 / n`` in the dtype, each
    step rounded to it (16-bit: not in float32 and rounded once)."""
    np.testing.assert_array_equal(
        _mse_gradient(dt, dtype_name, reduction), _mse_gradient(torch, dtype_name, reduction)
    )


def _nll_gradient(lib, dtype_name, reduction, weighted):
    g = np.random.default_rng(5)
    x = (
        lib.tensor(g.standard_normal((24, 10)), dtype=lib.float32)
        .to(getattr(lib, dtype_name))
        .requires_grad_()
    )
    target = lib.tensor(np.where(np.arange(24) % 7 == 3, -100, g.integers(0, 10, 24)))
    weight = lib.tensor(g.random(10) + 0.5, dtype=lib.float32).to(x.dtype) if weighted else None
    loss = lib.nn.functional.cross_entropy(x, target, weight, reduction=reduction)
    loss.backward(lib.tensor(np.full(tuple(loss.shape), 0.37), dtype=lib.float32).to(loss.dtype))
    return x.grad.float().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_16_bit_gradient_bits_as_pytorch(torch, dtype_name, reduction, weighted):
    """nll_loss's gradient in PyTorch's steps, each rounded to the dtype: ``weight[t] *
    -(grad / total weight)`` for the mean (21 counted targets: 1/21 is not a 16-bit number)."""
    np.testing.assert_array_equal(
        _nll_gradient(dt, dtype_name, reduction, weighted),
        _nll_gradient(torch, dtype_name, reduction, weighted),
    )


def _bce_logits_gradient(lib, dtype_name, reduction):
    g = np.random.default_rng(3)
    x = (
        lib.tensor(g.standard_normal((6, 70)), dtype=lib.float32)
        .to(getattr(lib, dtype_name))
        .requires_grad_()
    )
    y = lib.tensor(g.random((6, 70)), dtype=lib.float32).to(x.dtype)
    w = lib.tensor(g.random(70) + 0.5, dtype=lib.float32).to(x.dtype)
    loss = lib.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w, reduction=reduction)
    loss.backward(lib.tensor(np.full(tuple(loss.shape), 0.37), dtype=lib.float32).to(loss.dtype))
    return x.grad.float().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["float32", "bfloat16"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_bce_with_logits_gradient_bits_as_pytorch(torch, dtype_name, reduction):
    """PyTorch's order, each step rounded to the dtype: ``(sigmoid(x) - y) * grad * weight / n``
    (without numba float32's sigmoid takes NumPy's ``exp``, not PyTorch's SLEEF one: a few
    ulps of the sigmoid apart, which ``sigmoid(x) - y`` may cancel down to)."""
    got, want = (_bce_logits_gradient(lib, dtype_name, reduction) for lib in (dt, torch))
    if dtype_name == "float32" and not compiled_exp():
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["float32", "float16"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_bce_input_gradient_bits_as_pytorch(torch, dtype_name, reduction):
    """``binary_cross_entropy``'s input gradient in PyTorch's order: ``grad * (p - y) /
    max((1 - p) p, eps)``, then times the weight, then over n (the weight first gave another
    last bit in a third of the entries)."""
    gen = np.random.default_rng(5)
    p, y, w, g = gen.random((4, 2000), dtype=np.float32)
    grads = []
    for lib in (dt, torch):
        d = getattr(lib, dtype_name)
        x = lib.from_numpy(p).to(d).requires_grad_()
        loss = lib.nn.functional.binary_cross_entropy(
            x, lib.from_numpy(y).to(d), lib.from_numpy(w).to(d), reduction=reduction
        )
        loss.backward(lib.from_numpy(g).to(d) if reduction == "none" else None)
        grads.append(x.grad.float().numpy())
    np.testing.assert_array_equal(*grads)


def test_class_targets_are_long_or_byte():
    x = dt.randn(2, 3)
    for fn in (F.cross_entropy, F.nll_loss):
        with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
            fn(x, dt.tensor([0, 2], dtype=dt.int32))
        assert fn(x, dt.tensor([0, 2], dtype=dt.uint8)).shape == ()
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Byte"):
        F.cross_entropy(dt.randn(2, 3, 4), dt.zeros(2, 4, dtype=dt.uint8))


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_gradient_bits_plain_and_recorded_as_pytorch(torch, dtype, reduction):
    """nll_loss's backward gives PyTorch's bits whether its steps run on arrays (a plain
    backward) or are recorded (``create_graph``)."""
    gen = np.random.default_rng(7)
    x = gen.standard_normal((N, C)).astype(np.float32)
    out_grad = gen.standard_normal(N if reduction == "none" else ()).astype(np.float32)
    grads = []
    for lib in (dt, torch):
        xt = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        weight = lib.tensor(WEIGHT.astype(np.float32)).to(getattr(lib, dtype))
        loss = lib.nn.functional.nll_loss(xt, lib.tensor(IGNORED), weight=weight, reduction=reduction)
        g = lib.tensor(out_grad).to(getattr(lib, dtype))
        (recorded,) = lib.autograd.grad(loss, xt, g, create_graph=True)
        loss.backward(g)
        grads += [xt.grad.float().numpy(), recorded.detach().float().numpy()]
    for got in grads[:2]:
        assert got.tobytes() == grads[2].tobytes()


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_nll_loss_of_an_ignored_entry_is_zero_not_negative_zero(torch, dtype):
    """An ignored entry's unreduced loss is 0.0, as PyTorch writes it (``-x * 0`` would be
    -0.0 for a positive input)."""
    x = np.abs(np.random.default_rng(8).standard_normal((N, C))).astype(np.float32)
    losses = [
        lib.nn.functional.nll_loss(
            lib.tensor(x).to(getattr(lib, dtype)), lib.tensor(IGNORED), reduction="none"
        )
        for lib in (dt, torch)
    ]
    ours, theirs = (loss.float().numpy() for loss in losses)
    assert ours.tobytes() == theirs.tobytes()
