"""The functional ops added for the rest of ``torch.nn``: float64 gradcheck of each
differentiable op, and outputs and gradients against PyTorch (parity) on the same inputs.

A case is ``(fn, arrays, grad)``: ``fn(lib, F, *tensors)`` runs with ``lib`` = disttorch
or torch and ``F`` its ``nn.functional``; ``grad`` says which arrays require grad.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity_helpers import raised

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.nn import functional as DF

R = np.random.default_rng(0)


def rn(*shape, low=None):
    return R.uniform(low, 1.0, shape) if low is not None else R.normal(size=shape)


def ints(high, *shape):
    return R.integers(0, high, shape)


def _case(fn, arrays, grad=None):
    grad = grad if grad is not None else [a.dtype.kind == "f" for a in arrays]
    return fn, arrays, grad


IMG = rn(2, 3, 5, 6)
SMALL_IMG = rn(1, 2, 4, 5)  # bicubic reads 16 pixels per output: a smaller numerical Jacobian
WITH_NAN = np.array([np.nan, 0.3, -2.0, 1.0, -0.05, 0.1, -0.3, 0.2])
CASES = {
    "pixel_shuffle": _case(lambda L, F, x: F.pixel_shuffle(x, 2), [rn(2, 8, 3, 4)]),
    "pixel_unshuffle": _case(lambda L, F, x: F.pixel_unshuffle(x, 2), [rn(2, 2, 4, 6)]),
    "channel_shuffle": _case(lambda L, F, x: F.channel_shuffle(x, 3), [rn(2, 6, 3)]),
    "interp_nearest": _case(lambda L, F, x: F.interpolate(x, scale_factor=2), [IMG]),
    "interp_nearest_size": _case(lambda L, F, x: F.interpolate(x, size=(7, 4)), [IMG]),
    "interp_nearest_exact": _case(lambda L, F, x: F.interpolate(x, size=(9, 4), mode="nearest-exact"), [IMG]),
    "interp_linear": _case(lambda L, F, x: F.interpolate(x, scale_factor=1.7, mode="linear"), [rn(2, 3, 5)]),
    "interp_linear_ac": _case(
        lambda L, F, x: F.interpolate(x, size=9, mode="linear", align_corners=True), [rn(2, 3, 5)]
    ),
    "interp_bilinear": _case(lambda L, F, x: F.interpolate(x, size=(8, 3), mode="bilinear"), [IMG]),
    "interp_bilinear_ac": _case(
        lambda L, F, x: F.interpolate(x, scale_factor=(2, 0.5), mode="bilinear", align_corners=True), [IMG]
    ),
    "interp_bilinear_rsf": _case(
        lambda L, F, x: F.interpolate(x, scale_factor=1.3, mode="bilinear", recompute_scale_factor=True),
        [IMG],
    ),
    "interp_bicubic": _case(lambda L, F, x: F.interpolate(x, size=(9, 11), mode="bicubic"), [IMG]),
    "interp_bicubic_ac": _case(
        lambda L, F, x: F.interpolate(x, size=(4, 8), mode="bicubic", align_corners=True), [IMG]
    ),
    "interp_trilinear": _case(
        lambda L, F, x: F.interpolate(x, scale_factor=(1.5, 2, 0.7), mode="trilinear"), [rn(1, 2, 3, 4, 5)]
    ),
    "interp_area": _case(lambda L, F, x: F.interpolate(x, size=(3, 4), mode="area"), [IMG]),
    "affine_grid": _case(lambda L, F, t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False), [rn(2, 2, 3)]),
    "affine_grid3d": _case(
        lambda L, F, t: F.affine_grid(t, [1, 2, 3, 4, 2], align_corners=True), [rn(1, 3, 4)]
    ),
    "grid_sample_bilinear": _case(
        lambda L, F, x, g: F.grid_sample(x, g, align_corners=False), [IMG, rn(2, 4, 3, 2) * 1.2]
    ),
    "grid_sample_border": _case(
        lambda L, F, x, g: F.grid_sample(x, g, padding_mode="border", align_corners=True),
        [IMG, rn(2, 4, 3, 2) * 1.2],
    ),
    "grid_sample_reflection": _case(
        lambda L, F, x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=False),
        [IMG, rn(2, 4, 3, 2) * 1.5],
    ),
    "grid_sample_nearest": _case(
        lambda L, F, x, g: F.grid_sample(x, g, mode="nearest", align_corners=False),
        [IMG, rn(2, 4, 3, 2)],
        [True, False],
    ),
    "grid_sample_bicubic": _case(
        lambda L, F, x, g: F.grid_sample(x, g, mode="bicubic", align_corners=False),
        [SMALL_IMG, rn(1, 3, 2, 2) * 0.9],
    ),
    "grid_sample_bicubic_border": _case(
        lambda L, F, x, g: F.grid_sample(x, g, mode="bicubic", padding_mode="border", align_corners=True),
        [SMALL_IMG, rn(1, 3, 2, 2) * 1.3],
    ),
    "grid_sample_3d": _case(
        lambda L, F, x, g: F.grid_sample(x, g, align_corners=False),
        [rn(1, 2, 3, 4, 5), rn(1, 2, 3, 2, 3) * 1.1],
    ),
    "celu": _case(lambda L, F, x: F.celu(x, 0.7), [rn(4, 5)]),
    "rrelu_eval": _case(lambda L, F, x: F.rrelu(x, 0.1, 0.3), [rn(4, 5)]),
    "threshold": _case(lambda L, F, x: F.threshold(x, 0.1, -2.0), [rn(4, 5)]),
    "hardshrink": _case(lambda L, F, x: F.hardshrink(x, 0.3), [rn(4, 5)]),
    "softshrink": _case(lambda L, F, x: F.softshrink(x, 0.3), [rn(4, 5)]),
    # NaN stays NaN (PyTorch's kernels compare with <=), with its gradient passed through
    "threshold_nan": _case(lambda L, F, x: F.threshold(x, 0.1, -2.0), [WITH_NAN]),
    "hardshrink_nan": _case(lambda L, F, x: F.hardshrink(x, 0.3) + x.hardshrink(0.2), [WITH_NAN]),
    "softshrink_nan": _case(lambda L, F, x: F.softshrink(x, 0.3), [WITH_NAN]),
    "softplus_nan": _case(lambda L, F, x: F.softplus(x), [WITH_NAN]),
    "tanhshrink": _case(lambda L, F, x: F.tanhshrink(x), [rn(4, 5)]),
    "softsign": _case(lambda L, F, x: F.softsign(x), [rn(4, 5)]),
    "margin_ranking": _case(
        lambda L, F, a, b, y: F.margin_ranking_loss(a, b, y, margin=0.2),
        [rn(6), rn(6), np.sign(rn(6))],
        [True, True, False],
    ),
    "hinge_embedding": _case(
        lambda L, F, x, y: F.hinge_embedding_loss(x, y, margin=0.5, reduction="sum"),
        [rn(6), np.sign(rn(6))],
        [True, False],
    ),
    "hinge_embedding_other_targets": _case(  # y neither 1 nor -1: both parts, as PyTorch
        lambda L, F, x, y: F.hinge_embedding_loss(x, y, reduction="none"),
        [rn(6), np.array([1.0, -1.0, 0.5, 0.0, 2.0, -1.0])],
        [True, False],
    ),
    "soft_margin": _case(
        lambda L, F, x, y: F.soft_margin_loss(x, y), [rn(3, 4), np.sign(rn(3, 4))], [True, False]
    ),
    "multilabel_soft_margin": _case(
        lambda L, F, x, y, w: F.multilabel_soft_margin_loss(x, y, w),
        [rn(3, 4), (rn(3, 4) > 0) * 1.0, rn(4, low=0.1)],
        [True, False, False],
    ),
    "cosine_embedding": _case(
        lambda L, F, a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.1),
        [rn(5, 4), rn(5, 4), np.sign(rn(5))],
        [True, True, False],
    ),
    "multi_margin": _case(
        lambda L, F, x, y, w: F.multi_margin_loss(x, y, p=2, margin=0.7, weight=w),
        [rn(5, 4), ints(4, 5), rn(4, low=0.1)],
        [True, False, False],
    ),
    "multi_margin_p1": _case(
        lambda L, F, x, y: F.multi_margin_loss(x, y, reduction="none"), [rn(5, 4), ints(4, 5)], [True, False]
    ),
    "multilabel_margin": _case(
        lambda L, F, x, y: F.multilabel_margin_loss(x, y),
        [rn(3, 4), np.array([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])],
        [True, False],
    ),
    "triplet_margin": _case(
        lambda L, F, a, p, n: F.triplet_margin_loss(a, p, n, margin=0.5, p=1.5, swap=True),
        [rn(4, 3), rn(4, 3), rn(4, 3)],
    ),
    "triplet_distance": _case(
        lambda L, F, a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=0.4
        ),
        [rn(4, 3), rn(4, 3), rn(4, 3)],
    ),
    "poisson_nll": _case(
        lambda L, F, x, y: F.poisson_nll_loss(x, y, full=True), [rn(3, 4), rn(3, 4, low=0) * 4], [True, False]
    ),
    "poisson_nll_rate": _case(
        lambda L, F, x, y: F.poisson_nll_loss(x, y, log_input=False),
        [rn(3, 4, low=0.2), rn(3, 4, low=0) * 4],
        [True, False],
    ),
    "gaussian_nll": _case(
        lambda L, F, x, y, v: F.gaussian_nll_loss(x, y, v, full=True), [rn(3, 4), rn(3, 4), rn(3, 1, low=0.1)]
    ),
    "gaussian_nll_dims": _case(
        lambda L, F, x, y, v: F.gaussian_nll_loss(x, y, v, reduction="sum"),
        [rn(3, 4), rn(3, 4), rn(3, low=0.1)],
    ),
    "rms_norm": _case(lambda L, F, x, w: F.rms_norm(x, (4,), w), [rn(3, 4), rn(4)]),
    "rms_norm_eps": _case(lambda L, F, x: F.rms_norm(x, (3, 4), eps=1e-3), [rn(2, 3, 4)]),
    "lrn3d": _case(lambda L, F, x: F.local_response_norm(x, 3, alpha=0.1, k=2.0), [rn(2, 5, 4)]),
    "lrn4d": _case(lambda L, F, x: F.local_response_norm(x, 2, alpha=0.2, beta=0.5), [rn(2, 5, 3, 2)]),
    "unfold": _case(lambda L, F, x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), [IMG]),
    "fold": _case(lambda L, F, x: F.fold(x, (5, 6), (2, 3), padding=1, stride=(2, 1)), [rn(2, 12, 18)]),
    "max_pool3d": _case(lambda L, F, x: F.max_pool3d(x, 2, stride=1, padding=1), [rn(1, 2, 3, 4, 5)]),
    "avg_pool3d": _case(
        lambda L, F, x: F.avg_pool3d(x, (2, 3, 2), ceil_mode=True, count_include_pad=False),
        [rn(1, 2, 3, 4, 5)],
    ),
    "adaptive_avg_pool3d": _case(lambda L, F, x: F.adaptive_avg_pool3d(x, (2, 3, 2)), [rn(1, 2, 3, 4, 5)]),
    "adaptive_max_pool3d": _case(lambda L, F, x: F.adaptive_max_pool3d(x, (2, 3, 2)), [rn(1, 2, 3, 4, 5)]),
    "lp_pool1d": _case(lambda L, F, x: F.lp_pool1d(x, 2, 3, 2), [rn(2, 3, 7, low=0.1)]),
    "lp_pool2d": _case(lambda L, F, x: F.lp_pool2d(x, 3, (2, 2)), [rn(2, 3, 4, 6, low=0.1)]),
    "lp_pool3d": _case(lambda L, F, x: F.lp_pool3d(x, 2, 2), [rn(1, 2, 4, 4, 4, low=0.1)]),
    "conv_transpose3d": _case(
        lambda L, F, x, w, b: F.conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1),
        [rn(1, 2, 3, 3, 2), rn(2, 3, 2, 3, 2), rn(3)],
    ),
    "conv_tbc": _case(lambda L, F, x, w, b: F.conv_tbc(x, w, b, 1), [rn(6, 2, 3), rn(3, 3, 4), rn(4)]),
    "pdist": _case(lambda L, F, x: F.pdist(x), [rn(5, 3)]),
    "pdist_p1": _case(lambda L, F, x: F.pdist(x, 1.5), [rn(5, 3)]),
    "embedding_bag_mean": _case(
        lambda L, F, i, w, o: F.embedding_bag(i, w, o),
        [ints(10, 9), rn(10, 3), np.array([0, 2, 2, 7])],
        [False, True, False],
    ),
    "embedding_bag_sum_psw": _case(
        lambda L, F, i, w, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
        [ints(10, 9), rn(10, 3), np.array([0, 2, 2, 7]), rn(9)],
        [False, True, False, True],
    ),
    "embedding_bag_max_2d": _case(
        lambda L, F, i, w: F.embedding_bag(i, w, mode="max", padding_idx=2),
        [np.array([[1, 2, 3], [2, 2, 2], [4, 5, 1]]), rn(10, 3)],
        [False, True],
    ),
    "embedding_bag_2d_mean": _case(
        lambda L, F, i, w: F.embedding_bag(i, w), [ints(10, 4, 3), rn(10, 3)], [False, True]
    ),
    "embedding_bag_last": _case(
        lambda L, F, i, w, o: F.embedding_bag(i, w, o, include_last_offset=True, mode="sum"),
        [ints(10, 9), rn(10, 3), np.array([0, 2, 2, 9])],
        [False, True, False],
    ),
    "linear_cross_entropy": _case(
        lambda L, F, x, w, y: F.linear_cross_entropy(x, w, y, label_smoothing=0.1),
        [rn(4, 3), rn(5, 3), ints(5, 4)],
        [True, True, False],
    ),
    "ctc": _case(
        lambda L, F, lp, t: F.ctc_loss(lp.log_softmax(2), t, [6, 5, 4], [3, 2, 0]),
        [rn(6, 3, 5), np.array([[1, 2, 2], [3, 4, 0], [1, 1, 1]])],
        [True, False],
    ),
    "ctc_sum_concat": _case(
        lambda L, F, lp, t: F.ctc_loss(
            lp.log_softmax(2), t, L.tensor([6, 6]), L.tensor([2, 3]), blank=4, reduction="sum"
        ),
        [rn(6, 2, 5), np.array([1, 1, 0, 3, 0])],
        [True, False],
    ),
    "ctc_impossible": _case(
        lambda L, F, lp, t: F.ctc_loss(
            lp.log_softmax(2), t, [2, 4], [3, 1], reduction="none", zero_infinity=True
        ),
        [rn(4, 2, 3), np.array([[1, 1, 1], [2, 0, 0]])],
        [True, False],
    ),
}
NO_GRADCHECK = {"rrelu_eval", "hardshrink", "softshrink", "threshold", "grid_sample_nearest"}
NO_GRADCHECK |= {"threshold_nan", "hardshrink_nan", "softshrink_nan", "softplus_nan"}


def _ours(arrays, grad):
    return [
        dt.tensor(a, requires_grad=g) if a.dtype.kind == "f" else dt.tensor(a) for a, g in zip(arrays, grad)
    ]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, arrays, grad = CASES[name]
    if name in NO_GRADCHECK or not any(grad):
        pytest.skip("piecewise constant derivative next to kinks: checked against PyTorch instead")
    xs = _ours(arrays, grad)
    assert gradcheck(lambda *ts: fn(dt, DF, *ts), xs, atol=1e-5, rtol=1e-3)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(CASES))
def test_parity(name):
    torch = pytest.importorskip("torch")
    fn, arrays, grad = CASES[name]
    ours = _ours(arrays, grad)
    theirs = [
        torch.tensor(a, requires_grad=g) if a.dtype.kind == "f" else torch.tensor(a)
        for a, g in zip(arrays, grad)
    ]
    out_d = fn(dt, DF, *ours)
    out_t = fn(torch, torch.nn.functional, *theirs)
    np.testing.assert_allclose(out_d.detach().numpy(), out_t.detach().numpy(), rtol=1e-6, atol=1e-8)
    assert tuple(out_d.shape) == tuple(out_t.shape)
    if not any(grad):
        return
    g = R.normal(size=tuple(out_t.shape))
    out_d.backward(dt.tensor(g))
    out_t.backward(torch.tensor(g))
    for d, t, needs in zip(ours, theirs, grad):
        if needs:
            np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-8)


def test_inplace_forms_write_into_the_input_and_keep_the_graph():
    for name, args, ref in [
        ("relu_", (), lambda a: np.maximum(a, 0)),
        ("elu_", (0.5,), lambda a: np.where(a > 0, a, 0.5 * np.expm1(a))),
        ("leaky_relu_", (0.2,), lambda a: np.where(a > 0, a, 0.2 * a)),
        ("hardtanh_", (-0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
        ("threshold_", (0.1, 7.0), lambda a: np.where(a > 0.1, a, 7.0)),
        ("celu_", (2.0,), lambda a: np.where(a > 0, a, 2.0 * np.expm1(a / 2.0))),
        ("selu_", (), None),
        ("rrelu_", (), None),
    ]:
        a = rn(3, 4)
        x = dt.tensor(a.copy())
        out = getattr(DF, name)(x, *args)
        assert out is x, name
        if ref is not None:
            np.testing.assert_allclose(x.numpy(), ref(a), rtol=1e-12, err_msg=name)
    leaf = dt.tensor(rn(3), requires_grad=True)
    y = leaf * 2
    DF.threshold_(y, 0.0, 0.0)
    y.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), np.where(leaf.detach().numpy() * 2 > 0, 2.0, 0.0))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        DF.relu_(leaf)


def test_gumbel_softmax_samples_and_straight_through_gradient():
    dt.manual_seed(0)
    logits = dt.tensor(np.log(np.array([[0.7, 0.2, 0.1]] * 4000)), requires_grad=True)
    soft = DF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), 1, rtol=1e-12)
    hard = DF.gumbel_softmax(logits, tau=1.0, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(1) == 1).all()
    assert abs(h[:, 0].mean() - 0.7) < 0.03  # argmax of logits + Gumbel noise samples the categorical
    (hard * dt.tensor(np.array([1.0, 2.0, 3.0]))).sum().backward()
    assert logits.grad is not None and np.isfinite(logits.grad.numpy()).all()


def test_deprecated_upsample_names_warn_and_match_interpolate():
    x = dt.tensor(rn(1, 2, 3, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        up = DF.upsample_bilinear(x, scale_factor=2)
    np.testing.assert_array_equal(
        up.numpy(), DF.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True).numpy()
    )
    with pytest.warns(UserWarning, match="deprecated"):
        assert tuple(DF.upsample_nearest(x, size=5).shape) == (1, 2, 5, 5)
    with pytest.warns(UserWarning, match="deprecated"):
        assert tuple(DF.upsample(x, size=(4, 2)).shape) == (1, 2, 4, 2)
    with pytest.raises(RuntimeError, match="divisible by groups"):
        DF.channel_shuffle(dt.tensor(rn(1, 5, 2)), 2)


@pytest.mark.parity
@pytest.mark.parametrize("name", ["pad_reflect", "interp_bilinear", "interp_nearest", "unfold"])
def test_second_order_gradients_match_pytorch(name):
    """Padding, interpolation and unfold are linear ops whose backward is again an op:
    gradients of gradients (e.g. gradient penalties) agree with PyTorch."""
    torch = pytest.importorskip("torch")
    fns = {
        "pad_reflect": lambda F, x: F.pad(x, (2, 1, 1, 2), mode="reflect"),
        "interp_bilinear": lambda F, x: F.interpolate(x, scale_factor=1.5, mode="bilinear"),
        "interp_nearest": lambda F, x: F.interpolate(x, size=(7, 5)),
        "unfold": lambda F, x: F.unfold(x, 2, padding=1),
    }
    a = rn(2, 3, 4, 5)
    grads = []
    for lib, F in ((dt, DF), (torch, torch.nn.functional)):
        x = lib.tensor(a, requires_grad=True)
        y = fns[name](F, x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        grads.append(gg.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-9)


@pytest.mark.parity
def test_pdist_of_identical_rows_has_zero_gradient():
    torch = pytest.importorskip("torch")
    a = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]])
    xd, xt = dt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    DF.pdist(xd).sum().backward()
    torch.nn.functional.pdist(xt).sum().backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def _ctc_target_errors(lib) -> list:
    """Targets whose sizes do not fit their lengths (concatenated, padded, unbatched)."""
    lp = lib.zeros(6, 2, 5).log_softmax(2)
    lp1 = lib.zeros(6, 5).log_softmax(1)
    ctc, t = lib.nn.functional.ctc_loss, lib.tensor
    calls = [
        lambda: ctc(lp, t([1, 2, 3, 1, 1]), t([6, 6]), t([3, 3])),
        lambda: ctc(lp, t([1, 2, 3, 1, 1]), t([6, 6]), t([2, 2])),
        lambda: ctc(lp, t([[1, 2, 3], [1, 0, 0]]), t([6, 6]), t([3, 4])),
        lambda: ctc(lp, t([[1, 2], [1, 2]]), t([6, 6]), t([-1, 2])),
        lambda: ctc(lp1, t([1, 2, 0]), t(6), t(2)),
    ]
    return raised(calls)


def test_ctc_targets_that_do_not_fit_their_lengths_raise_pytorchs_errors(torch):
    # a padded target shorter than its length read past its end (NumPy's IndexError), and an
    # unbatched 1-D target was taken as padded where PyTorch reads it as concatenated
    assert _ctc_target_errors(dt) == _ctc_target_errors(torch)


def test_hinge_losses_record_clamp_min_as_pytorchs():
    """The ranking and embedding losses' hinge is ``clamp_min``, so an unreduced loss's
    ``grad_fn`` prints as PyTorch's ``ClampMinBackward0``."""
    a, b, n = (dt.tensor(rn(3, 4), requires_grad=True) for _ in range(3))
    y = dt.tensor([1.0, -1.0, 1.0])
    losses = [
        DF.triplet_margin_loss(a, b, n, reduction="none"),
        DF.triplet_margin_with_distance_loss(a, b, n, reduction="none"),
        DF.margin_ranking_loss(a[:, 0], b[:, 0], y, reduction="none"),
    ]
    assert [type(loss.grad_fn).__name__ for loss in losses] == ["ClampMinBackward0"] * 3


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_low_precision_interpolation_accumulates_in_float32(mode, dtype):
    """A float16/bfloat16 resize computes in float32 and rounds once, as PyTorch's kernels:
    the backward sums every tap of every dim before rounding (was rounded after each dim
    and each add), and nearest and bilinear's forward is the float32 one rounded (the
    other weighted modes: ``test_low_precision_weighted_interpolation_matches_pytorch``)."""
    low = getattr(dt, dtype)
    nd = 3 if mode == "trilinear" else 2
    x = dt.tensor(rn(2, 3, *(5,) * nd)).to(low).requires_grad_()
    kw = {} if mode == "nearest" else {"align_corners": False}
    out = DF.interpolate(x, size=(9, 11, 7)[:nd], mode=mode, **kw)
    g = dt.tensor(rn(*out.shape)).to(low)
    out.backward(g)
    wide = x.detach().float().requires_grad_()
    ref = DF.interpolate(wide, size=(9, 11, 7)[:nd], mode=mode, **kw)
    ref.backward(g.float())
    assert out.dtype is low and type(out.grad_fn).__name__.startswith("Upsample")
    np.testing.assert_array_equal(x.grad.float().numpy(), wide.grad.to(low).float().numpy())
    np.testing.assert_array_equal(out.detach().float().numpy(), ref.detach().to(low).float().numpy())


