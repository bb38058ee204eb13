"""DistributedDataParallel with sparse gradients (``nn.Embedding(sparse=True)``) and
``dist.all_reduce`` of sparse COO tensors, on real processes.

Every rank's parameters after a few steps must equal a single-process run on the
concatenated batch (float64): sparse gradients are averaged across ranks like dense ones.
"""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import RanksFailed, run_ranks

VOCAB, DIM, BATCH, STEPS = 20, 4, 6, 3


def _model(bag: bool = False):
    import disttorch as torch
    import disttorch.nn as nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = (
                nn.EmbeddingBag(VOCAB, DIM, mode="sum", sparse=True)
                if bag
                else nn.Embedding(VOCAB, DIM, sparse=True)
            )
            self.head = nn.Linear(DIM, 1)
            self.spare = nn.Embedding(VOCAB, DIM, sparse=True)  # used only when asked

        def forward(self, ids, use_spare: bool = False):
            h = self.emb(ids)
            if not bag:
                h = h.mean(1)
            if use_spare:
                h = h + self.spare(ids).mean(1)
            return self.head(h).squeeze(-1)

    torch.manual_seed(0)
    return Net().double()


def _data(world: int):
    rng = np.random.default_rng(1)
    # rank r's ids are drawn from overlapping ranges, so rows collide across ranks
    ids = rng.integers(0, VOCAB // 2, size=(STEPS, world, BATCH, 3))
    ids[:, 1:] += VOCAB // 4
    y = rng.standard_normal((STEPS, world, BATCH))
    return ids, y


def _optimizer(model, kind: str):
    import disttorch as torch

    if kind == "sgd":
        return [torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)]
    sparse = [model.emb.weight, model.spare.weight]
    dense = [p for p in model.parameters() if all(p is not s for s in sparse)]
    return [torch.optim.SparseAdam(sparse, lr=0.1), torch.optim.Adam(dense, lr=0.1)]


def _train(model, opts, batches, accumulate: int = 1, use_spare: bool = False):
    """One step per group of ``accumulate`` micro-batches; ``batches`` yields (ids, y, last)."""
    import disttorch as torch

    for ids, y, sync in batches:
        ctx = model.no_sync() if not sync and hasattr(model, "no_sync") else _null()
        with ctx:
            loss = ((model(torch.tensor(ids), use_spare) - torch.tensor(y)) ** 2).mean() / accumulate
            loss.backward()
        if sync:
            for o in opts:
                o.step()
                o.zero_grad()


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _batches(ids, y, index, accumulate: int):
    """Split each step's batch into ``accumulate`` micro-batches; ``index`` picks the rows."""
    for s in range(STEPS):
        parts = np.array_split(np.arange(BATCH * (ids.shape[1] if index is None else 1)), accumulate)
        step_ids = ids[s].reshape(-1, ids.shape[-1]) if index is None else ids[s, index]
        step_y = y[s].reshape(-1) if index is None else y[s, index]
        for k, part in enumerate(parts):
            yield step_ids[part], step_y[part], k == accumulate - 1


def _reference(world: int, kind: str, accumulate: int, bag: bool, use_spare: bool) -> dict:
    ids, y = _data(world)
    model = _model(bag)
    # the mean over world * BATCH rows: DDP averages world per-rank means of BATCH rows
    _train(model, _optimizer(model, kind), _batches(ids, y, None, accumulate), accumulate, use_spare)
    return {k: v.numpy() for k, v in model.state_dict().items()}


def _ddp_worker(rank, world, kind, accumulate, bag, use_spare, find_unused):
    import disttorch.distributed as dist
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group()
    try:
        ids, y = _data(world)
        model = _model(bag)
        ddp = DDP(model, find_unused_parameters=find_unused)
        _train(ddp, _optimizer(model, kind), _batches(ids, y, rank, accumulate), accumulate, use_spare)
        # one more backward to inspect the averaged gradient's layout
        import disttorch as torch

        ddp(torch.tensor(ids[0, rank]), use_spare).sum().backward()
        grads_sparse = [model.emb.weight.grad.is_sparse, model.emb.weight.grad.is_coalesced()]
        spare_grad = None if model.spare.weight.grad is None else model.spare.weight.grad.to_dense().numpy()
        return {k: v.numpy() for k, v in model.state_dict().items()}, grads_sparse, spare_grad
    finally:
        dist.destroy_process_group()


