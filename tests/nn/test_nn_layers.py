"""Layers: default initialisation, factory kwargs, forward values, gradients, reprs,
train/eval behaviour, and a small MLP that learns a synthetic classification task."""

import math

import numpy as np
import pytest
from parity_helpers import both, check, copy_weights

import disttorch as dt
from disttorch import nn
from disttorch.autograd import gradcheck
from disttorch.nn import functional as F


# ---------------------------------------------------------------------- Linear / Identity / Bilinear
def test_linear_default_init_ranges_and_dtype():
    dt.manual_seed(0)
    lin = nn.Linear(400, 300)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert w.shape == (300, 400) and b.shape == (300,)
    assert w.dtype == np.float32 and lin.weight.dtype == dt.float32
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.002
    assert np.abs(b).max() <= bound
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad


def test_linear_forward_backward_and_options():
    lin = nn.Linear(3, 2, dtype=dt.float64)
    assert lin.weight.dtype == dt.float64
    x = dt.randn(4, 3, dtype=dt.float64, requires_grad=True)
    out = lin(x)
    expected = x.detach().numpy() @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), expected)
    out.sum().backward()
    np.testing.assert_allclose(lin.bias.grad.numpy(), [4.0, 4.0])
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.tile(x.detach().numpy().sum(0), (2, 1)))
    np.testing.assert_allclose(x.grad.numpy(), np.tile(lin.weight.detach().numpy().sum(0), (4, 1)))
    no_bias = nn.Linear(3, 2, bias=False)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == ["weight"]
    assert repr(no_bias) == "Linear(in_features=3, out_features=2, bias=False)"
    assert nn.Linear(2, 2, device="cpu").weight.shape == (2, 2)
    assert nn.Linear(5, 4)(dt.randn(2, 3, 5)).shape == (2, 3, 4)


def test_linear_gradcheck_through_module():
    lin = nn.Linear(3, 2).double()
    x = dt.randn(5, 3, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a, w, b: F.linear(a, w, b), (x, lin.weight, lin.bias))


def test_identity_and_bilinear():
    ident = nn.Identity(54, unused="x")
    x = dt.randn(2, 3)
    assert ident(x) is x and repr(ident) == "Identity()"
    dt.manual_seed(0)
    bil = nn.Bilinear(20, 3, 4)
    assert bil.weight.shape == (4, 20, 3) and bil.bias.shape == (4,)
    assert np.abs(bil.weight.detach().numpy()).max() <= 1 / math.sqrt(20)
    assert bil(dt.randn(6, 20), dt.randn(6, 3)).shape == (6, 4)
    assert repr(bil) == "Bilinear(in1_features=20, in2_features=3, out_features=4, bias=True)"


# ---------------------------------------------------------------------- activations as modules
def test_activation_modules_match_functional_and_repr():
    x = dt.randn(3, 4)
    pairs = [
        (nn.ReLU(), F.relu(x)),
        (nn.LeakyReLU(0.2), F.leaky_relu(x, 0.2)),
        (nn.ELU(0.5), F.elu(x, 0.5)),
        (nn.GELU("tanh"), F.gelu(x, approximate="tanh")),
        (nn.SiLU(), F.silu(x)),
        (nn.Tanh(), F.tanh(x)),
        (nn.Sigmoid(), F.sigmoid(x)),
        (nn.Softplus(2.0), F.softplus(x, 2.0)),
        (nn.Softmax(dim=1), F.softmax(x, 1)),
        (nn.LogSoftmax(dim=0), F.log_softmax(x, 0)),
        (nn.SELU(), F.selu(x)),
    ]
    for module, expected in pairs:
        np.testing.assert_allclose(module(x).numpy(), expected.numpy())
    assert repr(nn.Softmax()) == "Softmax(dim=None)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.Mish(inplace=True)) == "Mish(inplace=True)"
    assert repr(nn.Hardswish(inplace=True)) == "Hardswish()" and repr(nn.Hardsigmoid(True)) == "Hardsigmoid()"
    assert not isinstance(nn.Hardswish(), nn.Mish)
    assert repr(nn.ELU()) == "ELU(alpha=1.0)"
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    with pytest.warns(FutureWarning, match="`min_value` is deprecated and renamed to `min_val`"):
        assert repr(nn.Hardtanh(min_value=-2.0)) == "Hardtanh(min_val=-2.0, max_val=1.0)"
    with pytest.warns(FutureWarning, match="`max_value`"):
        assert nn.Hardtanh(max_value=3.0).max_val == 3.0


