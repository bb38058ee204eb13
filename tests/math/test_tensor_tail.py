"""The tensor long tail: torch.binomial, torch.gradient, Tensor.as_subclass,
Tensor.fill_diagonal_ and Tensor.apply_/map_/map2_ (values, gradients, PyTorch parity, errors)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck


# ---------------------------------------------------------------------- binomial
def test_binomial_moments_dtype_and_broadcasting():
    dt.manual_seed(0)
    x = dt.binomial(dt.full((200000,), 50.0), dt.full((200000,), 0.3))
    assert x.dtype == dt.float32
    assert abs(x.mean().item() - 15.0) < 0.05
    assert abs(x.var().item() - 10.5) < 0.2
    assert np.all(x.numpy() == np.round(x.numpy())) and x.numpy().min() >= 0 and x.numpy().max() <= 50
    out = dt.binomial(dt.tensor([[10.0], [0.0]], dtype=dt.float64), dt.tensor([1.0, 0.0], dtype=dt.float64))
    assert out.dtype == dt.float64
    np.testing.assert_array_equal(out.numpy(), [[10.0, 0.0], [0.0, 0.0]])
    nan = dt.binomial(dt.tensor([3.0, float("nan")]), dt.tensor([float("nan"), 0.5]))
    assert np.isnan(nan.numpy()).all()


def test_binomial_generator_reproducible_and_no_graph():
    count = dt.tensor([5.0, 9.0, 20.0], requires_grad=True)
    prob = dt.tensor([0.2, 0.5, 0.9])
    a = dt.binomial(count, prob, generator=dt.Generator().manual_seed(3))
    b = dt.binomial(count, prob, generator=dt.Generator().manual_seed(3))
    assert dt.equal(a, b) and not a.requires_grad


def test_binomial_errors():
    with pytest.raises(ValueError, match="floating-point dtypes for count, got: Long"):
        dt.binomial(dt.tensor([10, 20]), dt.tensor([0.5, 0.2]))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        dt.binomial(dt.tensor([10.0]), dt.tensor([0.5], dtype=dt.float64))
    with pytest.raises(ValueError, match="0 <= prob <= 1"):
        dt.binomial(dt.tensor([10.0]), dt.tensor([1.5]))
    with pytest.raises(ValueError, match="count >= 0"):
        dt.binomial(dt.tensor([-1.0]), dt.tensor([0.5]))


# ---------------------------------------------------------------------- gradient
def test_gradient_values():
    (g,) = dt.gradient(dt.tensor([1, 2, 4, 7, 11]))
    assert g.dtype == dt.float32
    np.testing.assert_allclose(g.numpy(), [1.0, 1.5, 2.5, 3.5, 4.0])
    x = dt.arange(12.0).reshape(3, 4) ** 2
    g0, g1 = dt.gradient(x, spacing=[1.0, 2.0])
    np.testing.assert_allclose(g0.numpy(), np.gradient(x.numpy(), axis=0))
    np.testing.assert_allclose(g1.numpy(), np.gradient(x.numpy(), 2.0, axis=1))
    coords = np.array([0.0, 1.0, 3.0, 4.0, 7.0])
    (g,) = dt.gradient(
        dt.tensor([1.0, 2, 4, 7, 11], dtype=dt.float64), spacing=(dt.tensor(coords),), edge_order=2
    )
    np.testing.assert_allclose(g.numpy(), np.gradient([1.0, 2, 4, 7, 11], coords, edge_order=2))
    assert dt.gradient(dt.tensor(3.0)) == ()


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_gradcheck(edge_order):
    rng = np.random.default_rng(0)
    x = dt.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    coords = dt.tensor(np.cumsum(rng.random(5) + 0.2))
    rows = dt.tensor(np.arange(4.0) * 2)
    assert gradcheck(lambda a: dt.gradient(a, spacing=(rows, coords), edge_order=edge_order), (x,))
    assert gradcheck(lambda a: dt.gradient(a, dim=0, edge_order=edge_order)[0], (x,))


def test_gradient_errors():
    x = dt.ones(3, 4)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        dt.gradient(x, edge_order=3)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        dt.gradient(dt.ones(2, 3), edge_order=2)
    with pytest.raises(RuntimeError, match="list of length equal to 'self.dim\\(\\) = 2'"):
        dt.gradient(x, spacing=[1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        dt.gradient(x, dim=(0, 0))
    with pytest.raises(RuntimeError, match="to have one dimension"):
        dt.gradient(x, dim=0, spacing=[dt.tensor(2.0)])
    with pytest.raises(RuntimeError, match="as many elements as the dimension"):
        dt.gradient(x, dim=0, spacing=[dt.tensor([0.0, 1.0])])
    with pytest.raises(TypeError, match="wrap the coordinates in a tuple"):
        dt.gradient(x, spacing=dt.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(TypeError, match="only numbers or only 1-D tensors"):
        dt.gradient(x, spacing=(2.0, dt.tensor([0.0, 1.0, 2.0, 3.0])))
    with pytest.raises(IndexError):
        dt.gradient(x, dim=5)


@pytest.mark.parity
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"spacing": 2.0, "edge_order": 2},
        {"spacing": [1.0, 2.0, 0.5]},
        {"dim": (2, 0), "edge_order": 2},
        {"spacing": "coords", "dim": 0, "edge_order": 2},
        {"spacing": "coords", "dim": 0},
    ],
)
def test_gradient_matches_pytorch(kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    y = rng.standard_normal((5, 6, 4))
    coords = np.cumsum(rng.random(5) + 0.1)
    for dtype in ("float32", "float64"):
        res = []
        for lib in (torch, dt):
            args = dict(kw)
            if args.get("spacing") == "coords":
                args["spacing"] = (lib.tensor(coords),)
            a = lib.tensor(y, dtype=getattr(lib, dtype), requires_grad=True)
            outs = lib.gradient(a, **args)
            sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
            res.append(([o.detach().numpy() for o in outs], a.grad.numpy()))
        (t_out, t_grad), (o_out, o_grad) = res
        assert [o.dtype for o in o_out] == [t.dtype for t in t_out]
        for t, o in zip(t_out, o_out):
            np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(o_grad, t_grad, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------- as_subclass
class _Plain(dt.Tensor):
    pass


class _Slotted(dt.Tensor):
    __slots__ = ("extra",)


@pytest.mark.parametrize("cls", [_Plain, _Slotted, dt.Tensor])
def test_as_subclass_shares_memory_and_graph(cls):
    x = dt.ones(3, requires_grad=True)
    y = x.as_subclass(cls)
    assert type(y) is cls and y.requires_grad and not y.is_leaf
    (y * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    z = dt.zeros(2)
    w = z.as_subclass(cls)
    assert type(w) is cls and w.is_leaf and not w.requires_grad
    w[0] = 5
    np.testing.assert_array_equal(z.numpy(), [5.0, 0.0])


def test_as_subclass_rejects_non_tensor_classes():
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        dt.ones(2).as_subclass(int)


# ---------------------------------------------------------------------- fill_diagonal_
@pytest.mark.parametrize(
    "shape,wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False), ((3, 7), True), ((4, 4, 4), False)]
)
def test_fill_diagonal_matches_numpy(shape, wrap):
    x = dt.zeros(*shape)
    assert x.fill_diagonal_(2.5, wrap=wrap) is x
    expected = np.zeros(shape, dtype=np.float32)
    np.fill_diagonal(expected, 2.5, wrap=wrap)
    np.testing.assert_array_equal(x.numpy(), expected)


def test_fill_diagonal_gradient_dtype_and_errors():
    q = dt.ones(3, 3, requires_grad=True)
    r = q * 2
    r.fill_diagonal_(dt.tensor(7.0))
    r.sum().backward()
    np.testing.assert_array_equal(q.grad.numpy(), 2 * (1 - np.eye(3)))
    np.testing.assert_array_equal(
        dt.zeros(2, 2, dtype=dt.int64).fill_diagonal_(2.5).numpy(), [[2, 0], [0, 2]]
    )
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        dt.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        dt.zeros(2, 3, 3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        dt.ones(2, 2, requires_grad=True).fill_diagonal_(0)


@pytest.mark.parity
def test_fill_diagonal_matches_pytorch():
    torch = pytest.importorskip("torch")
    for shape, wrap in (((7, 3), True), ((5, 2), False), ((3, 3, 3), False)):
        t = torch.zeros(*shape).fill_diagonal_(-1.0, wrap=wrap)
        o = dt.zeros(*shape).fill_diagonal_(-1.0, wrap=wrap)
        np.testing.assert_array_equal(o.numpy(), t.numpy())


# ---------------------------------------------------------------------- apply_ / map_ / map2_
def test_apply_map_map2_in_place():
    x = dt.arange(4.0)
    assert x.apply_(lambda v: v * 2) is x
    np.testing.assert_array_equal(x.numpy(), [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(dt.arange(3).apply_(lambda v: v * 2.7).numpy(), [0, 2, 5])
    m = dt.ones(2, 3).map_(dt.tensor([1.0, 2.0, 3.0]), lambda a, b: a + b)
    np.testing.assert_array_equal(m.numpy(), [[2.0, 3.0, 4.0]] * 2)
    y = dt.arange(3.0).map2_(dt.ones(3), dt.full((3,), 2.0), lambda a, b, c: a * c + b)
    np.testing.assert_array_equal(y.numpy(), [1.0, 3.0, 5.0])
    base = dt.ones(2, 2)
    base[0].apply_(lambda v: 7)  # a view writes through
    np.testing.assert_array_equal(base.numpy(), [[7.0, 7.0], [1.0, 1.0]])


def test_apply_map_errors():
    with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires grad"):
        dt.ones(2, requires_grad=True).apply_(lambda v: v)
    with pytest.raises(TypeError, match="expected torch.FloatTensor for 'other' \\(got torch.LongTensor\\)"):
        dt.ones(2).map_(dt.ones(2, dtype=dt.int64), lambda a, b: a)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        dt.ones(2).map_(dt.ones(3), lambda a, b: a)
    with pytest.raises(TypeError, match="must be real number, not str"):
        dt.ones(2).apply_(lambda v: "a")


@pytest.mark.parity
def test_apply_map_match_pytorch():
    torch = pytest.importorskip("torch")

    def fn(a, b):
        return a * 3 - b / 2

    a = np.arange(6.0).reshape(2, 3)
    t = torch.tensor(a).map_(torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64), fn)
    o = dt.tensor(a).map_(dt.tensor([1.0, 2.0, 4.0], dtype=dt.float64), fn)
    np.testing.assert_array_equal(o.numpy(), t.numpy())
    np.testing.assert_array_equal(
        dt.arange(5).apply_(lambda v: v * v - 1.5).numpy(),
        torch.arange(5).apply_(lambda v: v * v - 1.5).numpy(),
    )
