"""DDP's gradient buckets in the host's shared-memory segment (``segment_buffers.py``):
on ranks of one host each bucket's buffer is the segment's memory, so the all-reduce
copies nothing in, and training gives the same bits as with private buckets (the arena
off), through a rebuild of the buckets, no_sync accumulation, gradient_as_bucket_view,
and an arena too small for every bucket."""

import hashlib

import pytest

from dist_helpers import run_ranks


def _train(rank, world, as_view):
    import contextlib

    import numpy as np

    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch import nn
    from disttorch.distributed.algorithms.shm import ONE_STEP_BYTES as ONE_STEP
    from disttorch.distributed.groups import resolve_group
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 512), nn.Tanh(), nn.Linear(512, 512), nn.Tanh(), nn.Linear(512, 8))
    ddp = DDP(model, bucket_cap_mb=0.25, gradient_as_bucket_view=as_view)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    board = resolve_group(None).transport.board

    def placed():  # of the buckets the all-reduce could read in place (the small take one step)
        return [board.offset(b.buffer) is not None for b in ddp.reducer.buckets if b.buffer.nbytes > ONE_STEP]

    before = placed()
    gen = np.random.default_rng(rank)
    for mode in ["sync", "no_sync", "sync", "sync"]:  # the buckets are rebuilt at step 2
        x = torch.tensor(gen.standard_normal((4, 32)).astype(np.float32))
        with ddp.no_sync() if mode == "no_sync" else contextlib.nullcontext():
            ddp(x).pow(2).mean().backward()
        if mode == "sync":
            opt.step()
            opt.zero_grad()
    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters()))
    after = placed()  # the rebuilt buckets
    dist.destroy_process_group()
    return before, after, digest.hexdigest()


@pytest.mark.timeout(240)
@pytest.mark.parametrize("world, as_view", [(2, False), (3, True)])
def test_buckets_live_in_the_segment_and_train_to_the_same_bits(world, as_view):
    shared = run_ranks(_train, world, args=(as_view,), timeout=200)
    private = run_ranks(_train, world, args=(as_view,), timeout=200, env={"DISTTORCH_SHM_ARENA_MB": "0"})
    small = run_ranks(_train, world, args=(as_view,), timeout=200, env={"DISTTORCH_SHM_ARENA_MB": "1"})
    for before, after, _ in shared:
        assert before and all(before) and all(after), "every bucket's buffer is the segment's memory"
    for before, after, _ in private:
        assert not any(before) and not any(after)
    for before, _, _ in small:
        assert any(before) and not all(before), "what does not fit is a private array"
    digests = {d for runs in (shared, private, small) for _, _, d in runs}
    assert len(digests) == 1, "the same bits on every rank and with or without the segment"
