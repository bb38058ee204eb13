"""A PyTorch-style training script using bfloat16 autocast, GradScaler, activation
checkpointing, the profiler and SummaryWriter together, written as for PyTorch (``torch``
is disttorch) and, when PyTorch is installed, run with it too: both losses fall alike."""

import importlib
import json

import numpy as np
import pytest

import disttorch

pytest.importorskip("ml_dtypes")
pytest.importorskip("tensorboard")


def _train(torch, log_dir, steps=12):
    name = torch.__name__  # the library under test, not whatever "torch" imports
    prof_mod = importlib.import_module(name + ".profiler")
    ProfilerActivity, profile = prof_mod.ProfilerActivity, prof_mod.profile
    record_function, schedule = prof_mod.record_function, prof_mod.schedule
    checkpoint = importlib.import_module(name + ".utils.checkpoint").checkpoint
    SummaryWriter = importlib.import_module(name + ".utils.tensorboard").SummaryWriter

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((64, 16)).astype(np.float32))
    y = torch.tensor((rng.standard_normal(64) > 0).astype(np.int64))
    block = torch.nn.Sequential(
        torch.nn.Linear(16, 32),
        torch.nn.GELU(),
        torch.nn.Dropout(0.1),
        torch.nn.Linear(32, 32),
        torch.nn.GELU(),
    )
    head = torch.nn.Linear(32, 2)
    with torch.no_grad():  # the same initial weights in both libraries
        for i, p in enumerate(list(block.parameters()) + list(head.parameters())):
            p.copy_(
                torch.tensor(np.random.default_rng(i).uniform(-0.3, 0.3, tuple(p.shape)).astype(np.float32))
            )
    params = list(block.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.2, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8)
    losses = []
    writer = SummaryWriter(log_dir=log_dir)
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
        record_shapes=True,
    ) as prof:
        for step in range(steps):
            with record_function("train_step"):
                with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
                    h = checkpoint(block, x, use_reentrant=False)
                    loss = torch.nn.functional.cross_entropy(head(h), y)
                opt.zero_grad()
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
                torch.nn.utils.clip_grad_norm_(params, 5.0)
                scaler.step(opt)
                scaler.update()
            writer.add_scalar("loss", loss.item(), step)
            losses.append(loss.item())
            prof.step()
    writer.close()
    return losses, prof, params


def test_tools_together(tmp_path):
    losses, prof, params = _train(disttorch, str(tmp_path / "ours"))
    assert losses[-1] < 0.7 * losses[0]
    assert all(p.dtype is disttorch.float32 and p.grad.dtype is disttorch.float32 for p in params)
    keys = {e.key for e in prof.key_averages()}
    assert {"train_step", "aten::linear", "aten::cross_entropy_loss", "Optimizer.step#SGD.step"} <= keys
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    assert json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tmp_path / "ours"))
    acc.Reload()
    np.testing.assert_allclose([e.value for e in acc.Scalars("loss")], losses, rtol=1e-6)


@pytest.mark.parity
def test_tools_together_tracks_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    ours, _, _ = _train(disttorch, str(tmp_path / "ours"))
    theirs, _, _ = _train(torch, str(tmp_path / "theirs"))
    # dropout masks differ between the libraries' RNGs: the curves agree loosely
    assert abs(ours[-1] - theirs[-1]) < 0.15 and ours[-1] < 0.7 * ours[0] and theirs[-1] < 0.7 * theirs[0]
