"""DDP bucket rebuild on real processes: after the first synchronised backward the buckets
follow the order in which gradients became ready (rank 0's order, on every rank), with
no_sync, gradient_as_bucket_view, find_unused_parameters, comm hooks, join and tracing;
and join's divide_by_initial_world_size, against a one-process reference."""

import numpy as np
import pytest
from test_ddp import _batches, _max_rel

from dist_helpers import run_ranks

CAP_MB = 0.001  # about 1 KiB: the model below spreads over several buckets
SCHEDULE = ["sync", "no_sync", "sync", "sync", "sync"]  # the rebuild comes at step 2


def _reversed_net(nn):
    """Layers registered as [c, b, a] but applied as a, b, c: reverse registration order
    (the construction layout) is the opposite of the order backward produces gradients."""

    class Reversed(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Linear(16, 3)
            self.b = nn.Linear(16, 16)
            self.a = nn.Linear(6, 16)

        def forward(self, x):
            return self.c(self.b(self.a(x).tanh()).tanh())

    return Reversed()


def _expected_layout(params, order):
    from disttorch.nn.parallel.reducer import _FIRST_BUCKET_BYTES, assign_buckets

    cap = int(CAP_MB * 1024 * 1024)
    return assign_buckets(params, cap, min(_FIRST_BUCKET_BYTES, cap), order)


def _record_ready_order(params):
    """Append each parameter's index to the returned list when its gradient is ready."""
    order = []
    for i, p in enumerate(params):
        p.register_post_accumulate_grad_hook(lambda _p, i=i: order.append(i))
    return order


def _rebuild_run(rank, world, as_view):
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch import nn
    from disttorch.nn.parallel import DistributedDataParallel as DDP
    from disttorch.utils import trace

    dist.init_process_group()
    torch.manual_seed(0 if rank == 0 else 100 + rank)
    model = _reversed_net(nn)
    params = list(model.parameters())
    ready = _record_ready_order(params)
    ddp = DDP(model, bucket_cap_mb=CAP_MB, gradient_as_bucket_view=as_view)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    layouts = [ddp.reducer.bucket_param_indices]
    grads_kept = shares_bucket = True
    identical, per_rank = True, 4
    for step, (x, y) in enumerate(_batches(torch, world, per_rank, len(SCHEDULE))):
        sl = slice(rank * per_rank, (rank + 1) * per_rank)
        if step == 2:  # .grad holds step 1's local gradients (no_sync)
            before = [p.grad.numpy().copy() for p in params]
        if SCHEDULE[step] == "no_sync":
            with ddp.no_sync():
                nn.functional.cross_entropy(ddp(x[sl]), y[sl]).backward()
        else:
            out = ddp(x[sl])  # step 2: the rebuild happens here, before backward
            if step == 2:
                grads_kept = all(np.array_equal(p.grad.numpy(), g) for p, g in zip(params, before))
                slots = [b.buffer for b in ddp.reducer.buckets]
                shares_bucket = all(any(np.shares_memory(p.grad.numpy(), s) for s in slots) for p in params)
            nn.functional.cross_entropy(out, y[sl]).backward()
            opt.step()
            opt.zero_grad(set_to_none=False)  # as_view: .grad stays a view of the buckets
        if step == 0:
            first_order = list(ready)
        layouts.append(ddp.reducer.bucket_param_indices)
        flat = np.concatenate([p.detach().numpy().ravel() for p in params])
        everyone = [None] * world
        dist.all_gather_object(everyone, flat)
        identical &= all(np.array_equal(everyone[0], f) for f in everyone)
    path = trace.flush()
    result = dict(
        params=[p.detach().numpy() for p in params],
        identical=identical,
        layouts=layouts,
        first_order=first_order,
        expected=_expected_layout(params, first_order),
        grads_kept=grads_kept,
        shares_bucket=shares_bucket,
        trace=path,
    )
    dist.destroy_process_group()
    return result


def _rebuild_single(world):
    import disttorch as torch
    from disttorch import nn

    torch.manual_seed(0)
    model = _reversed_net(nn)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for kind, (x, y) in zip(SCHEDULE, _batches(torch, world, 4, len(SCHEDULE))):
        nn.functional.cross_entropy(model(x), y).backward()
        if kind == "sync":
            opt.step()
            opt.zero_grad(set_to_none=False)
    return [p.detach().numpy() for p in model.parameters()]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("as_view", [False, True])
def test_buckets_are_rebuilt_once_in_gradient_order_and_training_is_unchanged(as_view, tmp_path):
    import json

    results = run_ranks(
        _rebuild_run, 2, args=(as_view,), env={"DISTTORCH_TRACE_DIR": str(tmp_path)}, timeout=90
    )
    r0 = results[0]
    construction, *after_steps = r0["layouts"]
    assert [i for b in construction for i in b] == [5, 4, 3, 2, 1, 0]
    # steps 0 (records the order) and 1 (no_sync) keep the construction layout
    assert after_steps[0] == after_steps[1] == construction
    # the forward of step 2 rebuilt the buckets in the order the gradients came: c, b, a
    rebuilt = after_steps[2]
    assert len(rebuilt) > 1 and rebuilt != construction
    assert rebuilt == r0["expected"]
    assert [i for b in rebuilt for i in b] == r0["first_order"]
    assert set(r0["first_order"][:2]) == {0, 1}  # c.weight and c.bias first
    assert all(layouts == after_steps[2] for layouts in after_steps[2:])
    for r in results:
        assert r["layouts"] == r0["layouts"], "ranks disagree on the bucket layout"
        assert r["grads_kept"], ".grad lost its values in the rebuild"
        assert r["shares_bucket"] or not as_view, ".grad is no longer a view of the buckets"
        assert r["identical"], "replicas diverged: parameters not bitwise identical"
        events = json.load(open(r["trace"]))["traceEvents"]
        assert sum(e["name"] == "rebuild buckets" for e in events) == 1
    assert _max_rel(r0["params"], _rebuild_single(2)) <= 1e-5


def _unused_rebuild(rank, world):
    """find_unused_parameters=True, a parameter used by rank 1 only (so the ranks see
    different ready orders) and a custom comm hook that records the buckets it gets."""
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch import nn
    from disttorch.nn.parallel import DistributedDataParallel as DDP
    from disttorch.nn.parallel.comm_hooks import allreduce_hook

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = _reversed_net(nn)
            self.extra = nn.Linear(6, 3)  # used by rank 1 only
            self.never = nn.Linear(6, 3)  # used by nobody

        def forward(self, x):
            out = self.body(x)
            return out + self.extra(x) if rank == 1 else out

    dist.init_process_group()
    torch.manual_seed(0)
    net = Net()
    params = list(net.parameters())
    index = {id(p): i for i, p in enumerate(params)}
    ready = _record_ready_order(params)
    ddp = DDP(net, bucket_cap_mb=CAP_MB, find_unused_parameters=True)
    seen = []

    def hook(state, bucket):
        seen.append([index[id(p)] for p in bucket.parameters()])
        return allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    hooked, identical = [], True
    for x, y in _batches(torch, world, 4, 3):
        sl = slice(rank * 4, (rank + 1) * 4)
        seen.clear()
        nn.functional.cross_entropy(ddp(x[sl]), y[sl]).backward()
        opt.step()
        opt.zero_grad()
        if not hooked:
            local_order = list(ready)
        hooked.append(sorted(seen))
        flat = np.concatenate([p.detach().numpy().ravel() for p in params])
        everyone = [None] * world
        dist.all_gather_object(everyone, flat)
        identical &= all(np.array_equal(everyone[0], f) for f in everyone)
    unused = [i for i in reversed(range(len(params))) if i not in local_order]
    result = dict(
        layout=ddp.reducer.bucket_param_indices,
        hooked=hooked,
        identical=identical,
        own=_expected_layout(params, local_order + unused),
        local_order=local_order,
        never_grad_none=net.never.weight.grad is None,
    )
    dist.destroy_process_group()
    return result


@pytest.mark.timeout(90)
def test_rebuild_with_unused_parameters_follows_rank_0_and_comm_hooks_see_the_new_buckets():
    r0, r1 = run_ranks(_unused_rebuild, 2, timeout=75)
    assert r0["own"] != r1["own"], "the ranks should see different gradient orders"
    # everyone uses rank 0's order, with its unused parameters (extra, never) last in
    # reverse registration order
    assert r0["layout"] == r1["layout"] == r0["own"]
    assert [i for b in r0["layout"] for i in b] == r0["local_order"] + [9, 8, 7, 6]
    for r in (r0, r1):
        assert r["never_grad_none"] and r["identical"]
        # the hook got the construction buckets in step 0 and the rebuilt ones afterwards
        assert r["hooked"][0] != r["hooked"][1]
        assert r["hooked"][1] == r["hooked"][2] == sorted(r0["layout"])


def _rank_batches(torch, rank, n):
    return _batches(torch, 1, 4, n, seed=10 + rank)


def _join_run(rank, world, counts, divide, hook):
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch import nn
    from disttorch.nn.parallel import DistributedDataParallel as DDP
    from disttorch.nn.parallel.comm_hooks import fp16_compress_hook

    dist.init_process_group()
    torch.manual_seed(0 if rank == 0 else 100 + rank)
    model = _reversed_net(nn)
    params = list(model.parameters())
    ready = _record_ready_order(params)
    ddp = DDP(model, bucket_cap_mb=CAP_MB)
    if hook == "fp16":
        ddp.register_comm_hook(None, fp16_compress_hook)
    construction = ddp.reducer.bucket_param_indices
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    first_order = None
    with ddp.join(divide_by_initial_world_size=divide):
        for x, y in _rank_batches(torch, rank, counts[rank]):
            opt.zero_grad()
            nn.functional.cross_entropy(ddp(x), y).backward()
            opt.step()
            first_order = first_order or list(ready)
    result = dict(
        params=[p.detach().numpy() for p in params],
        construction=construction,
        layout=ddp.reducer.bucket_param_indices,
        own=first_order and _expected_layout(params, first_order),
    )
    dist.destroy_process_group()
    return result


def _join_single(counts, divide):
    """Step t uses the batches of the ranks that still have one; their mean gradient,
    scaled by (ranks still training / world size) if ``divide``."""
    import disttorch as torch
    from disttorch import nn

    torch.manual_seed(0)
    model = _reversed_net(nn)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = [_rank_batches(torch, r, n) for r, n in enumerate(counts)]
    for t in range(max(counts)):
        active = [d[t] for d in data if t < len(d)]
        x, y = torch.cat([a[0] for a in active]), torch.cat([a[1] for a in active])
        scale = len(active) / len(counts) if divide else 1.0
        opt.zero_grad()
        (nn.functional.cross_entropy(model(x), y) * scale).backward()
        opt.step()
    return [p.detach().numpy() for p in model.parameters()]


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    "counts,divide,hook",
    [
        ((1, 0, 4), True, None),  # rank 0 joins after one step, before the rebuild
        ((1, 0, 4), False, None),
        ((0, 2, 3), True, None),  # rank 0 never trains: its (construction) order wins
        ((0, 2, 3), False, None),
        ((1, 0, 4), False, "fp16"),  # the correction also applies to a hook's result
    ],
    ids=[
        "rank0-joins-first-initial",
        "rank0-joins-first-active",
        "rank0-idle-initial",
        "rank0-idle-active",
        "rank0-joins-first-active-fp16",
    ],
)
def test_join_divides_by_initial_or_active_ranks_and_keeps_one_bucket_layout(counts, divide, hook):
    results = run_ranks(_join_run, 3, args=(counts, divide, hook), timeout=75)
    r0 = results[0]
    for r in results:
        assert all(np.array_equal(a, b) for a, b in zip(r["params"], r0["params"])), (
            "replicas differ after join"
        )
        assert r["layout"] == r0["layout"], "ranks disagree on the bucket layout"
    if counts[0]:
        assert r0["layout"] == r0["own"] != r0["construction"]
    else:
        assert r0["layout"] == r0["construction"] != results[1]["own"]
    tol = 1e-3 if hook == "fp16" else 1e-5
    assert _max_rel(r0["params"], _join_single(counts, divide)) <= tol
    # the two divisors really give different results here
    assert _max_rel(r0["params"], _join_single(counts, not divide)) > 100 * tol


