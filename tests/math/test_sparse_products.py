"""``hspmm``, ``smm`` and ``sspaddmm``: a sparse COO matrix times a dense one with a sparse
result (the product's rows where the sparse matrix has entries), PyTorch's indices, values
and errors; gradients reach the sparse values and the dense matrix (float64 gradcheck)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

IDX = [[2, 0, 2], [0, 1, 0]]  # (2, 0) repeats: not coalesced
DENSE = np.arange(6.0).reshape(3, 2)
pytestmark = pytest.mark.filterwarnings("ignore:Sparse invariant checks")  # (PyTorch's, and ours)


def _sp(L, values=(1.0, 2.0, 3.0), shape=(3, 3)):
    return L.sparse_coo_tensor(L.tensor(IDX), L.tensor(list(values), dtype=L.float64), shape)


def _parts(s):
    return s._indices().tolist(), s._values().tolist(), list(s.shape)


def test_hspmm_is_a_hybrid_tensor_of_the_product_rows():
    h = dt.hspmm(_sp(dt), dt.tensor(DENSE))
    assert (h.sparse_dim(), h.dense_dim()) == (1, 1)
    assert _parts(h) == ([[0, 2]], [[4.0, 6.0], [0.0, 4.0]], [3, 2])


def test_smm_and_sspaddmm_entries():
    m = dt.smm(_sp(dt), dt.tensor(DENSE))
    assert _parts(m) == ([[0, 0, 2, 2], [0, 1, 0, 1]], [4.0, 6.0, 0.0, 4.0], [3, 2])
    s = _sp(dt)
    out = s.sspaddmm(s, dt.eye(3, dtype=dt.float64), beta=2, alpha=3)
    assert out._indices()[:, :3].tolist() == IDX and out._values()[:3].tolist() == [2.0, 4.0, 6.0]
    np.testing.assert_allclose(out.to_dense().numpy(), 5 * s.to_dense().numpy())


@pytest.mark.parity
def test_match_pytorch(torch):
    for L in (dt, torch):
        s, d = _sp(L), L.tensor(DENSE)
        got = [
            _parts(L.hspmm(s, d)),
            _parts(L.smm(s, d)),
            _parts(L.sspaddmm(s, s, L.eye(3, dtype=L.float64))),
        ]
        if L is dt:
            mine = got
    assert mine == got


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: dt.hspmm(dt.ones(3, 3), dt.ones(3, 2)), NotImplementedError, "aten::hspmm"),
        (
            lambda: dt.hspmm(_sp(dt), dt.ones(2, 2, dtype=dt.float64)),
            RuntimeError,
            "Expected dim 0 size 3, got 2",
        ),
        (
            lambda: dt.hspmm(_sp(dt), dt.ones(3, 2)),
            RuntimeError,
            "expected scalar type Double but found Float",
        ),
        (lambda: dt.smm(dt.ones(3, 3), dt.ones(3, 2)), RuntimeError, "can only be called on sparse tensors"),
        (
            lambda: dt.sspaddmm(_sp(dt), _sp(dt), dt.ones(3, 2, dtype=dt.float64)),
            RuntimeError,
            "Expected dim 1 size 2, got 3",
        ),
        (
            lambda: dt.hspmm(dt.ones(3, 3).to_sparse(1), dt.ones(3, 2)),
            RuntimeError,
            "matrices expected, got 1D",
        ),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_gradients_reach_values_and_dense():
    def sparse(v, shape=(3, 3)):
        return dt.sparse_coo_tensor(dt.tensor(IDX), v, shape)

    calls = [
        lambda v, d: dt.hspmm(sparse(v), d).to_dense(),
        lambda v, d: dt.smm(sparse(v), d).to_dense(),
        lambda v, d: dt.sspaddmm(sparse(v, (3, 2)), sparse(v), d, beta=2, alpha=3).to_dense(),
    ]
    v = dt.tensor([1.0, 2.0, 3.0], dtype=dt.float64, requires_grad=True)
    d = dt.tensor(DENSE, requires_grad=True)
    for call in calls:
        assert gradcheck(call, (v, d))