# ---------------------------------------------------------------------- dropout
def test_dropout_module_follows_training_flag():
    dt.manual_seed(0)
    d = nn.Dropout(0.5)
    x = dt.ones(1000)
    assert (d(x).numpy() == 0).any()
    d.eval()
    assert d(x) is x
    assert repr(d) == "Dropout(p=0.5, inplace=False)"
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)
    assert nn.Dropout2d(0.2).train()(dt.ones(2, 3, 4, 4)).shape == (2, 3, 4, 4)


# ---------------------------------------------------------------------- Embedding
def test_embedding_init_padding_and_grad():
    dt.manual_seed(0)
    emb = nn.Embedding(1000, 16, padding_idx=-1)
    w = emb.weight.detach().numpy()
    assert emb.padding_idx == 999 and (w[999] == 0).all()
    assert abs(w[:999].std() - 1.0) < 0.02 and abs(w[:999].mean()) < 0.02
    idx = dt.tensor([[1, 999], [1, 3]])
    out = emb(idx)
    assert out.shape == (2, 2, 16)
    out.sum().backward()
    g = emb.weight.grad.numpy()
    assert (g[1] == 2).all() and (g[3] == 1).all() and (g[999] == 0).all() and (g[0] == 0).all()
    assert repr(emb) == "Embedding(1000, 16, padding_idx=999)"
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_from_pretrained():
    table = dt.tensor([[1.0, 2.0], [3.0, 4.0]])
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb(dt.tensor([1, 0])).numpy(), [[3, 4], [1, 2]])
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad


# ---------------------------------------------------------------------- Flatten / Unflatten
def test_flatten_unflatten():
    x = dt.randn(2, 3, 4, 5, requires_grad=True)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert nn.Flatten(-2)(x).shape == (2, 3, 20)
    assert nn.Unflatten(1, (3, 1))(x).shape == (2, 3, 1, 4, 5)
    assert nn.Unflatten(-1, (-1, 5))(x).shape == (2, 3, 4, 1, 5)
    nn.Flatten()(x).sum().backward()
    assert x.grad.shape == (2, 3, 4, 5)
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim 1"):
        nn.Unflatten(1, (2, 2))(x)
    assert repr(nn.Unflatten(1, (2, 3))) == "Unflatten(dim=1, unflattened_size=(2, 3))"


# ---------------------------------------------------------------------- training
def _blobs(n_per_class=100, classes=4, dim=2, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 4, (classes, dim))
    x = np.concatenate([c + rng.normal(0, 1, (n_per_class, dim)) for c in centres])
    y = np.repeat(np.arange(classes), n_per_class)
    return dt.tensor(x.astype(np.float32)), dt.tensor(y)


@pytest.mark.timeout(60)
def test_mlp_learns_synthetic_classification():
    dt.manual_seed(0)
    x, y = _blobs()
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _step in range(300):  # the blobs overlap: ~0.91 is the best accuracy; 150 steps reach ~0.90
        loss = loss_fn(model(x), y)
        model.zero_grad()
        loss.backward()
        with dt.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        losses.append(loss.item())
    model.eval()
    with dt.no_grad():
        accuracy = (model(x).numpy().argmax(1) == y.numpy()).mean()
    assert losses[-1] < 0.5 * losses[0]
    assert accuracy > 0.9
    assert all(type(p) is nn.Parameter and p.is_leaf for p in model.parameters())


# ---------------------------------------------------------------------- parity with PyTorch
@pytest.mark.parity
@pytest.mark.parametrize("bias", [True, False])
def test_linear_parity(torch, bias):
    tl = torch.nn.Linear(5, 3, bias=bias).double()
    dl = nn.Linear(5, 3, bias=bias).double()
    copy_weights(dl, tl)
    dx, tx = both((2, 4, 5))
    check(dl(dx), tl(tx), [dx, *dl.parameters()], [tx, *tl.parameters()])


