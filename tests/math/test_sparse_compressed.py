"""Sparse compressed layouts (CSR, CSC, BSR, BSC): construction and PyTorch's invariant
errors, conversions between all layouts, batched and hybrid tensors, repr, products with
gradients to the dense operand and the values (gradcheck), and parity with PyTorch."""

import copy
import inspect
import pickle

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

A = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 3.0, 0.0], [4.0, 5.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
LAYOUTS = ["sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"]


def _convert(x, name, blocksize=(2, 2)):
    lay = getattr(dt, name)
    return x.to_sparse(layout=lay, blocksize=blocksize if name in ("sparse_bsr", "sparse_bsc") else None)


def test_layouts_and_attributes():
    assert repr(dt.sparse_csr) == "disttorch.sparse_csr" and dt.sparse_bsc is not dt.sparse_bsr
    x = dt.tensor(A, dtype=dt.float32)
    c = x.to_sparse_csr()
    assert c.layout is dt.sparse_csr and c.is_sparse_csr and not c.is_sparse and not x.is_sparse_csr
    assert c.shape == (4, 4) and c.dim() == 2 and c._nnz() == 5 and c.dtype == dt.float32
    assert c.sparse_dim() == 2 and c.dense_dim() == 0 and c.device == dt.device("cpu")
    np.testing.assert_array_equal(c.crow_indices().numpy(), [0, 2, 3, 5, 5])
    np.testing.assert_array_equal(c.col_indices().numpy(), [0, 2, 2, 0, 1])
    np.testing.assert_array_equal(c.values().numpy(), [1, 2, 3, 4, 5])
    s = x.to_sparse_csc()
    assert s.layout is dt.sparse_csc and not s.is_sparse_csr
    np.testing.assert_array_equal(s.ccol_indices().numpy(), [0, 2, 3, 5, 5])
    np.testing.assert_array_equal(s.row_indices().numpy(), [0, 2, 2, 0, 1])
    np.testing.assert_array_equal(s.values().numpy(), [1, 4, 5, 2, 3])
    b = x.to_sparse_bsr((2, 2))
    assert b.values().shape == (3, 2, 2) and b._nnz() == 3
    np.testing.assert_array_equal(b.crow_indices().numpy(), [0, 2, 3])
    np.testing.assert_array_equal(b.col_indices().numpy(), [0, 1, 0])
    np.testing.assert_array_equal(b.values().numpy()[1], [[2, 0], [3, 0]])
    bc = x.to_sparse_bsc(2)
    np.testing.assert_array_equal(bc.ccol_indices().numpy(), [0, 2, 3])
    np.testing.assert_array_equal(bc.row_indices().numpy(), [0, 1, 0])
    with pytest.raises(
        RuntimeError, match="crow_indices expected sparse row compressed tensor layout but got SparseCsc"
    ):
        s.crow_indices()
    with pytest.raises(
        RuntimeError, match="row_indices expected sparse column compressed tensor layout but got SparseCsr"
    ):
        c.row_indices()
    with pytest.raises(
        RuntimeError, match="col_indices expected sparse row compressed tensor layout but got Strided"
    ):
        x.col_indices()
    with pytest.raises(
        RuntimeError, match="indices expected sparse coordinate tensor layout but got SparseCsr"
    ):
        c.indices()
    with pytest.raises(NotImplementedError, match="sparse_csr"):
        c.exp()


@pytest.mark.parametrize("name", LAYOUTS)
def test_round_trips_between_all_layouts(name):
    x = dt.tensor(A, dtype=dt.float64)
    s = _convert(x, name)
    np.testing.assert_array_equal(s.to_dense().numpy(), A)
    np.testing.assert_array_equal(s.to_sparse().to_dense().numpy(), A)
    coo = s.to_sparse_coo()
    assert coo.layout is dt.sparse_coo and coo._nnz() == (5 if name in ("sparse_csr", "sparse_csc") else 12)
    np.testing.assert_array_equal(coo.to_dense().numpy(), A)
    for other in LAYOUTS:
        if name in ("sparse_bsr", "sparse_bsc") and other in ("sparse_csr", "sparse_csc"):
            continue  # PyTorch refuses these (tested below)
        t = _convert(s, other)
        assert t.layout is getattr(dt, other)
        np.testing.assert_array_equal(t.to_dense().numpy(), A)
    np.testing.assert_array_equal(_convert(x.to_sparse(), name).to_dense().numpy(), A)
    assert s.to_sparse(layout=dt.strided).layout is dt.strided


def test_conversion_errors():
    x = dt.tensor(A)
    with pytest.raises(RuntimeError, match="without blocksize argument given is not supported"):
        x.to_sparse(layout=dt.sparse_bsr)
    with pytest.raises(
        RuntimeError, match=r"tensor sparse size \(4,4\) must be divisible by given blocksize \(3,2\)"
    ):
        x.to_sparse_bsr((3, 2))
    with pytest.raises(RuntimeError, match=r"dense_dim argument must be in \[0,0\] range, but 1 is given"):
        x.to_sparse_csr(dense_dim=1)
    with pytest.raises(RuntimeError, match="expected SparseCsr or SparseCsc layout but got SparseBsr"):
        x.to_sparse_bsr(2).to_sparse_csr()
    with pytest.raises(RuntimeError, match=r"blocksize changed from \[2, 2\] to \[1, 1\]"):
        x.to_sparse_bsr(2).to_sparse_bsc(1)
    with pytest.raises(RuntimeError, match="sparse_dim\\(\\)!=2 is not supported"):
        dt.ones(2, 2, 2).to_sparse().to_sparse_csr()
    with pytest.raises(RuntimeError, match="Expect the same number of specified elements per batch"):
        dt.tensor([[[1.0, 0.0]], [[1.0, 1.0]]]).to_sparse_csr()
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        dt.ones(3).to_sparse_csr()


def test_constructors_with_and_without_size():
    c = dt.sparse_csr_tensor([0, 2, 3], [0, 2, 2], [1.0, 2.0, 3.0])
    assert c.shape == (2, 3) and c.layout is dt.sparse_csr and c.dtype == dt.float32
    np.testing.assert_array_equal(c.to_dense().numpy(), [[1, 0, 2], [0, 0, 3]])
    c = dt.sparse_csr_tensor([0, 2, 3], [0, 2, 2], [1, 2, 3], (2, 5), dtype=dt.float64, check_invariants=True)
    assert c.shape == (2, 5) and c.dtype == dt.float64
    s = dt.sparse_csc_tensor([0, 2, 3], [0, 2, 2], [1.0, 2.0, 3.0])
    assert s.shape == (3, 2)
    np.testing.assert_array_equal(s.to_dense().numpy(), [[1, 0], [0, 0], [2, 3]])
    b = dt.sparse_bsr_tensor([0, 1, 2], [0, 1], dt.arange(8.0).reshape(2, 2, 2))
    assert b.shape == (4, 4)
    np.testing.assert_array_equal(b.to_dense().numpy()[2:, 2:], [[4, 5], [6, 7]])
    bc = dt.sparse_bsc_tensor([0, 1, 2], [0, 1], dt.arange(8.0).reshape(2, 2, 2), (4, 4))
    np.testing.assert_array_equal(bc.to_dense().numpy()[2:, 2:], [[4, 5], [6, 7]])
    g = dt.sparse_compressed_tensor([0, 2, 3], [0, 2, 2], [1.0, 2.0, 3.0], layout=dt.sparse_csc)
    assert g.layout is dt.sparse_csc and g.shape == (3, 2)
    i32 = dt.sparse_csr_tensor(dt.tensor([0, 1], dtype=dt.int32), dt.tensor([1], dtype=dt.int32), [5.0])
    assert i32.crow_indices().dtype == dt.int32
    leaf = dt.sparse_csr_tensor([0, 1], [0], [1.0], requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf and leaf.values().requires_grad
    v = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    nonleaf = dt.sparse_csr_tensor([0, 2, 3], [0, 2, 2], v * 2, (2, 3))
    assert nonleaf.requires_grad and not nonleaf.is_leaf and nonleaf.grad_fn is not None


def test_constructors_take_pytorchs_keyword_names():
    """PyG builds its adjacency with ``sparse_csr_tensor(crow_indices=..., col_indices=...,
    values=..., size=...)``."""
    c = dt.sparse_csr_tensor(
        crow_indices=dt.tensor([0, 1, 2]), col_indices=dt.tensor([1, 0]), values=[1.0, 2.0], size=(2, 2)
    )
    np.testing.assert_array_equal(c.to_dense().numpy(), [[0, 1], [2, 0]])
    s = dt.sparse_csc_tensor([0, 1, 2], row_indices=[1, 0], values=[1.0, 2.0], dtype=dt.float64)
    assert s.dtype == dt.float64 and s.to_dense().tolist() == [[0, 2], [1, 0]]
    blocks = dt.arange(8.0).reshape(2, 2, 2)
    assert dt.sparse_bsr_tensor(crow_indices=[0, 1, 2], col_indices=[0, 1], values=blocks).shape == (4, 4)
    assert dt.sparse_bsc_tensor(ccol_indices=[0, 1, 2], row_indices=[0, 1], values=blocks).shape == (4, 4)
    assert list(inspect.signature(dt.sparse_csr_tensor).parameters)[:3] == [
        "crow_indices",
        "col_indices",
        "values",
    ]
    with pytest.raises(
        TypeError, match=r"sparse_csr_tensor\(\): missing a required argument: 'crow_indices'"
    ):
        dt.sparse_csr_tensor(compressed_indices=[0], col_indices=[], values=[])


@pytest.mark.parametrize(
    "args, message",
    [
        (([0, 2, 3], [0, 2, 2], [1.0, 2.0, 3.0], (2, 2)), "`0 <= col_indices < ncols` is not satisfied."),
        (([1, 2, 3], [0, 2, 2], [1.0, 2.0, 3.0], (2, 3)), r"`crow_indices\[..., 0\] == 0` is not satisfied."),
        (
            ([0, 3, 2], [0, 2, 2], [1.0, 2.0, 3.0], (2, 3)),
            r"`crow_indices\[..., -1\] == nnz` is not satisfied.",
        ),
        (([0, 2, 3], [0, -1, 2], [1.0, 2.0, 3.0], (2, 3)), "`0 <= col_indices < ncols` is not satisfied."),
        (([0, 2, 3], [2, 0, 2], [1.0, 2.0, 3.0], (2, 3)), "are sorted and distinct along the last dimension"),
        (([0, 2, 3], [1, 1, 2], [1.0, 2.0, 3.0], (2, 3)), "are sorted and distinct along the last dimension"),
        (
            ([0, 4, 4], [0, 1, 2, 2], [1.0, 2.0, 3.0, 4.0], (2, 3)),
            r"`0 <= crow_indices\[..., 1:\] - crow_indices\[..., :-1\] <= ncols` is not satisfied.",
        ),
        (
            ([0, 2], [0, 2, 2], [1.0, 2.0, 3.0], (2, 3)),
            r"crow_indices.shape\[-1\] must be equal to the number of rows \+ 1 \(=3\), but got 2",
        ),
        (
            ([0, 2, 3], [0, 2, 2], [1.0, 2.0], (2, 3)),
            r"col_indices.shape\[-1\] must be equal to nnz \(=2\) as defined by values.shape\[0\], but got 3",
        ),
        (
            ([0, 2, 3], [0, 2, 2], [1.0, 2.0, 3.0], (3,)),
            r"tensor dimensionality must be sum of batch, base, and dense dimensionalities \(=0 \+ 2 \+ 0\) but got 1",
        ),
        (
            ([[0, 2, 3]], [0, 2, 2], [1.0, 2.0, 3.0]),
            "crow_indices and col_indices dimensionalities must be equal but got 2 and 1",
        ),
        (
            ([[0, 2, 3]], [[0, 2, 2]], [[1.0, 2.0, 3.0]], (2, 2, 3)),
            r"all batch dimensions of crow_indices \(=\[1\]\)",
        ),
        (
            ([0.0, 2.0, 3.0], [0, 2, 2], [1.0, 2.0, 3.0], (2, 3)),
            "crow_indices must be an int32 or int64 tensor, but got Double",
        ),
    ],
)
def test_invariant_errors_as_pytorch_words_them(args, message):
    with pytest.raises(RuntimeError, match=message):
        dt.sparse_csr_tensor(*args)


def test_more_constructor_errors():
    with pytest.raises(
        RuntimeError, match="crow_indices and col_indices must have the same dtype, bot got Int and Long"
    ):
        dt.sparse_csr_tensor(dt.tensor([0, 1], dtype=dt.int32), dt.tensor([0]), [1.0], (1, 1))
    with pytest.raises(RuntimeError, match="expected sparse compressed tensor layout but got none"):
        dt.sparse_compressed_tensor([0, 1], [0], [1.0], (1, 1))
    with pytest.raises(RuntimeError, match="expected sparse compressed tensor layout but got Strided"):
        dt.sparse_compressed_tensor([0, 1], [0], [1.0], (1, 1), layout=dt.strided)
    with pytest.raises(
        RuntimeError, match=r"tensor shape\[1\] \(=5\) must be divisible with blocksize\[1\] \(=2\)"
    ):
        dt.sparse_bsr_tensor([0, 1, 2], [0, 1], dt.ones(2, 2, 2), (4, 5))
    with pytest.raises(
        RuntimeError,
        match=r"values must have dimensionality > sum of batch and block dimensionalities \(=0 \+ 2\) but got 2",
    ):
        dt.sparse_bsr_tensor([0, 1, 2], [0, 1], dt.ones(2, 2), (4, 4))


def test_batched_and_hybrid():
    x = dt.arange(1.0, 17.0).reshape(2, 2, 4)
    c = x.to_sparse_csr()
    assert c.shape == (2, 2, 4) and c._nnz() == 8 and c.crow_indices().shape == (2, 3)
    assert c.values().shape == (2, 8) and c.dense_dim() == 0 and c.sparse_dim() == 2
    np.testing.assert_array_equal(c.to_dense().numpy(), x.numpy())
    coo = c.to_sparse_coo()
    assert coo.sparse_dim() == 3
    np.testing.assert_array_equal(coo.to_dense().numpy(), x.numpy())
    np.testing.assert_array_equal(c.to_sparse_csc().to_dense().numpy(), x.numpy())
    h = dt.ones(2, 3, 2).to_sparse_csr(dense_dim=1)
    assert h.values().shape == (6, 2) and h.dense_dim() == 1
    np.testing.assert_array_equal(h.to_dense().numpy(), np.ones((2, 3, 2)))
    hb = dt.ones(2, 4, 4, 3).to_sparse_bsr((2, 2), dense_dim=1)
    assert hb.values().shape == (2, 4, 2, 2, 3)
    np.testing.assert_array_equal(hb.to_dense().numpy(), np.ones((2, 4, 4, 3)))


def test_repr():
    c = dt.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]).to_sparse_csr()
    assert repr(c) == (
        "tensor(crow_indices=tensor([0, 2, 3]),\n"
        "       col_indices=tensor([0, 2, 2]),\n"
        "       values=tensor([1., 2., 3.]), size=(2, 3), nnz=3,\n"
        "       layout=disttorch.sparse_csr)"
    )
    b = dt.arange(1.0, 17.0).reshape(2, 2, 4).to_sparse_csr()
    assert repr(b).splitlines()[1] == "                            [0, 4, 8]]),"
    d = c.double().requires_grad_()
    assert "dtype=disttorch.float64" in repr(d) and repr(d).endswith("requires_grad=True)")
    assert "ccol_indices=" in repr(c.to_sparse_csc()) and "layout=disttorch.sparse_bsc" in repr(
        c.to_sparse_bsc(1)
    )


