"""scatter_reduce / index_reduce (and their in-place forms, scatter(reduce=)): values and
gradients against PyTorch, float64 gradcheck, tie splitting, integer mean, errors."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _case(seed, dim=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 5))
    idx_shape = (5, 3) if dim == 0 else (3, 6)
    src = rng.standard_normal(idx_shape)
    idx = rng.integers(0, x.shape[dim], idx_shape)
    return x, idx, src


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, -1])
def test_scatter_reduce_gradcheck(reduce, include_self, dim):
    x, idx, src = _case(1, dim % 2)
    x_t = dt.tensor(x, requires_grad=True)
    s_t = dt.tensor(src, requires_grad=True)
    i_t = dt.tensor(idx)
    assert gradcheck(
        lambda a, b: a.scatter_reduce(dim, i_t, b, reduce, include_self=include_self), (x_t, s_t)
    )


@pytest.mark.parametrize("reduce", REDUCES[1:])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_gradcheck(reduce, include_self):
    rng = np.random.default_rng(2)
    x_t = dt.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    s_t = dt.tensor(rng.standard_normal((3, 6)), requires_grad=True)
    i_t = dt.tensor([0, 2, 0, 3, 2, 0])
    assert gradcheck(
        lambda a, b: dt.index_reduce(a, 1, i_t, b, reduce, include_self=include_self), (x_t, s_t)
    )


def test_prod_gradient_with_zeros():
    """One zero among the values: it gets the product of the others; two zeros: all get 0."""
    x = dt.tensor([2.0, 3.0], dtype=dt.float64, requires_grad=True)
    src = dt.tensor([0.0, 5.0, 0.0, 0.0, 7.0], dtype=dt.float64, requires_grad=True)
    out = x.scatter_reduce(0, dt.tensor([0, 0, 1, 1, 1]), src, "prod")
    out.sum().backward()
    np.testing.assert_allclose(src.grad.numpy(), [10.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    x0 = dt.tensor([0.0], dtype=dt.float64, requires_grad=True)
    s0 = dt.tensor([4.0, 5.0], dtype=dt.float64, requires_grad=True)
    x0.scatter_reduce(0, dt.tensor([0, 0]), s0, "prod").sum().backward()
    np.testing.assert_allclose(x0.grad.numpy(), [20.0])
    np.testing.assert_allclose(s0.grad.numpy(), [0.0, 0.0])


def test_amax_ties_share_the_gradient():
    x = dt.tensor([3.0, 1.0], requires_grad=True)
    src = dt.tensor([3.0, 3.0, 2.0], requires_grad=True)
    out = x.scatter_reduce(0, dt.tensor([0, 0, 1]), src, "amax")
    np.testing.assert_array_equal(out.detach().numpy(), [3.0, 2.0])
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3, 0.0])
    np.testing.assert_allclose(src.grad.numpy(), [1 / 3, 1 / 3, 1.0])


def test_excluded_self_counts_as_a_tie_as_in_pytorch():
    """include_self=False: an excluded input equal to the result is counted as a tie and its
    share dropped, as PyTorch does (the maximiser gets half here)."""
    s = dt.tensor([3.0, 5.0], requires_grad=True)
    src = dt.tensor([3.0, 1.0], requires_grad=True)
    s.scatter_reduce(0, dt.tensor([0, 0]), src, "amax", include_self=False).sum().backward()
    np.testing.assert_allclose(src.grad.numpy(), [0.5, 0.0])
    np.testing.assert_allclose(s.grad.numpy(), [0.0, 1.0])


@pytest.mark.parity
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_ties_with_excluded_self_parity(torch, reduce):
    """PyG's global max pool: zeros scattered into with include_self=False, ReLU-like ties."""
    x = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 0.5], [2.0, 2.0], [2.0, 1.0]])
    idx = np.array([[0, 0], [0, 0], [0, 0], [1, 1], [1, 1]])
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    grads = []
    for lib in (dt, torch):
        src = lib.tensor(x, requires_grad=True)
        out = lib.zeros(2, 2, dtype=lib.float64).scatter_reduce(
            0, lib.tensor(idx), src, reduce, include_self=False
        )
        (out * lib.tensor(w)).sum().backward()
        grads.append(src.grad.numpy())
    np.testing.assert_allclose(*grads)


