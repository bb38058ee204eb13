"""Layers: default initialisation, factory kwargs, forward values, gradients, reprs,
train/eval behaviour, and a small MLP that learns a synthetic classification task."""
import math

import numpy as np
import pytest

import disttorch as torch
from disttorch import nn
from disttorch.autograd import gradcheck
from disttorch.nn import functional as F


# ---------------------------------------------------------------------- Linear / Identity / Bilinear
def test_linear_default_init_ranges_and_dtype():
    torch.manual_seed(0)
    lin = nn.Linear(400, 300)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert w.shape == (300, 400) and b.shape == (300,)
    assert w.dtype == np.float32 and lin.weight.dtype == torch.float32
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.002
    assert np.abs(b).max() <= bound
    assert isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad


def test_linear_forward_backward_and_options():
    lin = nn.Linear(3, 2, dtype=torch.float64)
    assert lin.weight.dtype == torch.float64
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
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
    assert nn.Linear(5, 4)(torch.randn(2, 3, 5)).shape == (2, 3, 4)


def test_linear_gradcheck_through_module():
    lin = nn.Linear(3, 2).double()
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda a, w, b: F.linear(a, w, b), (x, lin.weight, lin.bias))


def test_identity_and_bilinear():
    ident = nn.Identity(54, unused="x")
    x = torch.randn(2, 3)
    assert ident(x) is x and repr(ident) == "Identity()"
    torch.manual_seed(0)
    bil = nn.Bilinear(20, 3, 4)
    assert bil.weight.shape == (4, 20, 3) and bil.bias.shape == (4,)
    assert np.abs(bil.weight.detach().numpy()).max() <= 1 / math.sqrt(20)
    assert bil(torch.randn(6, 20), torch.randn(6, 3)).shape == (6, 4)
    assert repr(bil) == "Bilinear(in1_features=20, in2_features=3, out_features=4, bias=True)"


# ---------------------------------------------------------------------- activations as modules
def test_activation_modules_match_functional_and_repr():
    x = torch.randn(3, 4)
    pairs = [(nn.ReLU(), F.relu(x)), (nn.LeakyReLU(0.2), F.leaky_relu(x, 0.2)),
             (nn.ELU(0.5), F.elu(x, 0.5)), (nn.GELU("tanh"), F.gelu(x, approximate="tanh")),
             (nn.SiLU(), F.silu(x)), (nn.Tanh(), F.tanh(x)), (nn.Sigmoid(), F.sigmoid(x)),
             (nn.Softplus(2.0), F.softplus(x, 2.0)), (nn.Softmax(dim=1), F.softmax(x, 1)),
             (nn.LogSoftmax(dim=0), F.log_softmax(x, 0)), (nn.SELU(), F.selu(x))]
    for module, expected in pairs:
        np.testing.assert_allclose(module(x).numpy(), expected.numpy())
    assert repr(nn.Softmax()) == "Softmax(dim=None)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.ELU()) == "ELU(alpha=1.0)"
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"


# ---------------------------------------------------------------------- dropout
def test_dropout_module_follows_training_flag():
    torch.manual_seed(0)
    d = nn.Dropout(0.5)
    x = torch.ones(1000)
    assert (d(x).numpy() == 0).any()
    d.eval()
    assert d(x) is x
    assert repr(d) == "Dropout(p=0.5, inplace=False)"
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)
    assert nn.Dropout2d(0.2).train()(torch.ones(2, 3, 4, 4)).shape == (2, 3, 4, 4)


# ---------------------------------------------------------------------- Embedding
def test_embedding_init_padding_and_grad():
    torch.manual_seed(0)
    emb = nn.Embedding(1000, 16, padding_idx=-1)
    w = emb.weight.detach().numpy()
    assert emb.padding_idx == 999 and (w[999] == 0).all()
    assert abs(w[:999].std() - 1.0) < 0.02 and abs(w[:999].mean()) < 0.02
    idx = torch.tensor([[1, 999], [1, 3]])
    out = emb(idx)
    assert out.shape == (2, 2, 16)
    out.sum().backward()
    g = emb.weight.grad.numpy()
    assert (g[1] == 2).all() and (g[3] == 1).all() and (g[999] == 0).all() and (g[0] == 0).all()
    assert repr(emb) == "Embedding(1000, 16, padding_idx=999)"
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_from_pretrained():
    table = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(emb(torch.tensor([1, 0])).numpy(), [[3, 4], [1, 2]])
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad


# ---------------------------------------------------------------------- Flatten / Unflatten
def test_flatten_unflatten():
    x = torch.randn(2, 3, 4, 5, requires_grad=True)
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
    return torch.tensor(x.astype(np.float32)), torch.tensor(y)


@pytest.mark.timeout(60)
def test_mlp_learns_synthetic_classification():
    torch.manual_seed(0)
    x, y = _blobs()
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _step in range(150):
        loss = loss_fn(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        accuracy = (model(x).numpy().argmax(1) == y.numpy()).mean()
    assert losses[-1] < 0.5 * losses[0]
    assert accuracy > 0.9
    assert all(type(p) is nn.Parameter and p.is_leaf for p in model.parameters())
