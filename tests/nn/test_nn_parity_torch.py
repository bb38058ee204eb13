"""Parity with PyTorch (skipped without it): identical weights and inputs in both, then
outputs, input gradients and parameter gradients compared; also reprs, state_dict keys
and the messages of common errors."""
import numpy as np
import pytest

import disttorch as dt
from disttorch import nn as dnn
from disttorch.nn import functional as DF

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity
TF = torch.nn.functional


def both(shape, seed=0, low=None, dtype=np.float64):
    rng = np.random.default_rng(seed)
    arr = rng.uniform(low, 1.0, shape) if low is not None else rng.normal(size=shape)
    arr = arr.astype(dtype)
    return (dt.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True))


def copy_weights(src_torch, dst):
    dst.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in src_torch.state_dict().items()})


def check(d_out, t_out, d_inputs, t_inputs, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(d_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol)
    rng = np.random.default_rng(42)
    g = rng.normal(size=tuple(t_out.shape)).astype(t_out.detach().numpy().dtype)
    d_out.backward(dt.tensor(g))
    t_out.backward(torch.tensor(g))
    for d, t in zip(d_inputs, t_inputs):
        if t.grad is None:
            assert d.grad is None
            continue
        np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------- layers
@pytest.mark.parametrize("bias", [True, False])
def test_linear_parity(bias):
    tl = torch.nn.Linear(5, 3, bias=bias).double()
    dl = dnn.Linear(5, 3, bias=bias).double()
    copy_weights(tl, dl)
    dx, tx = both((2, 4, 5))
    check(dl(dx), tl(tx), [dx, *dl.parameters()], [tx, *tl.parameters()])


def test_bilinear_parity():
    tl = torch.nn.Bilinear(3, 4, 2).double()
    dl = dnn.Bilinear(3, 4, 2).double()
    copy_weights(tl, dl)
    dx1, tx1 = both((5, 3), 1)
    dx2, tx2 = both((5, 4), 2)
    check(dl(dx1, dx2), tl(tx1, tx2), [dx1, dx2, *dl.parameters()], [tx1, tx2, *tl.parameters()])


def test_embedding_parity():
    te = torch.nn.Embedding(6, 3, padding_idx=1).double()
    de = dnn.Embedding(6, 3, padding_idx=1).double()
    copy_weights(te, de)
    idx = np.array([[0, 1, 5], [5, 5, 2]])
    check(de(dt.tensor(idx)), te(torch.tensor(idx)), [de.weight], [te.weight])


@pytest.mark.parametrize("name, kwargs", [
    ("ReLU", {}), ("LeakyReLU", {"negative_slope": 0.2}), ("ELU", {"alpha": 0.7}), ("SELU", {}),
    ("GELU", {}), ("GELU", {"approximate": "tanh"}), ("SiLU", {}), ("Tanh", {}), ("Sigmoid", {}),
    ("Softplus", {"beta": 2.0, "threshold": 3.0}), ("Softmax", {"dim": 1}),
    ("LogSoftmax", {"dim": -1}), ("Softmin", {"dim": 0}), ("Hardtanh", {"min_val": -2.0}),
    ("ReLU6", {}), ("LogSigmoid", {}), ("Mish", {}), ("Hardsigmoid", {}), ("Hardswish", {}),
    ("GLU", {"dim": 1}), ("PReLU", {}),
])
def test_activation_parity(name, kwargs):
    dx, tx = both((4, 6), 3)
    with torch.no_grad():
        tx.mul_(3)
    dx = dt.tensor(tx.detach().numpy(), requires_grad=True)
    dm, tm = getattr(dnn, name)(**kwargs).double(), getattr(torch.nn, name)(**kwargs).double()
    assert repr(dm) == repr(tm)
    check(dm(dx), tm(tx), [dx, *dm.parameters()], [tx, *tm.parameters()], rtol=1e-9)


def test_prelu_per_channel_parity():
    tm, dm = torch.nn.PReLU(3, init=0.1).double(), dnn.PReLU(3, init=0.1).double()
    dx, tx = both((2, 3, 4), 21)
    check(dm(dx), tm(tx), [dx, dm.weight], [tx, tm.weight], rtol=1e-9)


def test_gelu_float32_parity():
    x = np.linspace(-6, 6, 1001).astype(np.float32)
    np.testing.assert_allclose(DF.gelu(dt.tensor(x)).numpy(), TF.gelu(torch.tensor(x)).numpy(), atol=2e-6)


def test_sequential_repr_and_state_dict_keys_match():
    def build(nn, lib):
        return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Dropout(0.1), nn.Flatten(),
                             nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)]),
                             nn.Embedding(4, 2, padding_idx=0), nn.Identity(),
                             nn.ModuleDict({"act": nn.GELU(), "loss": nn.BCEWithLogitsLoss(pos_weight=lib.ones(2))}),
                             nn.ParameterList([nn.Parameter(lib.zeros(2, 3)), nn.Parameter(lib.zeros(1))]),
                             nn.ParameterDict({"x": nn.Parameter(lib.zeros(2))}),
                             nn.ParameterDict({"x": nn.Parameter(lib.zeros(2)),
                                               "y": nn.Parameter(lib.zeros(2, dtype=lib.float64))}))
    tm, dm = build(torch.nn, torch), build(dnn, dt)
    assert repr(dm).replace("disttorch", "torch") == repr(tm)
    assert list(dm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in dm.named_modules()] == [n for n, _ in tm.named_modules()]