def test_src_larger_than_index_gets_zero_gradient_outside():
    x = dt.zeros(3, dtype=dt.float64, requires_grad=True)
    src = dt.tensor([1.0, 2.0, 3.0, 4.0], dtype=dt.float64, requires_grad=True)
    x.scatter_reduce(0, dt.tensor([2, 0]), src, "sum").sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), [1.0, 1.0, 0.0, 0.0])


def test_integer_mean_floors_and_inplace_forms():
    x = dt.tensor([-5, 7, 9])
    out = x.scatter_reduce(0, dt.tensor([0, 0, 1]), dt.tensor([2, 2, 4]), "mean")
    np.testing.assert_array_equal(out.numpy(), [-1, 5, 9])
    assert out.dtype == dt.int64
    excl = x.scatter_reduce(0, dt.tensor([0, 0]), dt.tensor([2, 3]), "mean", include_self=False)
    np.testing.assert_array_equal(excl.numpy(), [2, 7, 9])
    y = dt.ones(2, 3)
    r = y.index_reduce_(1, dt.tensor([0, 0, 2]), dt.full((2, 3), 2.0), "prod")
    assert r is y
    np.testing.assert_array_equal(y.numpy(), [[4.0, 1.0, 2.0]] * 2)
    z = dt.zeros(3)
    z.scatter_reduce_(0, dt.tensor([1, 1]), dt.tensor([2.0, 5.0]), "amax", include_self=False)
    np.testing.assert_array_equal(z.numpy(), [0.0, 5.0, 0.0])
    m = dt.ones(3).scatter(0, dt.tensor([0, 0]), dt.tensor([2.0, 3.0]), reduce="multiply")
    np.testing.assert_array_equal(m.numpy(), [6.0, 1.0, 1.0])


def test_inplace_records_a_graph():
    a = dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64, requires_grad=True)
    b = a * 1
    b.scatter_reduce_(0, dt.tensor([0, 0]), dt.tensor([4.0, 5.0], dtype=dt.float64), "prod")
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [20.0, 1.0, 1.0])


def test_errors():
    x = dt.zeros(3)
    idx = dt.tensor([0, 1])
    with pytest.raises(RuntimeError, match="must be either sum, prod, mean, amax or amin, got foo"):
        x.scatter_reduce(0, idx, dt.ones(2), "foo")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_reduce(0, idx, dt.ones(2, dtype=dt.float64), "sum")
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x.scatter_reduce(0, dt.tensor([5]), dt.ones(1), "sum")
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        dt.zeros(2, 2).scatter_reduce(0, idx, dt.ones(2), "sum")
    with pytest.raises(
        RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum"
    ):
        x.index_reduce(0, idx, dt.ones(2), "sum")
    with pytest.raises(RuntimeError, match="Number of indices \\(2\\) should be equal to source.size"):
        x.index_reduce(0, idx, dt.ones(3), "prod")
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_reduce(0, dt.tensor([3]), dt.ones(1), "prod")
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        x.index_reduce(0, dt.tensor([[0, 1]]), dt.ones(2), "prod")
    with pytest.raises(RuntimeError, match="source tensor shape must match self tensor shape"):
        dt.zeros(2, 3).index_reduce(0, idx, dt.ones(2, 4), "prod")
    with pytest.raises(RuntimeError, match="must be either add or multiply"):
        x.scatter(0, idx, dt.ones(2), reduce="max")


@pytest.mark.parity
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_pytorch(reduce, include_self):
    torch = pytest.importorskip("torch")
    for dim, dtype in ((0, "float64"), (1, "float32")):
        x, idx, src = _case(3 + dim, dim)
        x[1, 1], src[0, 0], src[1, 1] = 0.0, 0.0, x[idx[1, 1], 1] if dim == 0 else 0.0  # zeros and ties
        res = []
        for lib in (torch, dt):
            a = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            b = lib.tensor(src, dtype=getattr(lib, dtype), requires_grad=True)
            out = lib.scatter_reduce(a, dim, lib.tensor(idx), b, reduce, include_self=include_self)
            out.backward(lib.tensor(np.linspace(-1, 2, out.numel()).reshape(out.shape), dtype=out.dtype))
            res.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
        tol = 1e-12 if dtype == "float64" else 1e-5
        for theirs, ours in zip(*res):
            np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