def _check(world, kind, accumulate=1, bag=False, use_spare=True, find_unused=False):
    results = run_ranks(_ddp_worker, world, args=(kind, accumulate, bag, use_spare, find_unused), timeout=90)
    ref = _reference(world, kind, 1, bag, use_spare)
    for state, layout, _ in results:
        assert layout == [True, True]
        assert state.keys() == ref.keys()
        for k in ref:
            np.testing.assert_allclose(state[k], ref[k], rtol=1e-10, atol=1e-12, err_msg=k)
    # the parameters moved (the test would be vacuous otherwise)
    assert not np.allclose(
        ref["emb.weight"], {k: v.numpy() for k, v in _model(bag).state_dict().items()}["emb.weight"]
    )
    return results


@pytest.mark.timeout(120)
def test_ddp_sparse_sgd_matches_single_process():
    _check(2, "sgd")


@pytest.mark.timeout(120)
def test_ddp_sparse_adam_embedding_bag_matches_single_process():
    _check(2, "adam", bag=True)


@pytest.mark.timeout(120)
def test_ddp_sparse_no_sync_accumulates_then_averages():
    _check(2, "sgd", accumulate=2)


@pytest.mark.timeout(120)
def test_ddp_sparse_find_unused_keeps_unused_grad_none():
    results = _check(2, "sgd", use_spare=False, find_unused=True)
    assert all(spare is None for _, _, spare in results)


@pytest.mark.timeout(120)
def test_ddp_sparse_find_unused_with_every_parameter_used():
    results = _check(2, "sgd", find_unused=True)
    assert all(spare is not None and np.abs(spare).sum() > 0 for _, _, spare in results)


@pytest.mark.timeout(120)
def test_ddp_sparse_unused_without_find_unused_names_it():
    """A sparse-gradient parameter left out of the loss is reported by name."""
    with pytest.raises(RanksFailed, match="spare.weight"):
        run_ranks(
            _ddp_worker,
            2,
            args=(
                "sgd",
                1,
                False,
                False,
                False,
            ),
            timeout=90,
        )


def _all_reduce_worker(rank, world):
    import disttorch as torch
    import disttorch.distributed as dist

    dist.init_process_group()
    try:
        i = torch.tensor([[0, 2, 2], [1, 0, 1]]) if rank == 0 else torch.tensor([[2, 1], [1, 1]])
        v = torch.tensor([1.0, 2.0, 3.0]) if rank == 0 else torch.tensor([10.0, 20.0])
        s = torch.sparse_coo_tensor(i, v, (3, 2))
        dist.all_reduce(s)
        empty = torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.int64), torch.zeros(0), (3, 2))
        work = dist.all_reduce(empty, async_op=True)
        work.wait()
        errors = []
        try:
            dist.all_reduce(torch.sparse_coo_tensor(i, v, (3, 2)), op=dist.ReduceOp.MAX)
        except RuntimeError as e:
            errors.append(str(e))
        bad = torch.sparse_coo_tensor(i, v, (3, 2) if rank == 0 else (4, 2))
        try:
            dist.all_reduce(bad)
        except RuntimeError as e:
            errors.append(str(e))
        return (s.is_coalesced(), s.indices().numpy(), s.values().numpy(), empty._nnz(), errors)
    finally:
        dist.destroy_process_group()


