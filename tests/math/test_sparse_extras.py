"""torch.sparse extras: softmax/log_softmax over the specified elements of COO tensors,
sampled_addmm, spdiags, spsolve, mm with a reduction, Tensor.sparse_mask; values, gradients
(gradcheck and PyTorch parity) and errors."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

IDX = np.array([[0, 0, 1, 2, 2, 2], [0, 3, 1, 0, 2, 3]])
SHAPE = (3, 4)


def _coo(values):
    return dt.sparse_coo_tensor(IDX, values, SHAPE)


def _dense_masked_softmax(vals, dim, log=False):
    full = np.full(SHAPE, -np.inf)
    full[tuple(IDX)] = vals
    e = np.exp(full - full.max(dim, keepdims=True))
    p = e / e.sum(dim, keepdims=True)
    return (np.log(p) if log else p)[tuple(IDX)]


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_over_specified_elements(dim, log):
    vals = np.array([0.5, -1.0, 2.0, 0.3, 1.5, -0.2])
    fn = dt.sparse.log_softmax if log else dt.sparse.softmax
    out = fn(_coo(dt.tensor(vals)), dim)
    assert out.is_sparse and out.shape == SHAPE and out.is_coalesced()
    np.testing.assert_array_equal(out.indices().numpy(), IDX)
    np.testing.assert_allclose(out.values().numpy(), _dense_masked_softmax(vals, dim % 2, log), rtol=1e-12)
    v = dt.tensor(vals, requires_grad=True)
    assert gradcheck(lambda v: fn(_coo(v), dim).values(), (v,))


def test_softmax_hybrid_dtype_and_errors():
    h = dt.sparse_coo_tensor([[0, 2]], dt.tensor([[1.0, 2.0], [3.0, 0.0]], dtype=dt.float64), (3, 2))
    out = dt.sparse.softmax(h, 1)  # a dense dim: the dense softmax of each value row
    np.testing.assert_allclose(out.values().numpy()[0], np.exp([1, 2]) / np.exp([1, 2]).sum())
    out0 = dt.sparse.softmax(h, 0)  # the sparse dim: over the two specified rows
    np.testing.assert_allclose(out0.values().numpy()[:, 1], np.exp([2, 0]) / np.exp([2, 0]).sum())
    hv = dt.tensor([[1.0, 2.0], [3.0, 0.0]], dtype=dt.float64, requires_grad=True)
    for d in (0, 1):
        assert gradcheck(
            lambda v: dt.sparse.log_softmax(dt.sparse_coo_tensor([[0, 2]], v, (3, 2)), d).values(), (hv,)
        )
    s = dt.sparse.softmax(_coo(dt.ones(6)), 1, dtype=dt.float64)
    assert s.dtype == dt.float64
    with pytest.raises(NotImplementedError, match="\"softmax\" not implemented for 'Long'"):
        dt.sparse.softmax(_coo(dt.ones(6, dtype=dt.int64)), 1)
    with pytest.raises(NotImplementedError, match="expected a sparse COO tensor"):
        dt.sparse.softmax(dt.ones(2, 2), 1)
    with pytest.raises(NotImplementedError, match="compressed layout"):
        dt.sparse.softmax(dt.ones(2, 2).to_sparse_csr(), 1)


def test_sampled_addmm():
    a = dt.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], dtype=dt.float64)
    c = a.to_sparse_csr()
    m1, m2 = dt.randn(2, 4, dtype=dt.float64), dt.randn(4, 3, dtype=dt.float64)
    out = dt.sparse.sampled_addmm(c, m1, m2, beta=0.5, alpha=2.0)
    assert out.layout is dt.sparse_csr
    full = 0.5 * a.numpy() + 2.0 * (m1.numpy() @ m2.numpy())
    np.testing.assert_allclose(out.to_dense().numpy(), full * (a.numpy() != 0))
    v = dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64, requires_grad=True)
    m1.requires_grad_()
    m2.requires_grad_()

    def f(v, m1, m2):
        return dt.sparse.sampled_addmm(
            dt.sparse_csr_tensor([0, 2, 3], [0, 2, 1], v, (2, 3)), m1, m2, alpha=1.5
        ).values()

    assert gradcheck(f, (v, m1, m2))
    bc = dt.ones(2, 2, 3).to_sparse_csr()
    bo = dt.sparse.sampled_addmm(bc, dt.ones(2, 2, 4), dt.ones(2, 4, 3))
    np.testing.assert_array_equal(bo.values().numpy(), np.full((2, 6), 5.0))
    with pytest.raises(RuntimeError, match="Expected result to have sparse csr layout, but got SparseCsc"):
        dt.sparse.sampled_addmm(a.to_sparse_csc(), m1, m2)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x4 and 5x3\)"):
        dt.sparse.sampled_addmm(c, m1, dt.ones(5, 3, dtype=dt.float64))
    with pytest.raises(RuntimeError, match=r"self.shape\[-2\] must match mat1.shape\[-2\]"):
        dt.sparse.sampled_addmm(c, dt.ones(3, 4, dtype=dt.float64), m2)
    with pytest.raises(RuntimeError, match="same batch size"):
        dt.sparse.sampled_addmm(bc, dt.ones(2, 4), dt.ones(4, 3))
    with pytest.raises(RuntimeError, match="same dtype, but got Float and Double"):
        dt.sparse.sampled_addmm(c, dt.ones(2, 4), m2)


def test_spdiags():
    diags = dt.arange(1.0, 10.0, dtype=dt.float64).reshape(3, 3)
    off = dt.tensor([0, 1, -1])
    s = dt.sparse.spdiags(diags, off, (3, 3))
    assert s.layout is dt.sparse_coo
    np.testing.assert_array_equal(s._indices().numpy(), [[0, 1, 2, 0, 1, 1, 2], [0, 1, 2, 1, 2, 0, 1]])
    np.testing.assert_array_equal(s._values().numpy(), [1, 2, 3, 5, 6, 7, 8])
    expected = np.array([[1, 5, 0], [7, 2, 6], [0, 8, 3]])
    np.testing.assert_array_equal(s.to_dense().numpy(), expected)
    r = dt.sparse.spdiags(diags, off, (3, 4), layout=dt.sparse_csr)
    assert r.layout is dt.sparse_csr
    np.testing.assert_array_equal(r.crow_indices().numpy(), [0, 2, 5, 7])
    np.testing.assert_array_equal(r.values().numpy(), [1, 5, 7, 2, 6, 8, 3])
    k = dt.sparse.spdiags(diags, off, (2, 2), layout=dt.sparse_csc)
    np.testing.assert_array_equal(k.values().numpy(), [1, 7, 5, 2])
    one = dt.sparse.spdiags(dt.tensor([1.0, 2.0, 3.0]), dt.tensor(0), (3, 3))
    np.testing.assert_array_equal(one.to_dense().numpy(), np.diag([1.0, 2.0, 3.0]))
    diags.requires_grad_()
    assert gradcheck(lambda d: dt.sparse.spdiags(d, off, (3, 4)).to_dense(), (diags,))
    assert gradcheck(lambda d: dt.sparse.spdiags(d, off, (3, 4), layout=dt.sparse_csr).values(), (diags,))
    for args, msg in [
        ((diags, off, (3,)), "Output shape must be 2d"),
        ((dt.ones(2, 2, 2), dt.tensor([0, 1]), (3, 3)), "Diagonals must be vector or matrix"),
        ((diags, dt.tensor([[0, 1, 2]]), (3, 3)), "Offsets must be scalar or vector"),
        ((diags, dt.tensor([0, 0, -1]), (3, 3)), "Offset tensor contains duplicate values"),
        (
            (diags, dt.tensor([0, 1]), (3, 3)),
            r"Number of diagonals \(3\) does not match the number of offsets \(2\)",
        ),
        ((diags, dt.tensor([0.0, 1.0, 2.0]), (3, 3)), "Offset Tensor must have dtype Long but got Float"),
    ]:
        with pytest.raises(RuntimeError, match=msg):
            dt.sparse.spdiags(*args)
    with pytest.raises(
        RuntimeError,
        match=r"Only output layouts \(Sparse, SparseCsc, SparseCsr\) are supported, got SparseBsr",
    ):
        dt.sparse.spdiags(diags, off, (3, 3), layout=dt.sparse_bsr)


def test_spsolve_answers_as_the_cpu_build():
    a = dt.tensor([[4.0, 1.0], [1.0, 3.0]]).to_sparse_csr()
    with pytest.raises(
        NotImplementedError, match="'aten::_spsolve' with arguments from the 'SparseCsrCPU' backend"
    ):
        dt.sparse.spsolve(a, dt.ones(2))


def test_mm_reduce():
    a = dt.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]], dtype=dt.float64)
    c = a.to_sparse_csr()
    d = dt.arange(6.0, dtype=dt.float64).reshape(3, 2)
    np.testing.assert_allclose(dt.sparse.mm(c, d, "mean").numpy(), [[4, 5.5], [12, 15], [0, 0]])
    np.testing.assert_allclose(dt.sparse.mm(c, d, "amax").numpy(), [[8, 10], [12, 15], [0, 0]])
    np.testing.assert_allclose(dt.sparse.mm(c, d, "amin").numpy(), [[0, 1], [12, 15], [0, 0]])
    v = dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64, requires_grad=True)
    e = dt.randn(3, 2, dtype=dt.float64, requires_grad=True)
    for red in ("mean", "amax", "amin"):
        assert gradcheck(
            lambda v, e: dt.sparse.mm(dt.sparse_csr_tensor([0, 2, 3, 3], [0, 2, 2], v, (3, 3)), e, red),
            (v, e),
        )
    with pytest.raises(RuntimeError, match="reduce type of prod has not been enabled"):
        dt.sparse.mm(c, d, "prod")
    with pytest.raises(NotImplementedError, match="sparse CSR mat1 only"):
        dt.sparse.mm(a.to_sparse(), d, "mean")


@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr"])
def test_sparse_mask(layout):
    x = dt.randn(4, 4, dtype=dt.float64)
    pattern = dt.tensor(np.eye(4) + np.eye(4, k=1))
    kw = {"blocksize": (2, 2)} if layout == "sparse_bsr" else {}
    mask = pattern.to_sparse(layout=getattr(dt, layout), **kw)
    out = x.sparse_mask(mask)
    assert out.layout is mask.layout
    keep = (
        mask.to_dense().numpy() != 0
        if layout != "sparse_bsr"
        else np.kron(np.eye(2) + np.eye(2, k=1), np.ones((2, 2))) != 0
    )
    np.testing.assert_allclose(out.to_dense().numpy(), np.where(keep, x.numpy(), 0))
    xg = x.clone().requires_grad_()
    assert gradcheck(lambda x: x.sparse_mask(mask).to_dense(), (xg,))
    sparse_self = (x * 2).to_sparse()
    np.testing.assert_allclose(
        sparse_self.sparse_mask(mask).to_dense().numpy(), np.where(keep, 2 * x.numpy(), 0)
    )
    with pytest.raises(
        RuntimeError,
        match=r"operands have incompatible sizes; self has size \[3\] but mask has size \[4, 4\]",
    ):
        dt.ones(3).sparse_mask(mask)


@pytest.mark.parity
def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    vals = rng.standard_normal(6)
    g = rng.standard_normal(6)
    for fn in ("softmax", "log_softmax"):
        for dim in (0, 1):
            tv = torch.tensor(vals, requires_grad=True)
            dv = dt.tensor(vals, requires_grad=True)
            to = getattr(torch.sparse, fn)(torch.sparse_coo_tensor(torch.from_numpy(IDX), tv, SHAPE), dim)
            do = getattr(dt.sparse, fn)(_coo(dv), dim)
            np.testing.assert_allclose(
                do.values().detach().numpy(), to.coalesce().values().detach().numpy(), rtol=1e-12
            )
            (to.coalesce().values() * torch.from_numpy(g)).sum().backward()
            (do.values() * dt.tensor(g)).sum().backward()
            np.testing.assert_allclose(dv.grad.numpy(), tv.grad.numpy(), rtol=1e-10, atol=1e-12)
    a = rng.standard_normal((3, 4)) * (rng.random((3, 4)) < 0.5)
    a[0, 0] = 1.0
    m1, m2 = rng.standard_normal((3, 5)), rng.standard_normal((5, 4))
    tc = torch.from_numpy(a).to_sparse_csr()
    dc = dt.tensor(a).to_sparse_csr()
    tvals = tc.values().detach().requires_grad_()
    dvals = dc.values().detach().requires_grad_()
    tm = [torch.tensor(m, requires_grad=True) for m in (m1, m2)]
    dm = [dt.tensor(m, requires_grad=True) for m in (m1, m2)]
    to = torch.sparse.sampled_addmm(
        torch.sparse_csr_tensor(tc.crow_indices(), tc.col_indices(), tvals, (3, 4)), *tm, beta=0.3, alpha=1.7
    )
    do = dt.sparse.sampled_addmm(
        dt.sparse_csr_tensor(dc.crow_indices(), dc.col_indices(), dvals, (3, 4)), *dm, beta=0.3, alpha=1.7
    )
    np.testing.assert_allclose(do.values().detach().numpy(), to.values().detach().numpy(), rtol=1e-12)
    to.values().pow(2).sum().backward()
    do.values().pow(2).sum().backward()
    for ours, theirs in zip([dvals] + dm, [tvals] + tm):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10)
    diags, off = rng.standard_normal((3, 5)), np.array([0, 2, -1])
    for layout in ("sparse_coo", "sparse_csr", "sparse_csc"):
        ts = torch.sparse.spdiags(
            torch.from_numpy(diags), torch.from_numpy(off), (4, 5), layout=getattr(torch, layout)
        )
        ds = dt.sparse.spdiags(dt.tensor(diags), dt.tensor(off), (4, 5), layout=getattr(dt, layout))
        np.testing.assert_allclose(ds.to_dense().numpy(), ts.to_dense().numpy())
    for red in ("sum", "mean", "amax", "amin"):
        tv = tc.values().detach().requires_grad_()
        dv = dc.values().detach().requires_grad_()
        td, dd = torch.tensor(m2.T.copy(), requires_grad=True), dt.tensor(m2.T.copy(), requires_grad=True)
        to = torch.sparse.mm(
            torch.sparse_csr_tensor(tc.crow_indices(), tc.col_indices(), tv, (3, 4)), td, red
        )
        do = dt.sparse.mm(dt.sparse_csr_tensor(dc.crow_indices(), dc.col_indices(), dv, (3, 4)), dd, red)
        np.testing.assert_allclose(do.detach().numpy(), to.detach().numpy(), rtol=1e-12)
        to.pow(2).sum().backward()
        do.pow(2).sum().backward()
        np.testing.assert_allclose(dd.grad.numpy(), td.grad.numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dv.grad.numpy(), tv.grad.numpy(), rtol=1e-10, atol=1e-12)
    x = rng.standard_normal((3, 4))
    for mask in (tc, tc.to_sparse_coo()):
        dmask = dc if mask.layout is torch.sparse_csr else dc.to_sparse_coo()
        np.testing.assert_allclose(
            dt.tensor(x).sparse_mask(dmask).to_dense().numpy(),
            torch.from_numpy(x).sparse_mask(mask).to_dense().numpy(),
        )


@pytest.mark.parity
@pytest.mark.parametrize("layout", ["sparse_coo", "sparse_csr"])
def test_linear_on_a_sparse_input(layout):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((5, 3)) * (rng.random((5, 3)) < 0.5)
    w, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    dw, db = dt.tensor(w, requires_grad=True), dt.tensor(b, requires_grad=True)
    to = torch.nn.functional.linear(torch.from_numpy(a).to_sparse(layout=getattr(torch, layout)), tw, tb)
    do = dt.nn.functional.linear(dt.tensor(a).to_sparse(layout=getattr(dt, layout)), dw, db)
    np.testing.assert_allclose(do.detach().numpy(), to.detach().numpy(), rtol=1e-12)
    to.pow(2).sum().backward()
    do.pow(2).sum().backward()
    np.testing.assert_allclose(dw.grad.numpy(), tw.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(db.grad.numpy(), tb.grad.numpy(), rtol=1e-10)


def test_second_order_gradients():
    from disttorch.autograd import gradgradcheck

    v = dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64, requires_grad=True)
    d = dt.randn(3, 2, dtype=dt.float64, requires_grad=True)
    idx = [[0, 0, 1], [0, 2, 2]]
    assert gradgradcheck(lambda v, d: dt.sparse_csr_tensor([0, 2, 3], [0, 2, 2], v, (2, 3)) @ d, (v, d))
    assert gradgradcheck(lambda v: dt.sparse.softmax(dt.sparse_coo_tensor(idx, v, (2, 3)), 1).values(), (v,))
    assert gradgradcheck(
        lambda v: dt.sparse.log_softmax(dt.sparse_coo_tensor(idx, v, (2, 3)), 1).values(), (v,)
    )
    m1 = dt.randn(2, 4, dtype=dt.float64, requires_grad=True)
    m2 = dt.randn(4, 3, dtype=dt.float64, requires_grad=True)
    pattern = dt.ones(2, 3, dtype=dt.float64).to_sparse_csr()
    assert gradgradcheck(lambda m1, m2: dt.sparse.sampled_addmm(pattern, m1, m2).values(), (m1, m2))