@pytest.mark.parity
@pytest.mark.parametrize("reduce", REDUCES[1:])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_pytorch(reduce, include_self):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x, src = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 5, 2))
    idx = [1, 3, 1, 0, 1]
    res = []
    for lib in (torch, dt):
        a = lib.tensor(x, requires_grad=True)
        b = lib.tensor(src, requires_grad=True)
        out = a.index_reduce(1, lib.tensor(idx), b, reduce, include_self=include_self)
        out.backward(lib.tensor(np.linspace(-1, 2, out.numel()).reshape(out.shape)))
        res.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for theirs, ours in zip(*res):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    ints = [
        lib.tensor([[4, 9, -3]]).index_reduce(1, lib.tensor([0, 0, 2]), lib.tensor([[2, 3, 7]]), "mean")
        for lib in (torch, dt)
    ]
    np.testing.assert_array_equal(ints[1].numpy(), ints[0].numpy())


_ZERO_DIM = {  # a 0-d self, index or src is a 1-element vector, as PyTorch's ensure_nonempty_dim
    "one_hot": lambda L: L.zeros(10).scatter_(0, L.tensor(3), value=1),
    "scatter_src": lambda L: L.zeros(5).scatter(0, L.tensor(1), L.tensor([7.0, 8.0])),
    "scatter_0d_self": lambda L: L.zeros(()).scatter(0, L.tensor([0]), 1.0),
    "scatter_add": lambda L: L.zeros(5).scatter_add(-1, L.tensor(2), L.tensor(7.0)),
    "scatter_reduce": lambda L: L.ones(5).scatter_reduce(0, L.tensor(2), L.tensor([7.0, 8.0]), "prod"),
    "scatter_multiply": lambda L: L.ones(5).scatter_(0, L.tensor(2), 3.0, reduce="multiply"),
    "gather": lambda L: L.arange(5.0).gather(0, L.tensor(3)),
    "gather_0d_self": lambda L: L.tensor(3.0).gather(-1, L.tensor([0])),
}


@pytest.mark.parity
@pytest.mark.parametrize("case", sorted(_ZERO_DIM))
def test_zero_dim_tensors_scatter_and_gather_as_vectors(torch, case):
    got, want = _ZERO_DIM[case](dt), _ZERO_DIM[case](torch)
    assert got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_zero_dim_index_gradcheck_and_errors():
    src = dt.tensor([0.5, -1.5], dtype=dt.float64, requires_grad=True)
    x = dt.tensor(np.arange(5.0), requires_grad=True)
    assert gradcheck(lambda a, b: a.scatter(0, dt.tensor(2), b) * 2, (x, src))
    assert gradcheck(lambda a: a.gather(0, dt.tensor(4)), (x,))
    with pytest.raises(RuntimeError, match="same number of dimensions as self tensor"):
        dt.zeros(2, 3).scatter(0, dt.tensor(1), 1.0)
    with pytest.raises(RuntimeError, match="same number of dimensions as input tensor"):
        dt.zeros(2, 3).gather(0, dt.tensor(1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.zeros(5).gather(1, dt.tensor(1))


def test_uint8_mean_bool_kernels_and_wrapped_fill():
    """Found by fuzzing: uint8 ``mean`` floors in uint8; ``index_reduce`` of bools has no
    kernel excluding input nor one for vectors (PyTorch's errors, before the index check);
    ``index_fill`` wraps -1 into uint8."""
    x = dt.tensor([10, 20, 30], dtype=dt.uint8)
    got = x.scatter_reduce(0, dt.tensor([0, 0, 2]), dt.tensor([1, 2, 7], dtype=dt.uint8), "mean")
    assert got.tolist() == [4, 20, 18] and got.dtype == dt.uint8
    with pytest.raises(NotImplementedError, match="\"index_func_\" not implemented for 'Bool'"):
        dt.ones(3, dtype=dt.bool).index_reduce(0, dt.tensor([5]), dt.ones(1, dtype=dt.bool), "prod")
    with pytest.raises(NotImplementedError, match="index_reduce_func_exclude_input_init"):
        dt.ones(2, 2, dtype=dt.bool).index_reduce(
            0, dt.tensor([1]), dt.ones(1, 2, dtype=dt.bool), "amax", include_self=False
        )
    m = dt.ones(2, 2, dtype=dt.bool).index_reduce(0, dt.tensor([1]), dt.zeros(1, 2, dtype=dt.bool), "amin")
    assert m.tolist() == [[True, True], [False, False]]
    assert dt.zeros(2, 2, dtype=dt.uint8).index_fill(1, dt.tensor([0]), -1).tolist() == [[255, 0], [255, 0]]
