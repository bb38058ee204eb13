"""The layers added for the rest of ``torch.nn``: same constructor arguments in both
libraries, PyTorch's weights copied into ours, then state-dict keys and shapes, repr,
outputs and input/parameter gradients compared (parity); lazy modules, DataParallel and
error messages checked on their own."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.autograd import gradcheck

R = np.random.default_rng(1)

# name -> (constructor args, kwargs, input shapes or arrays, extra positional inputs)
MODULES = {
    "PixelShuffle": ((3,), {}, [(2, 18, 3, 4)]),
    "PixelUnshuffle": ((2,), {}, [(2, 3, 4, 6)]),
    "ChannelShuffle": ((2,), {}, [(2, 4, 3, 3)]),
    "Upsample": ((), {"scale_factor": 2, "mode": "bilinear"}, [(1, 2, 3, 4)]),
    "UpsamplingNearest2d": ((), {"size": (5, 7)}, [(1, 2, 3, 4)]),
    "UpsamplingBilinear2d": ((), {"scale_factor": 2}, [(1, 2, 3, 4)]),
    "Fold": (((4, 5), 2), {}, [(2, 12, 12)]),
    "Unfold": ((2,), {"padding": 1}, [(2, 3, 4, 5)]),
    "ZeroPad2d": (((1, 2, 0, 1),), {}, [(2, 3, 4)]),
    "ConstantPad1d": ((2, 3.5), {}, [(2, 3, 4)]),
    "ConstantPad3d": ((1, -1.0), {}, [(1, 2, 2, 3, 4)]),
    "ReflectionPad1d": (((2, 1),), {}, [(2, 3, 4)]),
    "ReflectionPad2d": ((1,), {}, [(2, 3, 4, 5)]),
    "ReflectionPad3d": ((1,), {}, [(1, 2, 3, 4, 5)]),
    "ReplicationPad1d": ((2,), {}, [(2, 3, 4)]),
    "ReplicationPad2d": (((1, 0, 2, 1),), {}, [(2, 3, 4, 5)]),
    "ReplicationPad3d": ((1,), {}, [(1, 2, 3, 4, 5)]),
    "CircularPad1d": ((2,), {}, [(2, 3, 4)]),
    "CircularPad2d": ((1,), {}, [(2, 3, 4, 5)]),
    "CircularPad3d": ((1,), {}, [(1, 2, 3, 4, 5)]),
    "ZeroPad1d": ((1,), {}, [(2, 3)]),
    "ZeroPad3d": ((1,), {}, [(1, 2, 2, 2)]),
    "InstanceNorm1d": ((3,), {"affine": True}, [(2, 3, 5)]),
    "InstanceNorm2d": ((3,), {"track_running_stats": True}, [(2, 3, 4, 5)]),
    "InstanceNorm3d": ((2,), {"affine": True, "track_running_stats": True}, [(2, 2, 3, 4, 2)]),
    "RMSNorm": (((3, 4),), {}, [(2, 3, 4)]),
    "LocalResponseNorm": ((3,), {}, [(2, 5, 4, 4)]),
    "CrossMapLRN2d": ((3,), {"alpha": 0.1}, [(2, 5, 4, 4)]),
    "MaxPool3d": ((2,), {"stride": 1}, [(1, 2, 3, 4, 5)]),
    "AvgPool3d": ((2,), {}, [(1, 2, 4, 4, 4)]),
    "AdaptiveAvgPool3d": (((2, 2, 3),), {}, [(1, 2, 4, 5, 6)]),
    "AdaptiveMaxPool3d": ((2,), {}, [(1, 2, 4, 5, 6)]),
    "LPPool1d": ((2, 3), {}, [(2, 3, 7)]),
    "LPPool2d": ((1.5, 2), {}, [(2, 3, 4, 4)]),
    "LPPool3d": ((2, 2), {}, [(1, 2, 4, 4, 4)]),
    "ConvTranspose3d": ((2, 3, 2), {"stride": 2, "padding": 1}, [(1, 2, 3, 3, 3)]),
    "Conv3d": ((2, 3, 2), {"padding": 1}, [(1, 2, 3, 3, 3)]),
    "CELU": ((0.5,), {}, [(3, 4)]),
    "RReLU": ((0.1, 0.3), {}, [(3, 4)]),
    "Threshold": ((0.2, -1.0), {}, [(3, 4)]),
    "Hardshrink": ((0.3,), {}, [(3, 4)]),
    "Softshrink": ((0.3,), {}, [(3, 4)]),
    "Tanhshrink": ((), {}, [(3, 4)]),
    "Softsign": ((), {}, [(3, 4)]),
    "Softmax2d": ((), {}, [(2, 3, 4, 5)]),
    "AlphaDropout": ((0.3,), {}, [(3, 4)]),
    "FeatureAlphaDropout": ((0.3,), {}, [(2, 3, 4)]),
    "SoftMarginLoss": ((), {}, [(3, 4), "signs34"]),
    "GaussianNLLLoss": ((), {"full": True}, [(3, 4), (3, 4), "var"]),
    "PoissonNLLLoss": ((), {}, [(3, 4), "counts"]),
    "TripletMarginLoss": ((), {"margin": 0.5}, [(4, 3), (4, 3), (4, 3)]),
    "CosineEmbeddingLoss": ((), {}, [(4, 3), (4, 3), "signs"]),
    "MarginRankingLoss": ((0.1,), {}, [(4,), (4,), "signs"]),
    "HingeEmbeddingLoss": ((), {}, [(4,), "signs"]),
}

# PyTorch's CrossMapLRN2d backward is Lua Torch's, which is not the gradient of its forward
# (torch.autograd.gradcheck fails on it); ours is the exact gradient, checked by gradcheck.
FORWARD_ONLY = {"CrossMapLRN2d"}


def _arrays(specs):
    out = []
    for s in specs:
        if s == "var":
            out.append(R.uniform(0.1, 1, (3, 4)))
        elif s == "counts":
            out.append(R.poisson(2.0, (3, 4)).astype(np.float64))
        elif s == "signs":
            out.append(np.sign(R.normal(size=4)))
        elif s == "signs34":
            out.append(np.sign(R.normal(size=(3, 4))))
        else:
            out.append(R.normal(size=s))
    return out


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_parity(name):
    torch = pytest.importorskip("torch")
    args, kwargs, specs = MODULES[name]
    theirs = getattr(torch.nn, name)(*args, **kwargs).double().eval()
    ours = getattr(nn, name)(*args, **kwargs).double().eval()
    sd = theirs.state_dict()
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in sd.items()
    }
    ours.load_state_dict({k: dt.tensor(v.numpy()) for k, v in sd.items()})
    assert repr(ours) == repr(theirs)
    arrays = _arrays(specs)
    grads = [s not in ("signs", "signs34", "counts") for s in specs]
    xs_d = [dt.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    xs_t = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    out_d, out_t = ours(*xs_d), theirs(*xs_t)
    np.testing.assert_allclose(out_d.detach().numpy(), out_t.detach().numpy(), rtol=1e-6, atol=1e-9)
    if name in FORWARD_ONLY:
        from disttorch.autograd import gradcheck

        assert gradcheck(ours, [xs_d[0]])
        return
    g = R.normal(size=tuple(out_t.shape))
    out_d.backward(dt.tensor(g))
    out_t.backward(torch.tensor(g))
    for d, t, g in zip(xs_d, xs_t, grads):
        if g:
            np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-9)
    for (k, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-9, err_msg=k)
    if "running_mean" in sd:  # train-mode statistics update as PyTorch's
        ours.train(), theirs.train()
        ours(*xs_d), theirs(*xs_t)
        np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.detach().numpy(), rtol=1e-6)


def test_default_initialisation_shapes_and_distribution():
    m = nn.ConvTranspose3d(4, 6, 3, groups=2)
    assert tuple(m.weight.shape) == (4, 3, 3, 3, 3)
    bound = 1 / np.sqrt(3 * 27)
    assert np.abs(m.weight.detach().numpy()).max() <= bound + 1e-7
    assert nn.RMSNorm(5).weight.detach().numpy().tolist() == [1.0] * 5
    assert nn.InstanceNorm2d(3).weight is None


def test_training_mode_dropouts_keep_moments():
    dt.manual_seed(0)
    x = dt.randn(200000)
    y = nn.AlphaDropout(0.2).train()(x)
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02
    z = nn.AlphaDropout(0.2).eval()(x)
    assert z is x or np.array_equal(z.numpy(), x.numpy())
    r = nn.RReLU(0.1, 0.3).train()(-dt.ones(10000))
    assert 0.1 <= -float(r.max()) and -float(r.min()) <= 0.3 and abs(-float(r.mean()) - 0.2) < 0.01


@pytest.mark.parametrize(
    "name, ctor, x, shapes",
    [
        ("LazyLinear", lambda: nn.LazyLinear(3), (4, 5), {"weight": (3, 5), "bias": (3,)}),
        (
            "LazyConv2d",
            lambda: nn.LazyConv2d(4, 3, padding=1),
            (2, 3, 5, 5),
            {"weight": (4, 3, 3, 3), "bias": (4,)},
        ),
        ("LazyConv1d", lambda: nn.LazyConv1d(4, 2, bias=False), (2, 3, 5), {"weight": (4, 3, 2)}),
        (
            "LazyConv3d",
            lambda: nn.LazyConv3d(2, 2, groups=2),
            (1, 4, 3, 3, 3),
            {"weight": (2, 2, 2, 2, 2), "bias": (2,)},
        ),
        (
            "LazyConvTranspose1d",
            lambda: nn.LazyConvTranspose1d(4, 3),
            (2, 3, 5),
            {"weight": (3, 4, 3), "bias": (4,)},
        ),
        (
            "LazyConvTranspose2d",
            lambda: nn.LazyConvTranspose2d(4, 2, stride=2),
            (2, 3, 3, 3),
            {"weight": (3, 4, 2, 2), "bias": (4,)},
        ),
        (
            "LazyConvTranspose3d",
            lambda: nn.LazyConvTranspose3d(2, 2),
            (1, 3, 2, 2, 2),
            {"weight": (3, 2, 2, 2, 2)},
        ),
        ("LazyBatchNorm1d", lambda: nn.LazyBatchNorm1d(), (4, 3), {"weight": (3,), "running_mean": (3,)}),
        (
            "LazyBatchNorm2d",
            lambda: nn.LazyBatchNorm2d(),
            (2, 3, 4, 4),
            {"weight": (3,), "running_var": (3,)},
        ),
        ("LazyBatchNorm3d", lambda: nn.LazyBatchNorm3d(), (2, 3, 2, 2, 2), {"bias": (3,)}),
        (
            "LazyInstanceNorm1d",
            lambda: nn.LazyInstanceNorm1d(),
            (2, 3, 4),
            {"weight": (3,), "running_mean": (3,)},
        ),
        ("LazyInstanceNorm2d", lambda: nn.LazyInstanceNorm2d(), (3, 4, 4), {"weight": (3,)}),
        (
            "LazyInstanceNorm3d",
            lambda: nn.LazyInstanceNorm3d(affine=False, track_running_stats=False),
            (1, 3, 2, 2, 2),
            {},
        ),
    ],
)
def test_lazy_modules_materialise_on_first_forward(name, ctor, x, shapes):
    m = ctor()
    assert m.has_uninitialized_params() or not shapes
    params = list(m.parameters())
    opt = dt.optim.SGD(params, lr=0.1) if params else None
    out = m(dt.randn(*x))
    become = getattr(nn, name[4:])
    assert type(m) is become
    for key, shape in shapes.items():
        assert tuple(getattr(m, key).shape) == shape, key
    assert all(type(p) is nn.Parameter for p in m.parameters())
    if opt is not None:  # the optimiser holds the materialised parameters themselves
        before = [p.detach().clone() for p in m.parameters()]
        out.sum().backward()
        opt.step()
        assert any(not np.allclose(b.numpy(), p.detach().numpy()) for b, p in zip(before, m.parameters()))


@pytest.mark.parity
def test_lazy_linear_initialisation_matches_linear_bounds_and_loads_state():
    torch = pytest.importorskip("torch")
    ref = torch.nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    x = R.normal(size=(2, 5)).astype(np.float32)
    np.testing.assert_allclose(
        m(dt.tensor(x)).detach().numpy(), ref(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6
    )
    fresh = nn.LazyLinear(300)
    fresh(dt.randn(2, 100))
    w = np.abs(fresh.weight.detach().numpy())
    assert 0.09 < w.max() <= 0.1 + 1e-6
    assert repr(nn.LazyLinear(3)) == repr(torch.nn.LazyLinear(3))
    # an uninitialised lazy module's state dict has PyTorch's keys and loads into another one
    blank = nn.LazyConv2d(4, 3).state_dict()
    assert list(blank) == list(torch.nn.LazyConv2d(4, 3).state_dict())
    other = nn.LazyConv2d(4, 3)
    other.load_state_dict(blank)
    assert other.has_uninitialized_params()
    other(dt.randn(1, 2, 5, 5))
    assert tuple(other.weight.shape) == (4, 2, 3, 3)


@pytest.mark.parity
def test_embedding_bag_module_parity():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.EmbeddingBag(10, 4, mode="sum", padding_idx=0).double()
    ours = nn.EmbeddingBag(10, 4, mode="sum", padding_idx=0).double()
    ours.load_state_dict({k: dt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert repr(ours) == repr(theirs)
    idx, off = np.array([1, 0, 4, 9, 3, 3]), np.array([0, 3, 3])
    psw = R.normal(size=6)
    out_d = ours(dt.tensor(idx), dt.tensor(off), dt.tensor(psw))
    out_t = theirs(torch.tensor(idx), torch.tensor(off), torch.tensor(psw))
    np.testing.assert_allclose(out_d.detach().numpy(), out_t.detach().numpy(), rtol=1e-6)
    out_d.sum().backward(), out_t.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-6)
    assert np.all(nn.EmbeddingBag(5, 2, padding_idx=1).weight.detach().numpy()[1] == 0)


@pytest.mark.parity
def test_adaptive_log_softmax_parity():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=True).double()
    ours = nn.AdaptiveLogSoftmaxWithLoss(8, 12, [3, 7], div_value=2.0, head_bias=True).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: dt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert repr(ours) == repr(theirs)
    x, y = R.normal(size=(6, 8)), np.array([0, 11, 4, 2, 7, 5])
    xd, xt = dt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_d, out_t = ours(xd, dt.tensor(y)), theirs(xt, torch.tensor(y))
    np.testing.assert_allclose(out_d.output.detach().numpy(), out_t.output.detach().numpy(), rtol=1e-6)
    out_d.loss.backward(), out_t.loss.backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(
        ours.log_prob(dt.tensor(x)).detach().numpy(),
        theirs.log_prob(torch.tensor(x)).detach().numpy(),
        rtol=1e-6,
    )
    assert ours.predict(dt.tensor(x)).tolist() == theirs.predict(torch.tensor(x)).tolist()
    with pytest.raises(RuntimeError, match="Target values should be in"):
        ours(dt.tensor(x), dt.tensor(np.array([0, 12, 0, 0, 0, 0])))


@pytest.mark.parity
def test_ctc_loss_module_and_linear_cross_entropy_module():
    torch = pytest.importorskip("torch")
    lp = R.normal(size=(7, 2, 5))
    tg, il, tl = np.array([[1, 2, 3], [4, 4, 0]]), np.array([7, 6]), np.array([3, 2])
    xd, xt = dt.tensor(lp, requires_grad=True), torch.tensor(lp, requires_grad=True)
    ld = nn.CTCLoss()(xd.log_softmax(2), dt.tensor(tg), dt.tensor(il), dt.tensor(tl))
    lt = torch.nn.CTCLoss()(xt.log_softmax(2), torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
    np.testing.assert_allclose(float(ld), float(lt.detach()), rtol=1e-7)
    ld.backward(), lt.backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-10)
    theirs = torch.nn.LinearCrossEntropyLoss(4, 6, bias=True).double()
    ours = nn.LinearCrossEntropyLoss(4, 6, bias=True).double()
    ours.load_state_dict({k: dt.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x, y = R.normal(size=(5, 4)), np.array([0, 5, 2, 2, 1])
    np.testing.assert_allclose(
        float(ours(dt.tensor(x), dt.tensor(y))),
        float(theirs(torch.tensor(x), torch.tensor(y)).detach()),
        rtol=1e-7,
    )


def test_data_parallel_runs_the_module_and_prefixes_state_dict():
    inner = nn.Linear(3, 2)
    dp = nn.DataParallel(inner, device_ids=[0, 1])
    x = dt.randn(4, 3)
    assert np.array_equal(dp(x).detach().numpy(), inner(x).detach().numpy())
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert dp.device_ids == []
    from disttorch.nn.parallel import data_parallel

    assert np.array_equal(data_parallel(inner, x).detach().numpy(), inner(x).detach().numpy())


def test_whole_model_pickles_resolve_through_pytorch_module_paths():
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3),
        nn.PixelShuffle(2),
        nn.ReflectionPad2d(1),
        nn.InstanceNorm2d(2),
        nn.Upsample(scale_factor=2),
        nn.LazyLinear(4),
    )
    clone = pickle.loads(pickle.dumps(model))
    assert repr(clone) == repr(model)
    assert type(clone[1]).__module__ == "disttorch.nn.modules.pixelshuffle"


def test_errors_name_what_is_wrong():
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        nn.PixelShuffle(2)(dt.randn(1, 3, 2, 2))
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        nn.functional.interpolate(dt.randn(1, 1, 2, 2), scale_factor=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="needs 4D input"):
        nn.functional.interpolate(dt.randn(1, 1, 2), scale_factor=2, mode="bilinear")
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        nn.functional.interpolate(dt.randn(1, 1, 2), size=3, scale_factor=2)
    with pytest.raises(ValueError, match="requires specifying either"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        nn.ReflectionPad1d(3)(dt.randn(1, 2, 3))
    with pytest.raises(ValueError, match="mode has to be one of"):
        nn.functional.embedding_bag(dt.tensor([[1]]), dt.randn(3, 2), mode="median")
    with pytest.raises(ValueError, match="expected 4D or 5D input|expected 3D or 4D input"):
        nn.InstanceNorm2d(3)(dt.randn(3, 4))


_FRACTIONAL_CASES = [
    {"output_ratio": 0.5},
    {"output_ratio": (0.5, 0.5)},
    {"output_ratio": (0.5,)},
    {"output_ratio": (0.5, 0.5, 0.5, 0.5)},
    {"output_ratio": 1.0},
    {"output_ratio": (0.5, 1)},
    {"output_size": (4,)},
    {"output_size": (4, 4, 4)},
    {"output_size": 4.0},
    {"output_size": 7},
    {"output_size": (6, 8)},
    {"output_size": 0},
    {"output_size": -1},
    {"output_size": 4, "output_ratio": 0.5},
]


@pytest.mark.parity
def test_fractional_max_pool_arguments_are_checked_as_pytorchs():
    """``F.fractional_max_pool2d(x, 2, output_ratio=0.5)`` worked (PyTorch's ``len`` of the
    ratio is a TypeError); sizes, ratios and their errors of both pools and both modules."""
    torch = pytest.importorskip("torch")

    def outcomes(T) -> list:
        seen = []
        for d in (2, 3):
            x = T.zeros((1, 1) + (8,) * d)
            for case in _FRACTIONAL_CASES:
                for pool in (
                    getattr(T.nn.functional, f"fractional_max_pool{d}d"),
                    getattr(T.nn, f"FractionalMaxPool{d}d"),
                ):
                    try:
                        out = pool(x, 2, **case) if pool.__name__.islower() else pool(2, **case)(x)
                        seen.append(tuple(out.shape))
                    except (TypeError, ValueError, RuntimeError, IndexError) as e:
                        seen.append((type(e).__name__, str(e)))
        return seen

    assert outcomes(dt) == outcomes(torch)


@pytest.mark.parity
def test_ctc_gradient_with_respect_to_log_probs_is_pytorchs():
    """PyTorch's CTC gradient w.r.t. log_probs: exp(log_probs) minus the occupancy within each
    input length, zero after it (the exact derivative lacks the exp term, which a log_softmax
    before the loss removes); unbatched input works too."""
    torch = pytest.importorskip("torch")
    lp = np.log(R.dirichlet(np.ones(4), size=(6, 2)))
    tg, il, tl = np.array([[1, 2], [3, 0]]), np.array([6, 5]), np.array([2, 1])
    xd, xt = dt.tensor(lp, requires_grad=True), torch.tensor(lp, requires_grad=True)
    nn.functional.ctc_loss(xd, dt.tensor(tg), il, tl, reduction="sum").backward()
    torch.nn.functional.ctc_loss(
        xt, torch.tensor(tg), torch.tensor(il), torch.tensor(tl), reduction="sum"
    ).backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), atol=1e-10)
    assert np.all(xd.grad.numpy()[5, 1] == 0)  # past the second sequence's input length
    logits = dt.tensor(lp, requires_grad=True)  # through log_softmax: the exact logits gradient
    nn.functional.ctc_loss(logits.log_softmax(2), dt.tensor(tg), il, tl, reduction="sum").backward()
    assert gradcheck(
        lambda z: nn.functional.ctc_loss(z.log_softmax(2), dt.tensor(tg), il, tl, reduction="sum"), (logits,)
    )
    one = nn.functional.ctc_loss(dt.tensor(lp[:, 0]), dt.tensor(tg[0]), [6], [2], reduction="none")
    ref = torch.nn.functional.ctc_loss(
        torch.tensor(lp[:, 0]), torch.tensor(tg[0]), [6], [2], reduction="none"
    )
    np.testing.assert_allclose(float(one), float(ref), rtol=1e-10)


def test_constructor_edge_arguments_as_pytorch(torch):
    """Hardtanh refuses equal or crossed bounds with PyTorch's AssertionError; Unflatten keeps a
    list size a list (its repr)."""
    for bounds in ((2, 1), (1, 1)):
        with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val"):
            dt.nn.Hardtanh(*bounds)
        with pytest.raises(AssertionError):
            torch.nn.Hardtanh(*bounds)
    for size in ([2, -1], (2, -1)):
        assert repr(dt.nn.Unflatten(1, size)) == repr(torch.nn.Unflatten(1, size))