@pytest.mark.parity
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_bfloat16_interpolation_gradient_matches_pytorch(torch, mode):
    """Nearest's float32 sums of a few bfloat16 values are exact: the rounded result is
    PyTorch's bit for bit (the weighted modes' float32 sums may differ in order)."""
    x, g = rn(2, 3, 5, 5), rn(2, 3, 9, 11)
    ours = dt.tensor(x).bfloat16().requires_grad_()
    theirs = torch.tensor(x).bfloat16().requires_grad_()
    DF.interpolate(ours, size=(9, 11), mode=mode).backward(dt.tensor(g).bfloat16())
    torch.nn.functional.interpolate(theirs, size=(9, 11), mode=mode).backward(torch.tensor(g).bfloat16())
    np.testing.assert_array_equal(ours.grad.float().numpy(), theirs.grad.float().numpy())


def test_low_precision_linear_weights_are_stored_in_the_input_dtype():
    """A 16-bit linear resize multiplies by weights kept in the input's dtype, the second
    rounded and the first ``1 - w1`` of it: shrinking 7 -> 4 reads position 3 at 2/3 of
    the way to 4, so a one at 3 comes out as ``1 - bf16(2/3)``, not ``bf16(1/3)``."""
    x = dt.zeros(1, 1, 7, dtype=dt.bfloat16)
    x[0, 0, 3] = 1
    out = DF.interpolate(x, scale_factor=0.6, mode="linear")
    assert out.float().numpy()[0, 0].tolist() == [0.0, 0.0, 0.33203125, 0.0]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize(
    ("mode", "shape", "kw"),
    [
        ("linear", (2, 3, 7), {"scale_factor": 0.6, "align_corners": False}),
        ("linear", (2, 3, 7), {"size": 9, "align_corners": True}),
        ("bicubic", (2, 3, 5, 6), {"size": (9, 4), "align_corners": False}),
        (
            "bicubic",
            (2, 3, 5, 6),
            {"scale_factor": 1.7, "align_corners": True, "recompute_scale_factor": True},
        ),
        ("trilinear", (1, 2, 3, 4, 5), {"size": (5, 6, 4), "align_corners": True}),
        ("trilinear", (1, 2, 3, 4, 5), {"scale_factor": 0.6, "align_corners": False}),
    ],
)
def test_low_precision_weighted_interpolation_matches_pytorch(torch, dtype, mode, shape, kw):
    """float16/bfloat16 linear, bicubic and trilinear resizing give PyTorch's bits: its
    kernel's weights computed in float32 and, forward, stored in the input's dtype, the
    dims nested with the last innermost, and the float32 sums rounded once (the forward was
    off in a third to a half of the outputs)."""
    x = rn(*shape)
    ours = dt.tensor(x).to(getattr(dt, dtype)).requires_grad_()
    theirs = torch.tensor(x).to(getattr(torch, dtype)).requires_grad_()
    out = DF.interpolate(ours, mode=mode, **kw)
    ref = torch.nn.functional.interpolate(theirs, mode=mode, **kw)
    g = rn(*out.shape)
    out.backward(dt.tensor(g).to(out.dtype))
    ref.backward(torch.tensor(g).to(ref.dtype))
    np.testing.assert_array_equal(out.detach().float().numpy(), ref.detach().float().numpy())
    # the backward's float32 sums may add in another order: within one unit in the last place
    ulp = 2.0 ** (-7 if dtype == "bfloat16" else -10)
    np.testing.assert_allclose(ours.grad.float().numpy(), theirs.grad.float().numpy(), rtol=ulp, atol=ulp)
