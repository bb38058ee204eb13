"""ZeroRedundancyOptimizer's parameters in the host's shared-memory segment
(``distributed/optim/shard_layout.py``): on ranks of one host every parameter lives in
the rank's arena, each shard is broadcast where it lies, and training gives the same bits
as the plain optimiser on every rank, with mixed dtypes, tied weights, a non-contiguous
parameter, a replaced ``.data`` and a reloaded state; with the arena off or too small the
copying path gives the same bits; a collected optimiser gives its arena back."""

import functools
import hashlib

import pytest

from dist_helpers import run_ranks


def _model(torch, nn):
    """Tied embedding/output weights (float32), a float64 layer, a non-contiguous
    parameter: about 1.3 MiB of parameters."""

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(1000, 128)
            self.hidden = nn.Linear(128, 512).double()
            self.back = nn.Parameter(torch.randn(128, 512).t())  # a transposed view
            self.out = nn.Linear(128, 1000, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, x):
            h = torch.tanh(self.hidden(self.emb(x).double())).float()
            return self.out(h @ self.back)

    return Net()


def _train(rank, world, opt_name):
    import copy
    import gc

    import numpy as np

    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch import nn
    from disttorch.distributed.algorithms import shm as shm_algorithm
    from disttorch.distributed.groups import resolve_group
    from disttorch.distributed.optim import ZeroRedundancyOptimizer

    dist.init_process_group()
    torch.manual_seed(0)
    model = _model(torch, nn)
    reference = copy.deepcopy(model)
    options = {"Adam": {"lr": 1e-3}, "SGD": {"lr": 0.1, "momentum": 0.9}}[opt_name]
    opt_class = getattr(torch.optim, opt_name)
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=opt_class, **options)
    plain = opt_class(reference.parameters(), **options)
    board = resolve_group(None).transport.board
    params = list(model.parameters())
    in_arena = [board.offset(p._data) is not None for p in params]
    arena_bytes = sum(board.leases.values())
    big = sum(r.numel * r.dtype.itemsize > shm_algorithm.ONE_STEP_BYTES for r in opt._layout.ranges)
    in_place, original = [], shm_algorithm.broadcast_in_arena
    shm_algorithm.broadcast_in_arena = lambda *args: (in_place.append(args[1].nbytes), original(*args))
    gen = torch.Generator().manual_seed(1)  # the same batches on every rank: equal gradients
    for step in range(4):
        x = torch.randint(0, 1000, (8, 4), generator=gen)
        for m, o in ((model, opt), (reference, plain)):
            o.zero_grad()
            torch.nn.functional.cross_entropy(m(x).reshape(-1, 1000), x.reshape(-1)).backward()
            o.step()
        if step == 1:  # a user replaces a parameter's memory: still kept in step
            read_in_place = len(in_place) == 2 * big  # every large range was read in place
            for m in (model, reference):
                m.hidden.bias.data = m.hidden.bias.data.clone()
        if step == 2:  # a saved and reloaded state changes nothing
            opt.consolidate_state_dict(to=0)
            state = [opt.state_dict() if rank == 0 else None]
            dist.broadcast_object_list(state, src=0)
            opt.load_state_dict(state[0])
    same = all(
        p.detach().numpy().tobytes() == q.detach().numpy().tobytes()
        for p, q in zip(params, reference.parameters())
    )
    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in params)).hexdigest()
    values = [p.detach().numpy().copy() for p in params]
    del opt
    gc.collect()
    moved_out = all(board.offset(p._data) is None for p in params) and not board.leases
    kept = all(np.array_equal(v, p.detach().numpy()) for v, p in zip(values, params))
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=opt_class, **options)
    dist.destroy_process_group()  # drops the leases; the parameters keep the mapping alive
    del opt
    gc.collect()
    kept = kept and all(np.array_equal(v, p.detach().numpy()) for v, p in zip(values, params))
    return in_arena, arena_bytes, same, digest, moved_out and kept, read_in_place and big > 0


PARAM_BYTES = 1000 * 128 * 4 + (128 * 512 + 512) * 8 + 128 * 512 * 4  # the tied weight once


def _check(runs, in_arena: bool) -> str:
    for placed, arena_bytes, same, _, released, read_in_place in runs:
        # the transposed view (the model's own parameter, listed first) keeps its memory;
        # every other parameter, the tied one laid out once, lives in the arena
        assert placed == ([False, True, True, True] if in_arena else [False] * 4)
        assert (PARAM_BYTES <= arena_bytes < PARAM_BYTES + 3 * 64) if in_arena else arena_bytes == 0
        assert same, "the same bits as the plain optimiser"
        assert released, "a collected optimiser moves the parameters out and gives the arena back"
        assert read_in_place == in_arena, "in the arena, the shards are broadcast where they lie"
    digests = {run[3] for run in runs}
    assert len(digests) == 1, "every rank holds the same parameters"
    return digests.pop()


@functools.cache  # the 2-rank Adam run serves both tests below
def _runs(world: int, opt_name: str, arena_mib: str | None = None) -> list:
    env = None if arena_mib is None else {"DISTTORCH_SHM_ARENA_MB": arena_mib}
    return run_ranks(_train, world, args=(opt_name,), timeout=240, env=env)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("world, opt_name", [(2, "Adam"), (3, "SGD"), (4, "Adam")])
def test_zero_parameters_live_in_the_segment_and_train_to_the_plain_optimisers_bits(world, opt_name):
    _check(_runs(world, opt_name), in_arena=True)


@pytest.mark.timeout(300)
def test_zero_falls_back_to_copies_when_the_arena_is_off_or_too_small():
    shared = _check(_runs(2, "Adam"), in_arena=True)
    for mib in ("0", "1"):
        assert _check(_runs(2, "Adam", mib), in_arena=False) == shared


def test_only_contiguous_parameters_that_share_no_memory_become_views_of_the_arena():
    import numpy as np

    from disttorch.distributed.optim.shard_layout import _apart

    w = np.zeros((4, 6))
    arrays = [w, w[1], np.zeros(5), np.zeros((3, 2)).T, np.zeros(0), w[3:].reshape(-1)]
    assert _apart(arrays) == [False, False, True, False, True, False]