def test_transpose_arithmetic_sum_copy():
    x = dt.tensor(A)
    c = x.to_sparse_csr()
    t = c.t()
    assert t.layout is dt.sparse_csc
    np.testing.assert_array_equal(t.to_dense().numpy(), A.T)
    bt = x.to_sparse_bsr(2).t()
    assert bt.layout is dt.sparse_bsc
    np.testing.assert_array_equal(bt.to_dense().numpy(), A.T)
    np.testing.assert_array_equal((c * 2).to_dense().numpy(), 2 * A)
    np.testing.assert_array_equal((c / 2).values().numpy(), [0.5, 1, 1.5, 2, 2.5])
    np.testing.assert_array_equal((-c).to_dense().numpy(), -A)
    s = c + c
    assert s.layout is dt.sparse_csr
    np.testing.assert_array_equal(s.to_dense().numpy(), 2 * A)
    np.testing.assert_array_equal((c + dt.ones(4, 4)).numpy(), A + 1)
    assert c.sum().item() == 15.0
    np.testing.assert_array_equal(c.sum(0).numpy(), A.sum(0))
    assert c.to(dt.float64).dtype == dt.float64 and c.double().layout is dt.sparse_csr
    for k in (copy.deepcopy(c), pickle.loads(pickle.dumps(c)), c.clone(), c.detach()):
        assert k.layout is dt.sparse_csr
        np.testing.assert_array_equal(k.to_dense().numpy(), A)
    with pytest.raises(NotImplementedError, match="multiplication by a scalar"):
        c * dt.ones(4, 4)