def test_load_state_dict_error_message_matches():
    t, d = torch.nn.Linear(2, 3), dnn.Linear(2, 3)
    bad_t = {"weight": torch.zeros(3, 4), "extra": torch.zeros(1)}
    bad_d = {"weight": dt.zeros(3, 4), "extra": dt.zeros(1)}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(bad_t)
    with pytest.raises(RuntimeError) as de:
        d.load_state_dict(bad_d)
    assert str(de.value).replace("disttorch", "torch") == str(te.value)


# ---------------------------------------------------------------------- losses
N, C = 6, 5
TARGET = np.array([0, 4, 2, 2, 1, 3])
IGNORED = np.array([0, -100, 2, 2, -100, 3])
WEIGHT = np.array([0.5, 1.0, 2.0, 1.5, 0.2])


@pytest.mark.parametrize("kwargs", [
    {}, {"reduction": "sum"}, {"reduction": "none"}, {"weight": WEIGHT}, {"label_smoothing": 0.15},
    {"weight": WEIGHT, "label_smoothing": 0.3, "target": IGNORED},
    {"target": IGNORED, "reduction": "none"}, {"ignore_index": 2, "weight": WEIGHT},
])
def test_cross_entropy_and_nll_parity(kwargs):
    kwargs = dict(kwargs)
    target = kwargs.pop("target", TARGET)
    wkw = {"weight": kwargs.pop("weight")} if "weight" in kwargs else {}
    dx, tx = both((N, C), 4)
    dl = DF.cross_entropy(dx, dt.tensor(target), **{k: dt.tensor(v) for k, v in wkw.items()}, **kwargs)
    tl = TF.cross_entropy(tx, torch.tensor(target), **{k: torch.tensor(v) for k, v in wkw.items()}, **kwargs)
    check(dl, tl, [dx], [tx])
    kwargs.pop("label_smoothing", None)
    dx, tx = both((N, C), 5)
    dl = DF.nll_loss(dx, dt.tensor(target), **{k: dt.tensor(v) for k, v in wkw.items()}, **kwargs)
    tl = TF.nll_loss(tx, torch.tensor(target), **{k: torch.tensor(v) for k, v in wkw.items()}, **kwargs)
    check(dl, tl, [dx], [tx])


def test_cross_entropy_k_dim_and_probability_parity():
    dx, tx = both((2, C, 3, 4), 6)
    target = np.random.default_rng(0).integers(0, C, (2, 3, 4))
    check(DF.cross_entropy(dx, dt.tensor(target), label_smoothing=0.1),
          TF.cross_entropy(tx, torch.tensor(target), label_smoothing=0.1), [dx], [tx])
    probs = np.random.default_rng(1).dirichlet(np.ones(C), N)
    dx, tx = both((N, C), 7)
    check(DF.cross_entropy(dx, dt.tensor(probs), weight=dt.tensor(WEIGHT), label_smoothing=0.2),
          TF.cross_entropy(tx, torch.tensor(probs), weight=torch.tensor(WEIGHT), label_smoothing=0.2),
          [dx], [tx])


@pytest.mark.parametrize("name, kwargs", [
    ("mse_loss", {}), ("l1_loss", {"reduction": "sum"}), ("smooth_l1_loss", {"beta": 0.5}),
    ("huber_loss", {"delta": 0.4, "reduction": "none"}), ("smooth_l1_loss", {"beta": 0.0}),
])
def test_regression_loss_parity(name, kwargs):
    dx, tx = both((4, 3), 8)
    dy, ty = both((4, 3), 9)
    check(getattr(DF, name)(dx, dy, **kwargs), getattr(TF, name)(tx, ty, **kwargs), [dx, dy], [tx, ty])