def _two_losses(torch, net, x, y):
    """A step of two backward passes, the second reaching only ``a`` (the others unused)."""
    yield torch.nn.functional.cross_entropy(net(x), y)
    yield net.a(x).square().mean()


def _manual_run(rank, world):
    """Lightning's manual optimisation: the backward passes run inside DDP's forward (the
    training step), each after ``reducer._rebuild_buckets()`` and a re-arming
    ``reducer.prepare_for_backward([loss])``, the reducer reached as
    ``torch._C._distributed_c10d.Reducer``."""
    import disttorch as torch
    import disttorch.distributed as dist
    from disttorch import nn
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    class TrainingStep(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = _reversed_net(nn)

        def forward(self, x, y):
            for loss in _two_losses(torch, self.net, x, y):
                reducer = ddp.reducer
                rebuilt.append(reducer._rebuild_buckets())
                reducer.prepare_for_backward([loss])
                loss.backward()
                opt.step()
                opt.zero_grad()

    dist.init_process_group()
    torch.manual_seed(0)
    step = TrainingStep()
    ddp = DDP(step, bucket_cap_mb=CAP_MB, find_unused_parameters=True)
    opt = torch.optim.SGD(step.parameters(), lr=0.1)
    rebuilt = []
    for x, y in _batches(torch, world, 4, 3):
        sl = slice(rank * 4, (rank + 1) * 4)
        ddp(x[sl], y[sl])
    result = dict(
        is_reducer=isinstance(ddp.reducer, torch._C._distributed_c10d.Reducer),
        rebuilt=rebuilt,
        params=[p.detach().numpy() for p in step.parameters()],
    )
    dist.destroy_process_group()
    return result


def _manual_single(world):
    import disttorch as torch

    torch.manual_seed(0)
    net = _reversed_net(torch.nn)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in _batches(torch, world, 4, 3):
        for loss in _two_losses(torch, net, x, y):
            loss.backward()
            opt.step()
            opt.zero_grad()
    return [p.detach().numpy() for p in net.parameters()]


@pytest.mark.timeout(90)
def test_manual_backward_re_arms_the_reducer_as_lightning_does():
    r0, r1 = run_ranks(_manual_run, 2, timeout=75)
    assert r0["is_reducer"] and r1["is_reducer"]
    # the buckets are rebuilt once, before the second backward pass, on both ranks
    assert r0["rebuilt"] == r1["rebuilt"] == [False, True, False, False, False, False]
    assert _max_rel(r0["params"], r1["params"]) == 0
    assert _max_rel(r0["params"], _manual_single(2)) <= 1e-5