@pytest.mark.parametrize("name", LAYOUTS)
def test_products_with_dense(name):
    x = dt.tensor(A, dtype=dt.float64)
    s = _convert(x, name)
    d = dt.randn(4, 3, dtype=dt.float64)
    v = dt.randn(4, dtype=dt.float64)
    ref = A @ d.numpy()
    for out in (s @ d, dt.mm(s, d), dt.matmul(s, d), s.mm(d), dt.sparse.mm(s, d)):
        assert out.layout is dt.strided
        np.testing.assert_allclose(out.numpy(), ref)
    np.testing.assert_allclose((s @ v).numpy(), A @ v.numpy())
    np.testing.assert_allclose(dt.mv(s, v).numpy(), A @ v.numpy())
    e = dt.randn(3, 4, dtype=dt.float64)
    np.testing.assert_allclose((e @ s).numpy(), e.numpy() @ A)
    np.testing.assert_allclose(dt.mm(e, s).numpy(), e.numpy() @ A)
    m = dt.randn(4, 3, dtype=dt.float64)
    np.testing.assert_allclose(dt.addmm(m, s, d, beta=0.5, alpha=2).numpy(), 0.5 * m.numpy() + 2 * ref)
    np.testing.assert_allclose(dt.sparse.addmm(m, s, d).numpy(), m.numpy() + ref)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        s @ dt.randn(3, 3, dtype=dt.float64)
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        s @ dt.randn(4, 3)


