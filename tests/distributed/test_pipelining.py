"""torch.distributed.pipelining on real processes: a model cut into two stages, run by
ScheduleGPipe, Schedule1F1B and ScheduleInterleaved1F1B (two stages per rank), or cut by
pipeline(), gives the losses, outputs and gradients of the unpipelined
model on the same batch (and PyTorch's, when it is installed); a rank that dies in the
middle of a schedule is reported, never waited for."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks

N_MB = 4


def _model(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2))


def _batch(lib):
    g = np.random.default_rng(0)
    x = g.standard_normal((8, 4)).astype(np.float32)
    y = g.standard_normal((8, 2)).astype(np.float32)
    return lib.tensor(x), lib.tensor(y)


def _pipelined(rank: int, world: int) -> dict:
    import disttorch as dt
    import disttorch.distributed as dist
    from disttorch.distributed.pipelining import (
        PipelineStage,
        Schedule1F1B,
        ScheduleGPipe,
        ScheduleInterleaved1F1B,
        SplitPoint,
        pipeline,
    )

    dist.init_process_group("gloo")
    mse = dt.nn.functional.mse_loss
    model = _model(dt)
    part = model[:2] if rank == 0 else model[2:]
    x, y = _batch(dt)
    out: dict = {}
    pipe = pipeline(_model(dt), mb_args=(x.chunk(N_MB)[0],), split_spec={"2": SplitPoint.BEGINNING})
    cpu = dt.device("cpu")
    quarters = [model[0:1], model[1:3], model[3:4], model[4:5]]  # 4 stages, 2 per rank
    runs = {  # name: (this rank's modules, a schedule over their stages)
        "ScheduleGPipe": ([part], lambda: ScheduleGPipe(PipelineStage(part, rank, 2, cpu), N_MB, mse)),
        "Schedule1F1B": ([part], lambda: Schedule1F1B(PipelineStage(part, rank, 2, cpu), N_MB, mse)),
        "pipeline": (
            [pipe.get_stage_module(rank)],
            lambda: Schedule1F1B(pipe.build_stage(rank, cpu), N_MB, mse),
        ),
        "ScheduleInterleaved1F1B": (
            [quarters[rank], quarters[rank + 2]],
            lambda: ScheduleInterleaved1F1B(
                [PipelineStage(quarters[s], s, 4, cpu) for s in (rank, rank + 2)], N_MB, mse
            ),
        ),
    }
    for name, (parts, make_schedule) in runs.items():
        for p in parts:
            p.zero_grad(set_to_none=True)
        sched = make_schedule()
        losses: list = []
        result = sched.step(x) if rank == 0 else sched.step(target=y, losses=losses)
        out[name] = {
            "grads": {n: p.grad.tolist() for m in parts for n, p in m.named_parameters()},
            "losses": [v.item() for v in losses],
            "output": None if result is None else result.tolist(),
        }
        with dt.no_grad():
            evaluated = sched.eval(x) if rank == 0 else sched.eval()
        out[name]["eval"] = None if evaluated is None else evaluated.tolist()
    errors = {}
    for key, call in {
        "stage_index": lambda: PipelineStage(part, 2, 2, dt.device("cpu")),
        "too_few_microbatches": lambda: Schedule1F1B(PipelineStage(part, rank, 2, "cpu"), 1),
        "no_grad": lambda: _step_without_grad(
            dt, ScheduleGPipe(PipelineStage(part, rank, 2, "cpu"), 2, dt.nn.functional.mse_loss)
        ),
    }.items():
        try:
            call()
            errors[key] = None
        except Exception as e:  # noqa: BLE001 - recorded for the test
            errors[key] = (type(e).__name__, str(e))
    out["errors"] = errors
    dist.destroy_process_group()
    return out


def _step_without_grad(dt, sched) -> None:
    with dt.no_grad():
        sched.step()


def _reference(lib) -> dict:
    model = _model(lib)
    x, y = _batch(lib)
    lib.nn.functional.mse_loss(model(x), y).backward()
    grads = {n: p.grad.tolist() for n, p in model.named_parameters()}
    with lib.no_grad():
        losses = [
            lib.nn.functional.mse_loss(model(a), b).item() for a, b in zip(x.chunk(N_MB), y.chunk(N_MB))
        ]
        output = model(x).tolist()
    return {"grads": grads, "losses": losses, "output": output}


@pytest.fixture(scope="module")
def pipelined() -> list:
    return run_ranks(_pipelined, 2, timeout=90)


def _check(pipelined: list, ref: dict) -> None:
    for name in ("ScheduleGPipe", "Schedule1F1B", "pipeline", "ScheduleInterleaved1F1B"):
        first, last = pipelined[0][name], pipelined[1][name]
        grads = {**first["grads"], **last["grads"]}  # a Sequential's slice keeps its layers' names
        assert grads.keys() == ref["grads"].keys()
        for n, g in ref["grads"].items():
            np.testing.assert_allclose(grads[n], g, rtol=1e-5, atol=1e-7, err_msg=f"{name} {n}")
        np.testing.assert_allclose(last["losses"], ref["losses"], rtol=1e-5)
        np.testing.assert_allclose(last["output"], ref["output"], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(last["eval"], ref["output"], rtol=1e-5, atol=1e-7)
        assert first["output"] is None and first["losses"] == [] and first["eval"] is None


def test_pipeline_cuts_a_traced_model_at_split_spec_and_pipe_split():
    import disttorch as dt
    from disttorch.distributed.pipelining import SplitPoint, pipe_split, pipeline

    class Net(dt.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = dt.nn.ModuleList([dt.nn.Linear(4, 4) for _ in range(4)])
            self.skip = dt.nn.Linear(4, 4)

        def forward(self, x):
            s = self.skip(x)  # used by the last stage: handed on through the middle one
            for i, layer in enumerate(self.layers):
                x = dt.tanh(layer(x))
                if i == 2:
                    pipe_split()
            return x + s

    dt.manual_seed(0)
    net, x = Net(), dt.randn(3, 4)
    pipe = pipeline(net, mb_args=(x,), split_spec={"layers.1": SplitPoint.BEGINNING})
    assert pipe.num_stages == 3
    assert [len(list(pipe.get_stage_module(i).parameters())) for i in range(3)] == [4, 4, 2]
    np.testing.assert_allclose(pipe.split_gm(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(pipe(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
    assert net(x) is not None  # pipe_split outside pipeline() does nothing
    with pytest.raises(ValueError, match="split_spec names 'layers.9'"):
        pipeline(net, mb_args=(x,), split_spec={"layers.9": SplitPoint.END})


def test_pipelined_gradients_and_losses_equal_the_unpipelined_models(pipelined):
    import disttorch as dt

    _check(pipelined, _reference(dt))


@pytest.mark.parity
def test_pipelined_gradients_and_losses_equal_pytorchs(pipelined, torch):
    _check(pipelined, _reference(torch))


def _pytorch_pipelined(rank: int, world: int) -> dict:
    """The schedules of PyTorch's own pipelining, over gloo."""
    import torch
    import torch.distributed as dist
    from torch.distributed.pipelining import (
        PipelineStage,
        Schedule1F1B,
        ScheduleGPipe,
        ScheduleInterleaved1F1B,
    )

    dist.init_process_group("gloo")
    model = _model(torch)
    part = model[:2] if rank == 0 else model[2:]
    quarters = [model[0:1], model[1:3], model[3:4], model[4:5]]
    x, y = _batch(torch)
    cpu, mse = torch.device("cpu"), torch.nn.functional.mse_loss
    runs = {
        "ScheduleGPipe": ([part], lambda: ScheduleGPipe(PipelineStage(part, rank, 2, cpu), N_MB, mse)),
        "Schedule1F1B": ([part], lambda: Schedule1F1B(PipelineStage(part, rank, 2, cpu), N_MB, mse)),
        "ScheduleInterleaved1F1B": (
            [quarters[rank], quarters[rank + 2]],
            lambda: ScheduleInterleaved1F1B(
                [PipelineStage(quarters[s], s, 4, cpu) for s in (rank, rank + 2)], N_MB, mse
            ),
        ),
    }
    out = {}
    for name, (parts, make_schedule) in runs.items():
        for p in parts:
            p.zero_grad(set_to_none=True)
        sched = make_schedule()
        losses: list = []
        result = sched.step(x) if rank == 0 else sched.step(target=y, losses=losses)
        out[name] = {
            "grads": {n: p.grad.tolist() for m in parts for n, p in m.named_parameters()},
            "losses": [v.item() for v in losses],
            "output": None if result is None else result.tolist(),
        }
    dist.destroy_process_group()
    return out


