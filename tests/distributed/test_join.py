"""``Join`` with uneven inputs on three real ranks: DDP and ZeRO together (either division),
a user-written ``Joinable`` (the generic-join recipe's counter), BatchNorm buffers under
``Join`` (broadcast from the highest rank still training) and ``throw_on_early_termination``;
the numbers and messages are PyTorch 2.13's (gloo)."""

from __future__ import annotations

import pytest

from dist_helpers import run_ranks


def _uneven(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch.distributed.algorithms.join import Join, Joinable, JoinHook
    from disttorch.distributed.optim import ZeroRedundancyOptimizer
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    class CounterHook(JoinHook):
        def __init__(self, counter):
            self.counter = counter

        def main_hook(self):
            dist.all_reduce(torch.zeros(1))

        def post_hook(self, is_last_joiner):
            self.counter.last = is_last_joiner

    class Counter(Joinable):
        def __init__(self):
            super().__init__()
            self.count = torch.zeros(1)

        def __call__(self):
            Join.notify_join_context(self)
            t = torch.ones(1)
            dist.all_reduce(t)
            self.count += t

        def join_hook(self, **kwargs):
            return CounterHook(self)

        join_device = torch.device("cpu")
        join_process_group = None

    dist.init_process_group("gloo")
    out: dict = {}
    for divide in (True, False):
        torch.manual_seed(0)
        model = DDP(torch.nn.Linear(2, 1))
        opt = ZeroRedundancyOptimizer(model.parameters(), torch.optim.Adam, lr=0.1)
        with Join([model, opt], divide_by_initial_world_size=divide):
            for i in range(2 + 2 * rank):  # 2, 4 and 6 steps
                model(torch.tensor([[1.0, -2.0]]) * (rank + i + 1)).sum().backward()
                opt.step()
                opt.zero_grad()
        out[divide] = [round(v, 6) for p in model.parameters() for v in p.detach().flatten().tolist()]
    out["adam options"] = sorted(opt.param_groups[0])
    counter = Counter()
    with Join([counter]):
        for _ in range(5 + rank):
            counter()
    out["counter"] = (int(counter.count.item()), counter.last)
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2)))
    with Join([model]):
        for i in range(1 + rank):  # 1, 2 and 3 steps
            model(torch.tensor([[1.0, -2.0], [0.5, 3.0]]) * (rank + i + 1)).sum().backward()
    bn = model.module[1]
    out["bn"] = [round(v, 4) for v in bn.running_mean.tolist() + bn.running_var.tolist()]
    out["bn"].append(int(bn.num_batches_tracked))
    model = DDP(torch.nn.Linear(2, 1))
    try:
        with Join([model], throw_on_early_termination=True):
            for _ in range(1 + rank):
                model(torch.ones(1, 2)).sum().backward()
    except RuntimeError as e:
        out["throw"] = str(e)
    dist.destroy_process_group()
    return out


@pytest.fixture(scope="module")
def uneven() -> list:
    return run_ranks(_uneven, 3, timeout=100)


@pytest.mark.timeout(120)
def test_ddp_and_zero_join_end_with_pytorchs_parameters(uneven):
    for out in uneven:
        assert out[True] == [-0.204375, 0.578404, -0.975166]
        assert out[False] == [-0.204375, 0.578404, -0.981981]
        assert {"lr", "betas", "eps", "amsgrad", "weight_decay", "params"} <= set(out["adam options"])


@pytest.mark.timeout(120)
def test_a_user_joinable_is_shadowed_and_told_who_joined_last(uneven):
    assert [out["counter"] for out in uneven] == [(15, False), (17, False), (18, True)]


@pytest.mark.timeout(120)
def test_buffers_come_from_the_highest_rank_still_training(uneven):
    # rank 2 trains alone in the third step: its statistics (3 batches) end on every rank,
    # not rank 0's stale ones (2 batches)
    for out in uneven:
        assert out["bn"] == [0.131, -0.7171, 9.15, 13.1963, 3]


@pytest.mark.timeout(120)
def test_throw_on_early_termination_raises_on_every_rank(uneven):
    assert uneven[0]["throw"] == "Rank 0 exhausted all inputs."
    for out in uneven[1:]:
        assert out["throw"] == "Detected at least one rank that exhausted inputs. Throwing across all ranks."
