"""Checkpointer: a run interrupted and resumed ends bitwise equal to an uninterrupted one."""

import os

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.utils.data import DataLoader, TensorDataset
from disttorch.utils.resume import Checkpointer


def _run(directory, stop_after=None, epochs=3):
    """Train with dropout (uses the RNG), momentum and a schedule; maybe 'crash' early."""
    dt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Linear(8, 2))
    opt = dt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = dt.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    g = dt.Generator().manual_seed(3)
    data = TensorDataset(dt.randn(40, 4, generator=g), dt.randint(0, 2, (40,), generator=g))
    loader = DataLoader(data, batch_size=8, shuffle=True, generator=dt.Generator().manual_seed(5))
    ckpt = Checkpointer(directory, model=model, optimizer=opt, scheduler=sched)
    state = ckpt.load_latest()
    done = 0
    for epoch in range(state.epoch, epochs):
        loader.generator.manual_seed(100 + epoch)  # a deterministic order per epoch
        for step, (x, y) in ckpt.batches(loader, epoch):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            ckpt.save(epoch, step + 1, every=2)
            done += 1
            if stop_after is not None and done == stop_after:
                return None
        sched.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("stop_after", [1, 4, 7, 12])
def test_resume_after_a_crash_is_bitwise_identical(tmp_path, stop_after):
    reference = _run(tmp_path / "ref")
    assert _run(tmp_path / "run", stop_after=stop_after) is None
    resumed = _run(tmp_path / "run")
    for a, b in zip(reference, resumed):
        np.testing.assert_array_equal(a, b)


def test_latest_points_to_a_complete_checkpoint_and_old_ones_are_pruned(tmp_path):
    _run(tmp_path)
    names = sorted(os.listdir(tmp_path))
    assert "latest" in names and len([n for n in names if n.endswith(".pt")]) == 2
    ck = Checkpointer(tmp_path, model=nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Linear(8, 2)))
    state = ck.load_latest()
    assert state.global_step > 0 and (state.epoch, state.step) != (0, 0)


class _TwoRanks:
    """Rank 0's view of a 2-rank group whose rank 1 (on host "node1") found ``other``."""

    def __init__(self, other):
        self.other = other

    def all_gather_object(self, out, mine):
        out[:] = [mine, (self.other, "node1")]


@pytest.mark.parametrize("other", [None, "step-000000001.pt"])
def test_ranks_that_find_different_checkpoints_fail_together(tmp_path, monkeypatch, other):
    """A folder not shared by every node (each node its own disk) would start the ranks at
    different epochs; load_latest, which every rank calls, says so on every rank instead."""
    from disttorch.utils import resume

    Checkpointer(tmp_path, model=nn.Linear(2, 2)).save(3, 0)
    monkeypatch.setattr(resume, "_dist_info", lambda: (0, 2, _TwoRanks(other)))
    ck = Checkpointer(tmp_path, model=nn.Linear(2, 2))
    if other is not None:  # the same checkpoint everywhere
        assert ck.load_latest().epoch == 3
        return
    with pytest.raises(RuntimeError) as info:
        ck.load_latest()
    message = str(info.value)
    assert (
        f"the ranks found different checkpoints in {str(tmp_path)!r}: step-000000001.pt on rank 0 ("
        in message
    )
    assert "; no checkpoint on rank 1 (node1). Rank 0 alone writes them" in message
    assert "resume with a folder every node sees" in message, message
