"""``nn.utils`` beyond clipping: weight/spectral norm (hook and parametrization forms),
``parametrize``, ``parametrizations.orthogonal``, fusion, ``skip_init``,
``stateless.functional_call``; and the ``nn.init`` additions. Parity against PyTorch with
copied state (outputs, gradients, state-dict layout)."""

from __future__ import annotations

import copy
import linecache
import pickle
import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.autograd import gradcheck
from disttorch.nn.utils import parametrizations as P
from disttorch.nn.utils import parametrize

R = np.random.default_rng(3)


def _copy(src, dst):
    dst.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def _compare(ours, theirs, x, torch, train=False):
    ours.train(train), theirs.train(train)
    xd, xt = dt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    od, ot = ours(xd), theirs(xt)
    np.testing.assert_allclose(od.detach().numpy(), ot.detach().numpy(), rtol=1e-6, atol=1e-9)
    od.sum().backward(), ot.sum().backward()
    np.testing.assert_allclose(xd.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-9)
    for (k, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-9, err_msg=k)


@pytest.mark.parity
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_parity(dim):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv2d(2, 3, 2).double(), dim=dim)
    ours = P.weight_norm(nn.Conv2d(2, 3, 2).double(), dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy(theirs, ours)
    assert type(ours).__name__ == "ParametrizedConv2d" and parametrize.is_parametrized(ours, "weight")
    _compare(ours, theirs, R.normal(size=(2, 2, 4, 4)), torch)
    parametrize.remove_parametrizations(ours, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    assert type(ours) is nn.Conv2d and list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)


@pytest.mark.parity
def test_weight_norm_hook_parity_and_removal():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double())
        with pytest.warns(FutureWarning):
            ours = nn.utils.weight_norm(nn.Linear(4, 3).double())
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    _copy(theirs, ours)
    _compare(ours, theirs, R.normal(size=(5, 4)), torch)
    nn.utils.remove_weight_norm(ours)
    assert sorted(ours.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(ours)


def test_weight_norm_deprecation_names_the_apply_call():
    # as PyTorch's deprecated WeightNorm.apply: the warning points at the line that called
    # apply (weight_norm's own), whose text the default filter prints under the message
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.utils.weight_norm(nn.Linear(2, 2))
    (w,) = caught
    assert w.category is FutureWarning and w.filename.endswith("weight_norm.py")
    assert linecache.getline(w.filename, w.lineno).strip() == "WeightNorm.apply(module, name, dim)"


@pytest.mark.parity
@pytest.mark.parametrize("train", [False, True])
def test_spectral_norm_parametrization_parity(train):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    dt.manual_seed(0)
    theirs = torch.nn.utils.parametrizations.spectral_norm(torch.nn.ConvTranspose2d(3, 2, 2).double())
    ours = P.spectral_norm(nn.ConvTranspose2d(3, 2, 2).double())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy(theirs, ours)
    _compare(ours, theirs, R.normal(size=(1, 3, 3, 3)), torch, train=train)
    np.testing.assert_allclose(
        ours.parametrizations.weight[0]._u.numpy(), theirs.parametrizations.weight[0]._u.numpy(), rtol=1e-10
    )
    # the normalised weight has spectral norm 1 once power iteration has converged
    ours.eval()
    for _ in range(200):
        ours.train()(dt.randn(1, 3, 3, 3).double())
    mat = ours.weight.detach().numpy().transpose(1, 0, 2, 3).reshape(2, -1)
    assert abs(np.linalg.svd(mat, compute_uv=False)[0] - 1) < 1e-6


@pytest.mark.parity
@pytest.mark.parametrize("train", [False, True])
def test_spectral_norm_hook_parity(train):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.utils.spectral_norm(torch.nn.Linear(5, 4).double())
    ours = nn.utils.spectral_norm(nn.Linear(5, 4).double())
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    _copy(theirs, ours)
    _compare(ours, theirs, R.normal(size=(3, 5)), torch, train=train)
    nn.utils.remove_spectral_norm(ours)
    assert sorted(ours.state_dict()) == ["bias", "weight"]


@pytest.mark.parametrize(
    "shape, orthogonal_map",
    [
        ((4, 4), None),
        ((5, 3), None),
        ((3, 5), "householder"),
        ((4, 4), "cayley"),
        ((5, 3), "matrix_exp"),
        ((2, 4, 4), None),
    ],
)
def test_orthogonal_parametrization(shape, orthogonal_map):
    lin = nn.Linear(shape[-1], shape[-2], bias=False).double()
    if len(shape) == 3:
        mod = nn.Module()
        mod.weight = nn.Parameter(dt.randn(*shape).double())
        lin = mod
    start = lin.weight.detach().numpy().copy()
    P.orthogonal(lin, orthogonal_map=orthogonal_map)
    w = lin.weight.detach().numpy()
    small = min(shape[-2:])
    gram = np.swapaxes(w, -1, -2) @ w if shape[-2] >= shape[-1] else w @ np.swapaxes(w, -1, -2)
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(small), gram.shape), atol=1e-10)
    if shape[-2] == shape[-1] and len(shape) == 2:  # trivialization starts at the orthogonalised weight
        q, r = np.linalg.qr(start)
        np.testing.assert_allclose(w, q * np.sign(np.diag(r)), atol=1e-10)
    # gradcheck away from the kinks of the Householder signs (trunc of the diagonal)
    point = lin.parametrizations.weight.original.detach().numpy() + 0.05 * R.normal(size=shape)
    diag = np.arange(min(shape[-2:]))
    point[..., diag, diag] = -1.5
    assert gradcheck(lambda o: lin.parametrizations.weight[0](o), [dt.tensor(point, requires_grad=True)])
    # assigning an orthogonal matrix sets the weight to it
    target = np.linalg.qr(R.normal(size=shape[-2:] if shape[-2] >= shape[-1] else shape[-2:][::-1]))[0]
    if shape[-2] < shape[-1]:
        target = target.T
    if len(shape) == 2:
        lin.weight = dt.tensor(target)
        np.testing.assert_allclose(lin.weight.detach().numpy(), target, atol=1e-10)


