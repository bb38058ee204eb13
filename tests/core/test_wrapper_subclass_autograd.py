"""Autograd through a wrapper subclass's ``__torch_dispatch__`` (recorded above the dispatch,
see ``disttorch.ops.aten_autograd``): each operator's derivative, run on wrappers, gives the
gradients disttorch's own (gradient-checked) ops give plain float64 tensors, and the graph's
nodes are PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt

F = dt.nn.functional


class W(dt.Tensor):
    """Keeps its data in ``elem``; runs every operator on it."""

    @staticmethod
    def __new__(cls, elem, requires_grad=False):
        r = dt.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype, requires_grad=requires_grad)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(x):
            return x.elem if isinstance(x, W) else [unwrap(v) for v in x] if isinstance(x, list) else x

        out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})
        if isinstance(out, (tuple, list)):
            return type(out)(W(o) if isinstance(o, dt.Tensor) else o for o in out)
        return W(out) if isinstance(out, dt.Tensor) else out


CASES = {
    "linear3d": lambda x, y: F.linear(x.reshape(2, 3, 4), y, y[:, 0]),
    "matmul_bmm": lambda x, y: x.reshape(2, 3, 4) @ y.reshape(2, 4, 2),
    "broadcast_add_sub": lambda x, y: (x + y[:1]) - 2 * y[1:2],
    "mul_div": lambda x, y: x * y / (y * y + 1),
    "exp_tanh_sigmoid": lambda x, y: x.exp() + y.tanh() + x.sigmoid(),
    "softmaxes": lambda x, y: F.softmax(x, dim=-1) * F.log_softmax(y, dim=0),
    "gelu_silu": lambda x, y: F.gelu(x) + F.gelu(y, approximate="tanh") + F.silu(x * y),
    "pow_neg_rsub": lambda x, y: -(x**3) + (1 - y) ** 2,
    "reductions": lambda x, y: x.sum(1, keepdim=True) * y.mean(0) + x.mean(),
    "shapes": lambda x, y: x.t().unsqueeze(0).permute(2, 0, 1).transpose(0, 2).squeeze(1) @ y,
    "indexing_cat": lambda x, y: dt.cat([x[1], y[1:3].flatten()[2:6], x[:, 2]]) * 2,
    "masked_to": lambda x, y: x.masked_fill(y > 0, 0.0).to(dt.float32).to(dt.float64),
    "cross_entropy": lambda x, y: F.cross_entropy(x @ y.t(), dt.tensor([0, 2, 1, 0, 1, 2])[:6]),
    "unary_math": lambda x, y: (
        (x * x + 1).log() + (y * y + 1).sqrt() + (x * x + 2).rsqrt() + x.abs() * y.sin() + y.cos()
    ),
    "mse_stack_unbind": lambda x, y: (
        F.mse_loss(dt.stack([x, y], 1), dt.stack(y.unbind(0), 0)[:, None].expand(6, 2, 4)) * x
    ),
    "split_where": lambda x, y: (
        dt.cat([p * (i + 1) for i, p in enumerate(x.split(2, 0))]) + dt.where(x > 0, x, y)
    ),
    "index_select_embedding": lambda x, y: (
        x.index_select(0, dt.tensor([1, 1, 4])) + F.embedding(dt.tensor([0, 5, 5]), y)
    ),
    "layer_norm_clamp": lambda x, y: F.layer_norm(x, (4,), y[0], y[1]).clamp(-0.5, 0.8) + y.clamp(min=0.1),
}


def _grads(case, wrap: bool) -> list:
    rng = np.random.default_rng(0)
    x0, y0 = dt.tensor(rng.standard_normal((6, 4))), dt.tensor(rng.standard_normal((6, 4)))
    if case == "linear3d":
        y0 = dt.tensor(rng.standard_normal((5, 4)))
    if case == "matmul_bmm":
        y0 = dt.tensor(rng.standard_normal((4, 4)))
    if case == "shapes":
        y0 = dt.tensor(rng.standard_normal((6, 3)))
    if wrap:
        x, y = W(x0, requires_grad=True), W(y0, requires_grad=True)
    else:
        x, y = x0.requires_grad_(), y0.requires_grad_()
    out = CASES[case](x, y)
    (out * dt.linspace(0.5, 1.5, out.numel()).reshape(out.shape).double()).sum().backward()
    return [None if g is None else (g.elem if wrap else g).numpy() for g in (x.grad, y.grad)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_derivatives_through_a_wrapper_match_plain_autograd(case):
    for got, want in zip(_grads(case, True), _grads(case, False)):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_the_graph_has_pytorch_nodes_and_an_op_without_derivative_says_so():
    x = W(dt.ones(2, 3, dtype=dt.float64), requires_grad=True)
    y = (x.exp() * 2).sum(1)
    assert [type(y.grad_fn).__name__, y.grad_fn.next_functions[0][0].name()] == [
        "SumBackward1",
        "MulBackward0",
    ]
    assert not y.is_leaf and x.is_leaf and type(y) is W
    z = x.cumsum(1).sum()
    with pytest.raises(NotImplementedError, match="aten.cumsum.default"):
        z.backward()


def _unconverted(lib) -> list:
    """A subclass with its own ``__torch_dispatch__`` and no ``__torch_function__`` gets the
    disabled one: what its dispatch returns (here plain tensors) is not converted to it; its
    strides are those it was made with."""

    class Plainly(lib.Tensor):
        @staticmethod
        def __new__(cls, elem):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*[a.elem if isinstance(a, Plainly) else a for a in args], **(kwargs or {}))

    p = Plainly(lib.ones(2, 3))
    disabled = Plainly.__torch_function__ is lib._C._disabled_torch_function_impl
    outs = [p + 1, lib.nn.functional.linear(lib.ones(1, 3), p), p.sum(), p[0]]
    strided = lib.Tensor._make_wrapper_subclass(Plainly, (2, 3), strides=(1, 2))
    layout = [p.stride(), p.stride(-1), p.is_contiguous(), strided.stride(), strided.is_contiguous()]
    return [disabled, *(type(o).__name__ for o in outs), layout]


def test_a_dispatching_subclass_has_torch_function_disabled():
    assert _unconverted(dt) == [
        True,
        "Tensor",
        "Tensor",
        "Tensor",
        "Tensor",
        [(3, 1), 1, True, (1, 2), False],
    ]


@pytest.mark.parity
def test_a_dispatching_subclass_has_torch_function_disabled_as_in_pytorch(torch):
    assert _unconverted(dt) == _unconverted(torch)


def test_a_wrapper_keeping_its_tensor_as_data_is_an_input_of_a_recorded_function():
    """PyG's EdgeIndex keeps its inner tensor as ``_data`` (disttorch's own name for a
    tensor's array) and is handed, not requiring grad, to autograd Functions beside inputs
    that do."""

    class Keeps(dt.Tensor):
        @staticmethod
        def __new__(cls, data):
            r = dt.Tensor._make_wrapper_subclass(cls, data.shape, dtype=data.dtype)
            r._data = data
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*[a._data if isinstance(a, Keeps) else a for a in args], **(kwargs or {}))

    class Gather(dt.autograd.Function):
        @staticmethod
        def forward(ctx, index, x):
            ctx.save_for_backward(index)
            return x[index.as_subclass(dt.Tensor)._data if isinstance(index, Keeps) else index]

        @staticmethod
        def backward(ctx, g):
            (index,) = ctx.saved_tensors
            return None, dt.zeros(3).index_add(0, index._data, g)

    x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    Gather.apply(Keeps(dt.tensor([0, 2, 2])), x).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 2.0]


def _mixed_mlp(lib) -> list:
    """A wrapper input through layers whose parameters are plain tensors: the operators its
    ``__torch_dispatch__`` sees in backward (a transposed weight's gradient is computed
    transposed, as PyTorch's ``mm_mat2_backward`` does) and the parameters' gradients."""
    F = lib.nn.functional
    log = []

    class L(lib.Tensor):
        @staticmethod
        def __new__(cls, elem, rg=False):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype, requires_grad=rg)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            log.append(str(func))
            out = func(*[a.elem if isinstance(a, L) else a for a in args], **(kwargs or {}))
            return L(out) if isinstance(out, lib.Tensor) else out

    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))
    x = L(lib.linspace(-1, 1, 12).reshape(3, 4), rg=True)
    loss = F.mse_loss(model(x), lib.zeros(3, 2))
    log.clear()
    loss.backward()
    grads = [
        (p.grad.elem if isinstance(p.grad, L) else p.grad).numpy().round(5).tolist()
        for p in model.parameters()
    ]
    return [log, grads, x.grad.elem.numpy().round(5).tolist()]


@pytest.mark.parity
def test_a_wrapper_input_through_plain_parameters_matches_pytorch(torch):
    assert _mixed_mlp(dt) == _mixed_mlp(torch)