@pytest.mark.parametrize("name", LAYOUTS)
def test_gradcheck_products_and_conversions(name):
    # every element nonzero: a perturbation must not change the sparsity pattern
    d = dt.randn(4, 3, dtype=dt.float64, requires_grad=True)
    x = (dt.rand(4, 4, dtype=dt.float64) + 0.5).requires_grad_()
    assert gradcheck(lambda x, d: _convert(x, name) @ d, (x, d))
    assert gradcheck(lambda x, d: d.t() @ _convert(x, name), (x, d))
    assert gradcheck(lambda x: _convert(x, name).to_dense() * 3, (x,))
    assert gradcheck(
        lambda x: _convert(_convert(x, name), "sparse_bsc" if "b" in name[7:] else "sparse_csc").values(),
        (x,),
    )
    assert gradcheck(lambda x: _convert(x, name).to_sparse_coo().to_dense(), (x,))


def test_gradients_to_the_values():
    v = dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64, requires_grad=True)
    d = dt.randn(3, 2, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda v, d: dt.sparse_csr_tensor([0, 2, 3], [0, 2, 2], v, (2, 3)) @ d, (v, d))
    assert gradcheck(lambda v, d: dt.sparse_csc_tensor([0, 2, 3], [0, 2, 2], v, (3, 2)).t() @ d, (v, d))
    bv = dt.randn(2, 2, 2, dtype=dt.float64, requires_grad=True)
    e = dt.randn(4, 2, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda bv, e: dt.sparse_bsr_tensor([0, 1, 2], [0, 1], bv, (4, 4)) @ e, (bv, e))
    leaf = dt.sparse_csr_tensor([0, 2, 3], [0, 2, 2], [1.0, 2.0, 3.0], (2, 3), requires_grad=True)
    (leaf @ dt.ones(3, 2)).sum().backward()
    assert leaf.grad.layout is dt.sparse_csr
    np.testing.assert_array_equal(leaf.grad.values().numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parity
@pytest.mark.parametrize("name", LAYOUTS)
def test_parity_with_torch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 6, 4)) * (rng.random((2, 6, 4)) < 0.4)
    a[:, 0, 0] = 1.0  # at least one specified block in each batch
    kw = {"blocksize": (2, 2)} if name in ("sparse_bsr", "sparse_bsc") else {}
    for arr in (a[0], a):
        if arr.ndim == 3:
            # equal specified counts per batch: the same pattern in both
            arr = np.stack([arr[0], arr[0] * 2])
        ts = torch.from_numpy(arr).to_sparse(layout=getattr(torch, name), **kw)
        ds = dt.tensor(arr).to_sparse(layout=getattr(dt, name), **kw)
        for ours, theirs in zip(_index_pair(ds, name), _index_pair(ts, name)):
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        np.testing.assert_allclose(ds.values().numpy(), ts.values().numpy())
        coo_t = ts.to_sparse_coo().coalesce()
        coo_d = ds.to_sparse_coo().coalesce()
        np.testing.assert_array_equal(coo_d.indices().numpy(), coo_t.indices().numpy())
    dense = rng.standard_normal((4, 3))
    tv = (
        torch.from_numpy(a[0]).to_sparse(layout=getattr(torch, name), **kw).values().detach().requires_grad_()
    )
    dv = dt.tensor(a[0]).to_sparse(layout=getattr(dt, name), **kw).values().detach().requires_grad_()
    if name == "sparse_bsc":
        return  # PyTorch's CPU build has no BSC @ dense
    t_idx = _index_pair(torch.from_numpy(a[0]).to_sparse(layout=getattr(torch, name), **kw), name)
    d_idx = _index_pair(dt.tensor(a[0]).to_sparse(layout=getattr(dt, name), **kw), name)
    ts = torch.sparse_compressed_tensor(*t_idx, tv, (6, 4), layout=getattr(torch, name))
    ds = dt.sparse_compressed_tensor(*d_idx, dv, (6, 4), layout=getattr(dt, name))
    td, dd = torch.from_numpy(dense).requires_grad_(), dt.tensor(dense, requires_grad=True)
    np.testing.assert_allclose((ds @ dd).detach().numpy(), (ts @ td).detach().numpy(), rtol=1e-10)
    if name == "sparse_bsr":
        return  # PyTorch's CPU build cannot differentiate BSR @ dense (its backward needs BSC @ dense)
    (ts @ td).pow(2).sum().backward()
    (ds @ dd).pow(2).sum().backward()
    np.testing.assert_allclose(dv.grad.numpy(), tv.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(dd.grad.numpy(), td.grad.numpy(), rtol=1e-10)


def _index_pair(s, name):
    if name in ("sparse_csr", "sparse_bsr"):
        return s.crow_indices(), s.col_indices()
    return s.ccol_indices(), s.row_indices()


def test_empty_tensors():
    e = dt.sparse_csr_tensor([0, 0, 0], [], [], (2, 3))
    assert e._nnz() == 0 and e.shape == (2, 3)
    assert "col_indices=tensor([], size=(0,))" in repr(e)
    np.testing.assert_array_equal(e.to_dense().numpy(), np.zeros((2, 3)))
    z = dt.zeros(2, 3).to_sparse_csr()
    np.testing.assert_array_equal(z.crow_indices().numpy(), [0, 0, 0])
    np.testing.assert_array_equal((z @ dt.ones(3, 2)).numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal((dt.ones(2, 2) @ z).numpy(), np.zeros((2, 3)))
    assert z.to_sparse_csc()._nnz() == 0 and z.to_sparse_coo()._nnz() == 0
    assert dt.zeros(2, 3).to_sparse_bsc(1).values().shape == (0, 1, 1)
    assert dt.zeros(0, 3).to_sparse_csr().to_dense().shape == (0, 3)
    assert dt.ones(2, 3).sparse_mask(z)._nnz() == 0


def test_transpose_batched():
    a = dt.arange(1.0, 13.0).reshape(2, 2, 3)
    c = a.to_sparse_csr()
    for t in (c.transpose(-2, -1), c.transpose(2, 1), c.mT):
        assert t.layout is dt.sparse_csc and t.shape == (2, 3, 2)
        np.testing.assert_array_equal(t.to_dense().numpy(), a.numpy().transpose(0, 2, 1))
    b = a.to_sparse_bsr(1).transpose(1, 2)
    assert b.layout is dt.sparse_bsc
    np.testing.assert_array_equal(b.to_dense().numpy(), a.numpy().transpose(0, 2, 1))
    with pytest.raises(
        RuntimeError, match=r"same type \(Batch, Sparse, Dense\), got 0\(Batch\) and 1\(Sparse\)"
    ):
        c.transpose(0, 1)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"):
        c.t()


@pytest.mark.parametrize("name", ["sparse_coo"] + LAYOUTS)
def test_zero_preserving_elementwise_methods(name):
    a = np.array([[0.5, 0.0, -2.0, 0.0], [0.0, 0.0, 3.7, 0.0], [1.2, -0.4, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    x = dt.tensor(a)
    s = x.to_sparse() if name == "sparse_coo" else _convert(x, name)
    for fn in ("abs", "neg", "sin", "tanh", "relu", "sign", "floor", "expm1", "square", "isnan", "trunc"):
        out = getattr(s, fn)()
        assert out.layout is s.layout, fn
        np.testing.assert_allclose(out.to_dense().numpy(), getattr(x, fn)().numpy(), err_msg=fn)
    np.testing.assert_allclose(s.round(decimals=0).to_dense().numpy(), np.round(a))
    v = dt.tensor(a, requires_grad=True)
    specified = a != 0
    if name in ("sparse_bsr", "sparse_bsc"):  # whole 2x2 blocks are specified
        specified = np.kron(specified.reshape(2, 2, 2, 2).any((1, 3)), np.ones((2, 2))) != 0
    s2 = v.to_sparse() if name == "sparse_coo" else _convert(v, name)
    s2.sin().to_dense().sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), np.cos(a) * specified)


@pytest.mark.parity
def test_zero_preserving_methods_match_torch():
    torch = pytest.importorskip("torch")
    a = np.array([[0.5, 0.0, -2.0], [0.0, 0.0, 3.7]])
    for lay in ("sparse_coo", "sparse_csr"):
        ts = torch.from_numpy(a).to_sparse(layout=getattr(torch, lay))
        ds = dt.tensor(a).to_sparse(layout=getattr(dt, lay))
        for fn in ("asinh", "atan", "erf", "log1p", "rad2deg", "frac", "signbit"):
            np.testing.assert_allclose(
                getattr(ds, fn)().to_dense().numpy(), getattr(ts, fn)().to_dense().numpy()
            )


def test_batch_selection():
    a = dt.arange(1.0, 25.0).reshape(2, 2, 2, 3)
    c = a.to_sparse_csr()
    assert c[1].shape == (2, 2, 3) and c[1, 0].shape == (2, 3) and len(c) == 2
    np.testing.assert_array_equal(c[1, 0].to_dense().numpy(), a.numpy()[1, 0])
    np.testing.assert_array_equal(c.select(1, -1).to_dense().numpy(), a.numpy()[:, 1])
    parts = c.unbind(0)
    assert len(parts) == 2 and parts[0].layout is dt.sparse_csr
    np.testing.assert_array_equal(parts[1].to_dense().numpy(), a.numpy()[1])
    with pytest.raises(RuntimeError, match="batch dimensions only"):
        c[0, 0, 1]
    with pytest.raises(RuntimeError, match="integers over its batch dimensions only"):
        c[:, 0]
    with pytest.raises(IndexError, match="out of range"):
        c.select(0, 2)
    v = dt.arange(1.0, 13.0, dtype=dt.float64).reshape(2, 6).requires_grad_()
    crow, col = c[0, 0].crow_indices(), c[0, 0].col_indices()
    assert gradcheck(
        lambda v: dt.sparse_csr_tensor(dt.stack([crow, crow]), dt.stack([col, col]), v, (2, 2, 3))[
            1
        ].to_dense(),
        (v,),
    )
