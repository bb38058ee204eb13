"""``nn.Embedding``/``EmbeddingBag`` with ``sparse=True`` (a sparse COO weight gradient, for
SGD/SparseAdam and gradient clipping) and ``scale_grad_by_freq=True``."""

import numpy as np
import pytest

import disttorch
from disttorch import nn

IDX = [[1, 2, 1], [0, 4, 1]]


def _table(cls=nn.Embedding, **kw):
    disttorch.manual_seed(0)
    return cls(5, 3, **kw)


def test_sparse_gradient_is_coo_with_one_row_per_lookup():
    e = _table(sparse=True, padding_idx=0)
    (e(disttorch.tensor(IDX)) * disttorch.arange(3.0)).sum().backward()
    g = e.weight.grad
    assert g.is_sparse and g.layout == disttorch.sparse_coo and not g.is_coalesced()
    assert g._nnz() == 5  # padding_idx 0 left out, repeated indices kept
    expected = np.zeros((5, 3), np.float32)
    expected[[1, 2, 4]] = [[0, 3, 6], [0, 1, 2], [0, 1, 2]]
    np.testing.assert_allclose(g.to_dense().numpy(), expected)


def test_sparse_gradients_accumulate():
    e = _table(sparse=True)
    x = disttorch.tensor(IDX)
    e(x).sum().backward()
    e(x).sum().backward()
    assert e.weight.grad.is_sparse
    counts = np.bincount(np.ravel(IDX), minlength=5)[:, None]
    np.testing.assert_allclose(e.weight.grad.to_dense().numpy(), 2 * np.broadcast_to(counts, (5, 3)))


def test_scale_grad_by_freq_divides_by_count():
    e = _table(scale_grad_by_freq=True)
    e(disttorch.tensor(IDX)).sum().backward()
    np.testing.assert_allclose(e.weight.grad.numpy(), [[1] * 3, [1] * 3, [1] * 3, [0] * 3, [1] * 3])


def test_sgd_and_sparse_adam_step_on_sparse_gradient():
    dense, sparse = _table(), _table(sparse=True)
    x = disttorch.tensor(IDX)
    for opt_cls in (disttorch.optim.SGD, disttorch.optim.SparseAdam):
        outs = []
        for e in (dense, sparse):
            opt = opt_cls(e.parameters(), lr=0.1)
            opt.zero_grad()
            (e(x) ** 2).sum().backward()
            opt.step()
            outs.append(e.weight.detach().numpy().copy())
        np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


def test_clip_grad_norm_and_value_on_sparse_gradient():
    e = _table(sparse=True)
    e(disttorch.tensor(IDX)).sum().backward()
    total = nn.utils.clip_grad_norm_(e.parameters(), 1.0)
    counts = np.bincount(np.ravel(IDX), minlength=5)
    assert float(total) == pytest.approx(np.sqrt(3 * (counts**2).sum()), rel=1e-6)
    assert np.linalg.norm(e.weight.grad.to_dense().numpy()) == pytest.approx(1.0, rel=1e-4)
    nn.utils.clip_grad_value_(e.parameters(), 0.01)
    assert np.abs(e.weight.grad._values().numpy()).max() <= 0.01 + 1e-7


def test_embedding_bag_sparse_and_scale():
    for mode in ("sum", "mean", "max"):
        dense, sparse = _table(nn.EmbeddingBag, mode=mode), _table(nn.EmbeddingBag, mode=mode, sparse=True)
        for e in (dense, sparse):
            e(disttorch.tensor(IDX)).sum().backward()
        assert sparse.weight.grad.is_sparse
        np.testing.assert_allclose(sparse.weight.grad.to_dense().numpy(), dense.weight.grad.numpy())
    with pytest.raises(ValueError, match="scale_grad_by_freq"):
        nn.functional.embedding_bag(
            disttorch.tensor(IDX), disttorch.ones(5, 3), mode="max", scale_grad_by_freq=True
        )


@pytest.mark.parity
def test_matches_torch():
    torch = pytest.importorskip("torch")
    w0 = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    idx = np.array([[1, 2, 1, 5], [0, 4, 1, 1]])
    results = []
    for lib in (disttorch, torch):
        e = lib.nn.Embedding(6, 4, sparse=True, padding_idx=0)
        f = lib.nn.Embedding(6, 4, scale_grad_by_freq=True)
        with lib.no_grad():
            e.weight.copy_(lib.tensor(w0))
            f.weight.copy_(lib.tensor(w0))
        opt = lib.optim.SparseAdam(e.parameters(), lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            (e(lib.tensor(idx)) ** 2).sum().backward()
            opt.step()
        (f(lib.tensor(idx)) ** 2).sum().backward()
        results.append((e.weight.detach().numpy(), f.weight.grad.numpy()))
    for ours, theirs in zip(results[0], results[1]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def _index_dtype_errors(lib):
    out = []
    for dtype in (lib.float32, lib.bool, lib.int16, lib.uint8, lib.bfloat16):
        try:
            lib.nn.functional.embedding(lib.zeros(2, dtype=dtype), lib.ones(3, 2))
        except RuntimeError as e:
            out.append(str(e))
    out.append(tuple(lib.nn.functional.embedding(lib.zeros(2, dtype=lib.int32), lib.ones(3, 2)).shape))
    return out


def test_embedding_indices_must_be_long_or_int():
    """ImageGPT fed float pixels to its embedding: PyTorch names the type (legacy names)."""
    out = _index_dtype_errors(disttorch)
    assert len(out) == 6 and "torch.FloatTensor" in out[0] and "CPUBoolType" in out[1]
    assert "torch.ByteTensor" in out[3] and out[5] == (2, 2)


@pytest.mark.parity
def test_embedding_index_errors_match_pytorch(torch):
    ours = [
        s.replace("disttorch.", "torch.") if isinstance(s, str) else s for s in _index_dtype_errors(disttorch)
    ]
    assert ours == _index_dtype_errors(torch)