def test_orthogonal_training_keeps_orthogonality():
    lin = P.orthogonal(nn.Linear(4, 4, bias=False).double())
    opt = dt.optim.SGD(lin.parameters(), lr=0.1)
    x = dt.randn(8, 4).double()
    for _ in range(5):
        opt.zero_grad()
        (lin(x) - 1).pow(2).sum().backward()
        opt.step()
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(w.T @ w, np.eye(4), atol=1e-10)


class _Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


class _Scale(nn.Module):
    def forward(self, x):
        return x * 2

    def right_inverse(self, a):
        return a / 2


def test_register_parametrization_chains_assigns_caches_and_removes():
    lin = nn.Linear(3, 3)
    opt_param = lin.weight
    parametrize.register_parametrization(lin, "weight", _Symmetric())
    parametrize.register_parametrization(lin, "weight", _Scale())
    assert lin.parametrizations.weight.original is opt_param  # an optimiser holding it keeps working
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    sym = R.normal(size=(3, 3))
    sym = sym + sym.T
    lin.weight = dt.tensor(sym.astype(np.float32))
    np.testing.assert_allclose(lin.weight.detach().numpy(), sym, rtol=1e-6)
    twin = copy.deepcopy(lin)
    np.testing.assert_array_equal(twin.weight.detach().numpy(), lin.weight.detach().numpy())
    twin.weight = dt.tensor(np.eye(3, dtype=np.float32))
    assert not np.allclose(twin.weight.detach().numpy(), lin.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(lin)
    with parametrize.cached():
        assert lin.weight is lin.weight
    assert lin.weight is not lin.weight
    assert parametrize.type_before_parametrizations(lin) is nn.Linear
    assert sorted(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    assert type(lin) is nn.Linear and not parametrize.is_parametrized(lin)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(lin, "weight")
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(lin, "weight", nn.Flatten(0))
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(lin, "nope", _Scale())


def test_assigning_a_parameter_to_a_parametrized_name_is_refused():
    """A Parameter goes to ``register_parameter`` as in any module, which refuses the name
    the parametrization's property holds (PyTorch's ``KeyError``); a plain tensor goes
    through ``right_inverse``. ``lin.weight = lin.weight`` with an identity
    parametrization assigns a Parameter (the original itself)."""
    lin = nn.Linear(3, 3)
    parametrize.register_parametrization(lin, "weight", nn.Identity())
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        lin.weight = lin.weight
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        lin.weight = nn.Parameter(dt.zeros(3, 3))
    lin.bias = nn.Parameter(dt.ones(3))  # not parametrized: replaced as usual
    assert lin.bias.sum().item() == 3


@pytest.mark.parity
@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval_matches_the_pair(transpose):
    torch = pytest.importorskip("torch")
    conv = (nn.ConvTranspose2d(3, 4, 2) if transpose else nn.Conv2d(3, 4, 2)).double().eval()
    bn = nn.BatchNorm2d(4).double().eval()
    bn.running_mean.copy_(dt.tensor(R.normal(size=4)))
    bn.running_var.copy_(dt.tensor(R.uniform(0.5, 2, 4)))
    with dt.no_grad():
        bn.weight.copy_(dt.tensor(R.normal(size=4)))
    x = dt.tensor(R.normal(size=(2, 3, 5, 5)))
    fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    np.testing.assert_allclose(
        fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-10, atol=1e-12
    )
    tw, _ = torch.nn.utils.fuse_conv_bn_weights(
        *(
            torch.tensor(t.detach().numpy())
            for t in (conv.weight, conv.bias, bn.running_mean, bn.running_var)
        ),
        bn.eps,
        torch.tensor(bn.weight.detach().numpy()),
        torch.tensor(bn.bias.detach().numpy()),
        transpose,
    )
    np.testing.assert_allclose(fused.weight.detach().numpy(), tw.detach().numpy(), rtol=1e-12)
    lin, bn1 = nn.Linear(3, 4).double().eval(), nn.BatchNorm1d(4).double().eval()
    bn1.running_var.copy_(dt.tensor(R.uniform(0.5, 2, 4)))
    y = dt.tensor(R.normal(size=(5, 3)))
    np.testing.assert_allclose(
        nn.utils.fuse_linear_bn_eval(lin, bn1)(y).detach().numpy(), bn1(lin(y)).detach().numpy(), rtol=1e-10
    )
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        nn.utils.fuse_linear_bn_eval(lin.train(), bn1)


def test_skip_init_and_functional_call():
    dt.manual_seed(0)
    state = dt.get_rng_state()
    m = nn.utils.skip_init(nn.Linear, 30, 20)
    assert tuple(m.weight.shape) == (20, 30)
    assert np.array_equal(dt.get_rng_state().numpy(), state.numpy())  # nothing drawn
    with pytest.raises(RuntimeError, match="device"):
        nn.utils.skip_init(nn.Flatten)
    lin = nn.Linear(3, 2)
    w = dt.randn(2, 3, requires_grad=True)
    x = dt.randn(4, 3)
    out = nn.utils.stateless.functional_call(lin, {"weight": w}, (x,))
    np.testing.assert_allclose(out.detach().numpy(), (x.matmul(w.t()) + lin.bias).detach().numpy(), rtol=1e-6)
    out.sum().backward()
    assert w.grad is not None and lin.weight.grad is None
    assert lin.weight is not w and isinstance(lin.weight, nn.Parameter)
    with pytest.raises(RuntimeError, match="Missing key"):
        nn.utils.stateless.functional_call(lin, {"weight": w}, (x,), strict=True)


@pytest.mark.parity
def test_init_additions():
    torch = pytest.importorskip("torch")
    w = dt.empty(20, 6)
    nn.init.sparse_(w, 0.25, std=0.5)
    assert ((w.numpy() == 0).sum(0) == 5).all()
    for name in [
        "uniform",
        "normal",
        "constant",
        "xavier_uniform",
        "xavier_normal",
        "kaiming_uniform",
        "kaiming_normal",
        "orthogonal",
        "sparse",
        "dirac",
        "eye",
    ]:
        assert hasattr(torch.nn.init, name) and callable(getattr(nn.init, name))
    with pytest.warns(FutureWarning, match="nn.init.constant_"):
        nn.init.constant(w, 3.0)
    assert (w.numpy() == 3).all()
    with pytest.warns(FutureWarning):
        nn.utils.clip_grad_norm([], 1.0)


def test_torch_func_functional_call_is_the_same_function():
    import disttorch.func

    lin = nn.Linear(2, 2)
    b = dt.zeros(2)
    out = disttorch.func.functional_call(lin, ({"weight": dt.eye(2)}, {"bias": b}), dt.ones(1, 2))
    np.testing.assert_array_equal(out.detach().numpy(), [[1.0, 1.0]])
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        disttorch.func.functional_call(lin, ({"bias": b}, {"bias": b}), dt.ones(1, 2))


@pytest.mark.parity
@pytest.mark.parametrize("d", [1, 2, 3])
def test_nn_grad_conv_input_and_weight_match_pytorch(d):
    torch = pytest.importorskip("torch")
    x = R.normal(size=(2, 4) + (5,) * d)
    w = R.normal(size=(6, 2) + (3,) * d)
    kw = {"stride": 2, "padding": 1, "dilation": 1, "groups": 2}
    out = getattr(torch.nn.functional, f"conv{d}d")(torch.tensor(x), torch.tensor(w), **kw)
    go = R.normal(size=tuple(out.shape))
    ti = getattr(torch.nn.grad, f"conv{d}d_input")(x.shape, torch.tensor(w), torch.tensor(go), **kw)
    tw = getattr(torch.nn.grad, f"conv{d}d_weight")(torch.tensor(x), w.shape, torch.tensor(go), **kw)
    oi = getattr(nn.grad, f"conv{d}d_input")(x.shape, dt.tensor(w), dt.tensor(go), **kw)
    ow = getattr(nn.functional.grad, f"conv{d}d_weight")(dt.tensor(x), w.shape, dt.tensor(go), **kw)
    np.testing.assert_allclose(oi.numpy(), ti.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ow.numpy(), tw.numpy(), rtol=1e-10, atol=1e-12)


def test_module_utils_and_common_types_for_user_layers():
    from disttorch.nn.common_types import _size_2_t  # noqa: F401
    from disttorch.nn.modules.utils import _ntuple, _pair, _reverse_repeat_tuple, _triple

    assert _pair(3) == (3, 3) and _triple((1, 2, 3)) == (1, 2, 3) and _ntuple(4)(0) == (0, 0, 0, 0)
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)


@pytest.mark.parity
@pytest.mark.parametrize(
    "shape, orthogonal_map",
    [((4, 4), None), ((5, 3), None), ((3, 5), None), ((4, 4), "cayley"), ((5, 3), "matrix_exp")],
)
def test_orthogonal_state_dict_loads_across_libraries(shape, orthogonal_map):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.utils.parametrizations.orthogonal(
        torch.nn.Linear(shape[1], shape[0]).double(), orthogonal_map=orthogonal_map
    )
    ours = P.orthogonal(nn.Linear(shape[1], shape[0]).double(), orthogonal_map=orthogonal_map)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy(theirs, ours)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), atol=1e-10)
    _compare(ours, theirs, R.normal(size=(2, shape[1])), torch)


def test_removing_a_multi_tensor_parametrization_follows_the_grad_mode():
    """Removing weight norm computes the weight under the caller's grad mode, as PyTorch's:
    it is a parameter when some original requires grad, and a plain buffer under
    ``no_grad`` (the result then requires no grad)."""
    for no_grad, kind in ((False, "parameter"), (True, "buffer")):
        lin = P.weight_norm(nn.Linear(3, 4))
        expected = lin.weight.detach().numpy()
        if no_grad:
            with dt.no_grad():
                parametrize.remove_parametrizations(lin, "weight")
        else:
            parametrize.remove_parametrizations(lin, "weight")
        names = dict(lin.named_parameters()) if kind == "parameter" else dict(lin.named_buffers())
        assert "weight" in names and type(lin.weight) is (nn.Parameter if kind == "parameter" else dt.Tensor)
        assert lin.weight.is_leaf and lin.weight.requires_grad is (kind == "parameter")
        np.testing.assert_array_equal(lin.weight.detach().numpy(), expected)
