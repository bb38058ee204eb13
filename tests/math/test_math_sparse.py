"""Sparse COO tensors: construction, conversion, coalescing, products with gradients to the
dense operand and the values, sums, errors; the graph-convolution preprocessing path."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) repeats


def _sp(values=(3.0, 4.0, 5.0, 1.0), dtype=dt.float64, **kw):
    return dt.sparse_coo_tensor(IDX, dt.tensor(list(values), dtype=dtype), (2, 3), **kw)


def test_construct_and_attributes():
    s = _sp()
    assert s.is_sparse and s.layout is dt.sparse_coo and dt.randn(2).layout is dt.strided
    assert s.shape == (2, 3) and s.dim() == 2 and s._nnz() == 4 and s.dtype == dt.float64
    assert s.sparse_dim() == 2 and s.dense_dim() == 0 and not s.is_coalesced()
    with pytest.raises(RuntimeError, match="uncoalesced"):
        s.indices()
    c = s.coalesce()
    assert c.is_coalesced() and c._nnz() == 3
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 1, 1], [2, 0, 2]])
    np.testing.assert_array_equal(c.values().numpy(), [4.0, 4.0, 5.0])
    np.testing.assert_array_equal(s.to_dense().numpy(), [[0, 0, 4], [4, 0, 5]])
    inferred = dt.sparse_coo_tensor(IDX, dt.ones(4))
    assert inferred.shape == (2, 3)


def test_construct_errors():
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 1, size is 2"):
        dt.sparse_coo_tensor(IDX, dt.ones(4), (2, 2))
    with pytest.raises(RuntimeError, match="same nnz"):
        dt.sparse_coo_tensor(IDX, dt.ones(3), (2, 3))
    with pytest.raises(RuntimeError, match="sparse_dim x nnz"):
        dt.sparse_coo_tensor([0, 1], dt.ones(2), (2,))
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        _sp().exp()


def test_to_sparse_roundtrip_and_hybrid():
    x = dt.tensor([[0.0, 2.0], [0.0, 0.0], [1.5, 0.0]])
    s = x.to_sparse()
    assert s.is_coalesced() and s._nnz() == 2
    np.testing.assert_array_equal(s.indices().numpy(), [[0, 2], [1, 0]])
    np.testing.assert_array_equal(s.to_dense().numpy(), x.numpy())
    h = x.to_sparse(1)  # rows sparse, columns dense
    assert h.sparse_dim() == 1 and h.dense_dim() == 1 and h.values().shape == (2, 2)
    np.testing.assert_array_equal(h.to_dense().numpy(), x.numpy())


def test_products_sums_arithmetic():
    s, d = _sp(), dt.randn(3, 4, dtype=dt.float64)
    dense = s.to_dense()
    for out in (s @ d, dt.sparse.mm(s, d), dt.spmm(s, d), dt.mm(s, d), dt.matmul(s, d), s.mm(d)):
        assert out.layout is dt.strided
        np.testing.assert_allclose(out.numpy(), dense.numpy() @ d.numpy())
    e = dt.randn(5, 2, dtype=dt.float64)
    np.testing.assert_allclose((e @ s).numpy(), e.numpy() @ dense.numpy())
    np.testing.assert_allclose(dt.mm(e, s).numpy(), e.numpy() @ dense.numpy())
    v = dt.randn(3, dtype=dt.float64)
    np.testing.assert_allclose((s @ v).numpy(), dense.numpy() @ v.numpy())
    np.testing.assert_allclose((dt.eye(2, 3, dtype=dt.float64) + s).numpy(), np.eye(2, 3) + dense.numpy())
    np.testing.assert_allclose((s * 2).to_dense().numpy(), 2 * dense.numpy())
    np.testing.assert_allclose((s + s).to_dense().numpy(), 2 * dense.numpy())
    assert s.sum().item() == 13.0
    col = dt.sparse.sum(s, 0)
    assert col.is_sparse
    np.testing.assert_allclose(col.to_dense().numpy(), dense.numpy().sum(0))
    np.testing.assert_allclose(dt.sum(s, dim=1).to_dense().numpy(), dense.numpy().sum(1))
    assert dt.sparse.sum(s, (0, 1)).layout is dt.strided
    np.testing.assert_array_equal(s.t().to_dense().numpy(), dense.numpy().T)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        s @ dt.randn(4, 2, dtype=dt.float64)


def test_gradients_to_values_and_dense():
    v = dt.tensor([3.0, 4.0, 5.0, 1.0], dtype=dt.float64, requires_grad=True)
    d = dt.randn(3, 2, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda v, d: dt.sparse.mm(dt.sparse_coo_tensor(IDX, v, (2, 3)), d), (v, d))
    assert gradcheck(lambda v, d: d.t() @ dt.sparse_coo_tensor(IDX, v, (2, 3)).t(), (v, d))
    assert gradcheck(lambda v: dt.sparse_coo_tensor(IDX, v, (2, 3)).coalesce().values(), (v,))
    x = dt.randn(3, 3, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda x: x.to_sparse() @ d, (x,))
    leaf = _sp(requires_grad=True)
    (leaf @ d).sum().backward()
    assert leaf.grad.is_sparse
    expected = d.detach().numpy().sum(1)[np.array(IDX[1])]
    np.testing.assert_allclose(leaf.grad._values().numpy(), expected)


def test_gcn_preprocessing_path():
    """The graph-convolution program's data path: eye + sparse adjacency (int64), degree
    normalisation, sparse diagonal matrices on both sides, then spmm in the model."""
    edges = np.array([[0, 1], [1, 2], [2, 0], [3, 1]], dtype=np.int32)
    n = 4
    adj = dt.sparse_coo_tensor(edges.T, dt.ones(len(edges)), (n, n), dtype=dt.int64)
    adj = dt.eye(n) + adj
    assert adj.dtype == dt.float32 and adj.layout is dt.strided
    deg = dt.sqrt(1 / dt.sum(adj, dim=1))
    deg = dt.diag(deg).to_sparse()
    norm = deg @ adj @ deg
    a = np.eye(n) + np.bincount(edges[:, 0] * n + edges[:, 1], minlength=n * n).reshape(n, n)
    dd = np.diag(1 / np.sqrt(a.sum(1)))
    np.testing.assert_allclose(norm.numpy(), dd @ a @ dd, rtol=1e-6)
    w = dt.randn(n, 3, requires_grad=True)
    out = dt.spmm(norm.to_sparse(), dt.mm(dt.eye(n).to_sparse(), w))
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.repeat((dd @ a @ dd).sum(0)[:, None], 3, 1), rtol=1e-5)


@pytest.mark.parity
def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 5, size=(2, 12))
    val = rng.standard_normal(12)
    dense = rng.standard_normal((5, 3))
    ts = torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(val), (5, 5)).coalesce()
    ds = dt.sparse_coo_tensor(idx, dt.tensor(val), (5, 5)).coalesce()
    np.testing.assert_array_equal(ds.indices().numpy(), ts.indices().numpy())
    np.testing.assert_allclose(ds.values().numpy(), ts.values().numpy())
    np.testing.assert_allclose((ds @ dt.tensor(dense)).numpy(), (ts @ torch.from_numpy(dense)).numpy())
    np.testing.assert_allclose(
        dt.sparse.sum(ds, 1).to_dense().numpy(), torch.sparse.sum(ts, 1).to_dense().numpy()
    )


def test_copy_pickle_and_dense_queries():
    import copy
    import pickle

    s = _sp()
    for c in (copy.deepcopy(s), pickle.loads(pickle.dumps(s))):
        assert c.is_sparse and c.shape == s.shape
        np.testing.assert_array_equal(c.to_dense().numpy(), s.to_dense().numpy())
    d = dt.ones(2, 3)
    assert d.sparse_dim() == 0 and d.dense_dim() == 2 and not d.is_sparse
    with pytest.raises(RuntimeError, match="sparse coordinate tensor layout"):
        d.indices()


def test_index_select_of_sparse_dims_dense_dims_and_gradients():
    s = _sp()  # uncoalesced: (0, 2) twice
    r = s.index_select(1, dt.tensor([2, 0, 2]))
    assert r.layout is dt.sparse_coo and r.shape == (2, 3) and not r.is_coalesced()
    assert r._indices().tolist() == [[0, 1, 0, 1, 0, 1, 0], [0, 0, 0, 1, 2, 2, 2]]  # by position, then entry
    assert r._values().tolist() == [3.0, 5.0, 1.0, 4.0, 3.0, 5.0, 1.0]
    np.testing.assert_array_equal(
        dt.index_select(s, 0, dt.tensor([-1])).to_dense().numpy(), s.to_dense().numpy()[[1]]
    )
    hybrid = dt.sparse_coo_tensor(IDX, dt.arange(8.0).reshape(4, 2), (2, 3, 2))
    assert hybrid.index_select(2, dt.tensor([1]))._values().tolist() == [[1.0], [3.0], [5.0], [7.0]]
    with pytest.raises(IndexError, match="index contains 3 that is out of range"):
        s.index_select(1, dt.tensor([3]))
    with pytest.raises(IndexError, match="must be 1-D strided"):
        s.index_select(0, dt.tensor([[0]]))
    select = lambda v: dt.sparse_coo_tensor(IDX, v, (2, 3)).index_select(1, dt.tensor([2, 2, 1]))  # noqa: E731
    assert gradcheck(lambda v: select(v).to_dense(), (dt.rand(4, dtype=dt.float64, requires_grad=True),))


@pytest.mark.parity
def test_index_select_parity_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    idx, val = rng.integers(0, 5, size=(2, 9)), rng.standard_normal((9, 2))
    ts = torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(val), (5, 5, 2))
    ds = dt.sparse_coo_tensor(idx, dt.tensor(val), (5, 5, 2))
    for dim, at in ((0, [4, 0, 4, 2]), (1, [1, -2]), (2, [1, 0])):
        want = ts.index_select(dim, torch.tensor(at))
        got = ds.index_select(dim, dt.tensor(at))
        np.testing.assert_array_equal(got._indices().numpy(), want._indices().numpy())
        np.testing.assert_array_equal(got._values().numpy(), want._values().numpy())
        assert got.is_coalesced() == want.is_coalesced() and tuple(got.shape) == tuple(want.shape)


def test_top_level_functions_take_the_sparse_methods():
    s = _sp()
    dense = s.to_dense().numpy()
    assert dt.transpose(s, 0, 1).layout is dt.sparse_coo and dt.t(s).shape == (3, 2)
    np.testing.assert_array_equal(dt.t(s).to_dense().numpy(), dense.T)
    np.testing.assert_array_equal(dt.neg(s).to_dense().numpy(), -dense)
    np.testing.assert_array_equal(dt.abs(dt.neg(s)).to_dense().numpy(), dense)
    np.testing.assert_array_equal(dt.clone(s).to_dense().numpy(), dense)
    np.testing.assert_array_equal(dt.index_select(s, 1, dt.tensor([2])).to_dense().numpy(), dense[:, [2]])


@pytest.mark.parity
def test_select_narrow_unsqueeze_permute_parity_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    idx, val = rng.integers(0, 4, size=(2, 7)), rng.standard_normal((7, 2))
    ts = torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(val), (4, 4, 2))
    ds = dt.sparse_coo_tensor(idx, dt.tensor(val), (4, 4, 2))
    calls = [
        ("select", (0, 1)), ("select", (1, -1)), ("select", (2, 0)), ("narrow_copy", (1, 1, 2)),
        ("narrow_copy", (2, 0, 1)), ("unsqueeze", (0,)), ("unsqueeze", (2,)), ("unsqueeze", (-1,)),
        ("permute", (1, 0, 2)),
    ]  # fmt: skip
    for name, args in calls:
        for d, t in ((ds, ts), (ds.coalesce(), ts.coalesce())):
            got, want = getattr(d, name)(*args), getattr(t, name)(*args)
            np.testing.assert_array_equal(got._indices().numpy(), want._indices().numpy())
            np.testing.assert_array_equal(got._values().numpy(), want._values().numpy())
            assert tuple(got.shape) == tuple(want.shape) and got.is_coalesced() == want.is_coalesced(), name
    with pytest.raises(RuntimeError, match="transpositions between sparse and dense"):
        ds.permute(0, 2, 1)
    with pytest.raises(IndexError, match="select\\(\\): index 4 out of range"):
        ds.select(0, 4)


def test_select_narrow_unsqueeze_permute_gradients():
    def f(v):
        s = dt.sparse_coo_tensor([[0, 1, 1, 2], [2, 0, 2, 1]], v, (3, 3, 2))
        parts = (s.select(0, 1), s.narrow_copy(1, 1, 2), s.unsqueeze(1), s.permute(1, 0, 2), s.select(2, 1))
        return tuple(p.to_dense() for p in parts)

    assert gradcheck(f, (dt.rand(4, 2, dtype=dt.float64, requires_grad=True),))