@pytest.mark.timeout(60)
def test_all_reduce_sparse_sums_like_gloo():
    dense = np.zeros((3, 2))
    np.add.at(dense, ([0, 2, 2], [1, 0, 1]), [1.0, 2.0, 3.0])
    np.add.at(dense, ([2, 1], [1, 1]), [10.0, 20.0])
    for coalesced, idx, val, empty_nnz, errors in run_ranks(_all_reduce_worker, 2, timeout=50):
        assert coalesced
        got = np.zeros((3, 2))
        got[tuple(idx)] = val
        np.testing.assert_array_equal(got, dense)
        # PyTorch 2.13's gloo answers exactly this (coalesced, row-major order)
        np.testing.assert_array_equal(idx, [[0, 1, 2, 2], [1, 1, 0, 1]])
        np.testing.assert_array_equal(val, [1.0, 20.0, 2.0, 13.0])
        assert empty_nnz == 0
        assert "only works with ReduceOp.SUM" in errors[0]
        assert "size [3, 2]" in errors[1] and "size [4, 2]" in errors[1]


def _join_worker(rank, world, find_unused):
    import disttorch.distributed as dist
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group()
    try:
        ids, y = _data(world)
        model = _model()
        ddp = DDP(model, find_unused_parameters=find_unused)
        steps = STEPS if rank == 0 else STEPS - 1  # rank 1 runs out of data one step early
        batches = ((ids[s, rank], y[s, rank], True) for s in range(steps))
        with ddp.join():
            _train(ddp, _optimizer(model, "sgd"), batches, use_spare=True)
        return {k: v.numpy() for k, v in model.state_dict().items()}
    finally:
        dist.destroy_process_group()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("find_unused", [False, True])
def test_ddp_sparse_join_uneven_inputs(find_unused):
    """The last step only rank 0 trains: its gradient counts 1/world (the joined rank's zero)."""
    import disttorch as torch

    ids, y = _data(2)
    model = _model()
    (opt,) = _optimizer(model, "sgd")
    for s in range(STEPS):
        rows = slice(None) if s < STEPS - 1 else slice(0, 1)
        weight = 1.0 if s < STEPS - 1 else 0.5
        step_ids = ids[s, rows].reshape(-1, ids.shape[-1])
        step_y = y[s, rows].reshape(-1)
        loss = weight * ((model(torch.tensor(step_ids), True) - torch.tensor(step_y)) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    ref = {k: v.numpy() for k, v in model.state_dict().items()}
    for state in run_ranks(_join_worker, 2, args=(find_unused,), timeout=90):
        for k in ref:
            np.testing.assert_allclose(state[k], ref[k], rtol=1e-10, atol=1e-12, err_msg=k)


def _functional_worker(rank, world):
    import disttorch as torch
    import disttorch.distributed as dist
    import disttorch.nn.functional as F
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    class Table(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.table = torch.nn.Parameter(
                torch.arange(VOCAB * DIM, dtype=torch.float64).reshape(VOCAB, DIM)
            )

        def forward(self, ids):
            return F.embedding(ids, self.table, sparse=True)

    dist.init_process_group()
    try:
        ids, _ = _data(world)
        model = DDP(Table())
        (model(torch.tensor(ids[0, rank])) ** 2).mean().backward()
        return model.module.table.grad.layout == torch.strided, model.module.table.grad.numpy()
    finally:
        dist.destroy_process_group()


@pytest.mark.timeout(60)
def test_ddp_unexpected_sparse_grad_is_reduced_densely():
    """A sparse grad DDP did not expect (F.embedding on a plain Parameter) comes back dense, averaged."""
    import disttorch as torch
    import disttorch.nn.functional as F

    ids, _ = _data(2)
    table = torch.arange(VOCAB * DIM, dtype=torch.float64).reshape(VOCAB, DIM).requires_grad_()
    (F.embedding(torch.tensor(ids[0].reshape(-1, ids.shape[-1])), table, sparse=True) ** 2).mean().backward()
    for dense, grad in run_ranks(_functional_worker, 2, timeout=50):
        assert dense
        np.testing.assert_allclose(grad, table.grad.to_dense().numpy(), rtol=1e-12)