def test_binary_and_kl_loss_parity():
    dp, tp = both((4, 3), 10, low=0.05)
    dy, ty = both((4, 3), 11, low=0.0)
    w = np.array([0.5, 1.0, 2.0])
    check(DF.binary_cross_entropy(dp, dy, weight=dt.tensor(w)),
          TF.binary_cross_entropy(tp, ty, weight=torch.tensor(w)), [dp, dy], [tp, ty])
    dx, tx = both((4, 3), 12)
    dy, ty = both((4, 3), 13, low=0.0)
    check(DF.binary_cross_entropy_with_logits(dx, dy, pos_weight=dt.tensor(w), reduction="sum"),
          TF.binary_cross_entropy_with_logits(tx, ty, pos_weight=torch.tensor(w), reduction="sum"),
          [dx, dy], [tx, ty])
    dx, tx = both((4, 3), 14)
    dy, ty = both((4, 3), 15, low=0.01)
    check(DF.kl_div(dx, dy, reduction="batchmean"), TF.kl_div(tx, ty, reduction="batchmean"),
          [dx, dy], [tx, ty])
    dx, tx = both((4, 3), 16)
    dy, ty = both((4, 3), 17)
    check(DF.kl_div(dx, dy, reduction="sum", log_target=True),
          TF.kl_div(tx, ty, reduction="sum", log_target=True), [dx, dy], [tx, ty])


# ---------------------------------------------------------------------- functional extras
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_parity(mode):
    dx, tx = both((2, 3, 5, 4), 18)
    check(DF.pad(dx, (1, 2, 3, 1), mode=mode), TF.pad(tx, (1, 2, 3, 1), mode=mode), [dx], [tx])


def test_normalize_and_one_hot_parity():
    dx, tx = both((3, 4), 19)
    check(DF.normalize(dx, p=3, dim=0), TF.normalize(tx, p=3, dim=0), [dx], [tx])
    idx = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(DF.one_hot(dt.tensor(idx), 5).numpy(),
                                  TF.one_hot(torch.tensor(idx), 5).numpy())


def test_clip_grad_norm_parity():
    grads = [np.random.default_rng(i).normal(size=(3, 4)) for i in range(3)]
    for norm_type in (2.0, 1.0, float("inf")):
        dps = [dnn.Parameter(dt.zeros(3, 4, dtype=dt.float64)) for _ in grads]
        tps = [torch.nn.Parameter(torch.zeros(3, 4, dtype=torch.float64)) for _ in grads]
        for dp, tp, g in zip(dps, tps, grads):
            dp.grad, tp.grad = dt.tensor(g), torch.tensor(g)
        dn = dnn.utils.clip_grad_norm_(dps, 0.5, norm_type=norm_type)
        tn = torch.nn.utils.clip_grad_norm_(tps, 0.5, norm_type=norm_type)
        np.testing.assert_allclose(dn.item(), tn.item(), rtol=1e-12)
        for dp, tp in zip(dps, tps):
            np.testing.assert_allclose(dp.grad.numpy(), tp.grad.numpy(), rtol=1e-12)


def test_mlp_training_steps_parity():
    tm = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                             torch.nn.GELU(), torch.nn.Linear(16, 4)).double()
    dm = dnn.Sequential(dnn.Linear(6, 16), dnn.ReLU(), dnn.Linear(16, 16), dnn.GELU(),
                        dnn.Linear(16, 4)).double()
    copy_weights(tm, dm)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 6)), rng.integers(0, 4, 32)
    for _ in range(5):
        dl = DF.cross_entropy(dm(dt.tensor(x)), dt.tensor(y))
        tl = TF.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
        np.testing.assert_allclose(dl.item(), tl.item(), rtol=1e-10)
        dm.zero_grad()
        tm.zero_grad()
        dl.backward()
        tl.backward()
        with dt.no_grad(), torch.no_grad():
            for dp, tp in zip(dm.parameters(), tm.parameters()):
                np.testing.assert_allclose(dp.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-12)
                dp -= 0.1 * dp.grad
                tp -= 0.1 * tp.grad


@pytest.mark.parametrize("name, kwargs", [("cosine_similarity", {}), ("cosine_similarity", {"dim": 0}),
                                          ("pairwise_distance", {}),
                                          ("pairwise_distance", {"p": 1.0, "keepdim": True})])
def test_distance_parity(name, kwargs):
    dx1, tx1 = both((4, 5), 22)
    dx2, tx2 = both((1, 5), 23)
    check(getattr(DF, name)(dx1, dx2, **kwargs), getattr(TF, name)(tx1, tx2, **kwargs),
          [dx1, dx2], [tx1, tx2])