@pytest.mark.parity
def test_pipelined_run_equals_pytorchs_pipelining(pipelined, torch):
    theirs = run_ranks(_pytorch_pipelined, 2, timeout=120)
    for name in ("ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B"):
        for rank in (0, 1):
            ours, want = pipelined[rank][name], theirs[rank][name]
            assert ours["grads"].keys() == want["grads"].keys()
            for n, g in want["grads"].items():
                np.testing.assert_allclose(ours["grads"][n], g, rtol=1e-5, atol=1e-7, err_msg=f"{name} {n}")
            np.testing.assert_allclose(ours["losses"], want["losses"], rtol=1e-5)
            if want["output"] is not None:
                np.testing.assert_allclose(ours["output"], want["output"], rtol=1e-5, atol=1e-7)


def test_pipelining_refuses_what_pytorch_refuses(pipelined):
    e = pipelined[0]["errors"]
    assert e["stage_index"] == ("ValueError", "Stage index 2 is out of range of 2")
    assert e["too_few_microbatches"] == (
        "ValueError",
        "Number of microbatches (1) must be greater than or equal to the number of stages (2).",
    )
    assert e["no_grad"][0] == "RuntimeError" and e["no_grad"][1].startswith("step() requires gradients")


def _dies(rank: int, world: int) -> str:
    import os
    import time

    import disttorch as dt
    import disttorch.distributed as dist
    from disttorch.distributed.pipelining import PipelineStage, Schedule1F1B

    dist.init_process_group("gloo")

    class DiesOnSecondForward(dt.nn.Linear):
        calls = 0

        def forward(self, x):
            self.calls += 1
            if self.calls == 2:
                os._exit(3)  # the last stage dies in the middle of the schedule
            return super().forward(x)

    part = dt.nn.Linear(4, 4) if rank == 0 else DiesOnSecondForward(4, 4)
    sched = Schedule1F1B(PipelineStage(part, rank, 2, "cpu"), 4, loss_fn=dt.nn.functional.mse_loss)
    x, y = dt.randn(8, 4), dt.randn(8, 4)
    start = time.monotonic()
    try:
        sched.step(x) if rank == 0 else sched.step(target=y)
    except Exception as e:  # noqa: BLE001 - reported to the test
        return f"{type(e).__name__} after {time.monotonic() - start:.0f}s: {e}"
    return "no error"


def test_a_rank_that_dies_mid_schedule_is_reported():
    results = run_ranks(_dies, 2, timeout=60, check=False)
    assert results[1].returncode == 3
    assert results[0].ok and results[0].value.startswith("PeerDiedError"), results[0].describe()
    assert "rank 1" in results[0].value, results[0].value