@pytest.mark.parity
def test_bilinear_parity(torch):
    tl = torch.nn.Bilinear(3, 4, 2).double()
    dl = nn.Bilinear(3, 4, 2).double()
    copy_weights(dl, tl)
    dx1, tx1 = both((5, 3), 1)
    dx2, tx2 = both((5, 4), 2)
    check(dl(dx1, dx2), tl(tx1, tx2), [dx1, dx2, *dl.parameters()], [tx1, tx2, *tl.parameters()])


@pytest.mark.parity
def test_embedding_parity(torch):
    te = torch.nn.Embedding(6, 3, padding_idx=1).double()
    de = nn.Embedding(6, 3, padding_idx=1).double()
    copy_weights(de, te)
    idx = np.array([[0, 1, 5], [5, 5, 2]])
    check(de(dt.tensor(idx)), te(torch.tensor(idx)), [de.weight], [te.weight])


def _embedding_16_bit_grad(lib, dtype_name):
    """The weight gradient of a 16-bit embedding whose rows are read many times."""
    lib.manual_seed(0)
    e = lib.nn.Embedding(5, 8, padding_idx=4).to(getattr(lib, dtype_name))
    g = np.random.default_rng(3)
    out = e(lib.tensor(g.integers(0, 5, (6, 20))))
    out.backward(lib.tensor(g.standard_normal(out.shape), dtype=lib.float32).to(out.dtype))
    return e.weight.grad.float().numpy()


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_embedding_16_bit_gradient_sums_round_each_addition_as_pytorch(torch, dtype_name):
    np.testing.assert_array_equal(
        _embedding_16_bit_grad(dt, dtype_name), _embedding_16_bit_grad(torch, dtype_name)
    )


@pytest.mark.parity
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("ReLU", {}),
        ("LeakyReLU", {"negative_slope": 0.2}),
        ("ELU", {"alpha": 0.7}),
        ("SELU", {}),
        ("GELU", {}),
        ("GELU", {"approximate": "tanh"}),
        ("SiLU", {}),
        ("Tanh", {}),
        ("Sigmoid", {}),
        ("Softplus", {"beta": 2.0, "threshold": 3.0}),
        ("Softmax", {"dim": 1}),
        ("LogSoftmax", {"dim": -1}),
        ("Softmin", {"dim": 0}),
        ("Hardtanh", {"min_val": -2.0}),
        ("ReLU6", {}),
        ("LogSigmoid", {}),
        ("Mish", {}),
        ("Hardsigmoid", {}),
        ("Hardswish", {}),
        ("GLU", {"dim": 1}),
        ("PReLU", {}),
    ],
)
def test_activation_parity(torch, name, kwargs):
    dx, tx = both((4, 6), 3)
    with torch.no_grad():
        tx.mul_(3)
    dx = dt.tensor(tx.detach().numpy(), requires_grad=True)
    dm, tm = getattr(nn, name)(**kwargs).double(), getattr(torch.nn, name)(**kwargs).double()
    assert repr(dm) == repr(tm)
    check(dm(dx), tm(tx), [dx, *dm.parameters()], [tx, *tm.parameters()], rtol=1e-9)


@pytest.mark.parity
def test_prelu_per_channel_parity(torch):
    tm, dm = torch.nn.PReLU(3, init=0.1).double(), nn.PReLU(3, init=0.1).double()
    dx, tx = both((2, 3, 4), 21)
    check(dm(dx), tm(tx), [dx, dm.weight], [tx, tm.weight], rtol=1e-9)


@pytest.mark.parity
def test_gelu_float32_parity(torch):
    x = np.linspace(-6, 6, 1001).astype(np.float32)
    np.testing.assert_allclose(
        F.gelu(dt.tensor(x)).numpy(), torch.nn.functional.gelu(torch.tensor(x)).numpy(), atol=2e-6
    )


@pytest.mark.parity
def test_mlp_training_steps_parity(torch):
    tm = torch.nn.Sequential(
        torch.nn.Linear(6, 16),
        torch.nn.ReLU(),
        torch.nn.Linear(16, 16),
        torch.nn.GELU(),
        torch.nn.Linear(16, 4),
    ).double()
    dm = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4)).double()
    copy_weights(dm, tm)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 6)), rng.integers(0, 4, 32)
    for _ in range(5):
        dl = F.cross_entropy(dm(dt.tensor(x)), dt.tensor(y))
        tl = torch.nn.functional.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
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
