"""torch.distributed.autograd and DistributedOptimizer on real processes: gradients that
cross RPC calls (arguments, results, remote() + to_here) equal the local model's, and
PyTorch's when it is installed."""

from __future__ import annotations

import numpy as np
import pytest

from dist_helpers import run_ranks

A, B, W = [1.0, 2.0, 3.0], [0.1, 0.2, -0.3], [0.5, -1.0, 2.0]


def _distributed(rank: int, world: int) -> dict:
    import rpc_helpers as h

    import disttorch as dt
    import disttorch.distributed.autograd as dist_autograd
    from disttorch.distributed import rpc
    from disttorch.distributed.optim import DistributedOptimizer

    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world)
    out: dict = {}
    if rank == 0:
        w_rref = rpc.rpc_sync("worker1", h.make_weight, args=(W,))
        a = dt.tensor(A, dtype=dt.float64, requires_grad=True)
        b = dt.tensor(B, dtype=dt.float64, requires_grad=True)
        with dist_autograd.context() as cid:
            c = rpc.rpc_sync("worker1", dt.mul, args=(a, b))  # arguments that require grad
            d = rpc.rpc_sync("worker1", h.times_weight, args=(c,))  # a parameter of worker 1
            e = rpc.remote("worker1", h.times_weight, args=(a,)).to_here()  # remote() and to_here
            loss = (d * a).sum() + d.pow(2).sum() + e.sum()
            dist_autograd.backward(cid, [loss])
            grads = dist_autograd.get_gradients(cid)
            out["grads"] = [grads[a].tolist(), grads[b].tolist()]
            out["grads"].append(rpc.rpc_sync("worker1", h.weight_grad, args=(cid,)).tolist())
            out["dot_grad"] = a.grad  # gradients stay in the context
            try:
                dist_autograd.backward(cid, [d])
            except RuntimeError as err:
                out["not_scalar"] = str(err)
        try:
            dist_autograd.get_gradients(cid)
        except RuntimeError as err:
            out["released"] = (str(err), cid)
        with dist_autograd.context() as cid:  # retain_graph: the graph may be run again
            y = rpc.rpc_sync("worker1", h.times_weight, args=(a,))
            loss = (y * y).sum()
            dist_autograd.backward(cid, [loss], retain_graph=True)
            first = dist_autograd.get_gradients(cid)[a].tolist()
            dist_autograd.backward(cid, [loss])
            out["retained"] = [first, dist_autograd.get_gradients(cid)[a].tolist()]
            for key, root in (("freed", loss), ("freed_remote", y.sum())):
                try:
                    dist_autograd.backward(cid, [root])
                except RuntimeError as err:
                    out[key] = str(err)
        with dist_autograd.context() as cid:
            loss = rpc.rpc_sync("worker1", h.times_weight, args=(a,)).sum()
            dist_autograd.backward(cid, [loss])
            DistributedOptimizer(dt.optim.SGD, [w_rref], lr=0.5).step(cid)
        out["stepped"] = rpc.rpc_sync("worker1", h.weight_value).tolist()
    rpc.shutdown()
    return out


def _local(lib) -> list:
    """The same model in one process, with ``lib`` (disttorch or PyTorch)."""
    a = lib.tensor(A, dtype=lib.float64, requires_grad=True)
    b = lib.tensor(B, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(W, dtype=lib.float64, requires_grad=True)
    d = a * b * w
    ((d * a).sum() + d.pow(2).sum() + (a * w).sum()).backward()
    return [a.grad.tolist(), b.grad.tolist(), w.grad.tolist()]


@pytest.fixture(scope="module")
def distributed() -> dict:
    return run_ranks(_distributed, 2, timeout=90)[0]


def test_gradients_across_rpc_equal_the_local_models(distributed):
    import disttorch as dt

    np.testing.assert_allclose(np.array(distributed["grads"]), np.array(_local(dt)), rtol=1e-12)
    assert distributed["dot_grad"] is None


@pytest.mark.parity
def test_gradients_across_rpc_equal_pytorchs(distributed, torch):
    np.testing.assert_allclose(np.array(distributed["grads"]), np.array(_local(torch)), rtol=1e-12)


def test_a_context_is_released_when_it_exits(distributed):
    text, cid = distributed["released"]
    assert text == f"Could not find autograd context with id: {cid}"
    assert distributed["not_scalar"] == "root 0 of shape (3,) is not a scalar, all roots need to be scalar"


def test_distributed_optimizer_steps_the_owners_parameters(distributed):
    np.testing.assert_allclose(distributed["stepped"], np.array(W) - 0.5 * np.array(A), rtol=1e-12)


def test_retain_graph_lets_a_context_run_backward_again(distributed):
    first, second = distributed["retained"]
    np.testing.assert_allclose(first, 2 * (np.array(A) * np.array(W) ** 2), rtol=1e-12)
    np.testing.assert_allclose(second, 2 * np.array(first), rtol=1e-12)


def test_without_retain_graph_a_second_backward_raises_pytorchs_error(distributed):
    again = "Trying to backward through the graph a second time"
    assert distributed["freed"].startswith("Error on Node 0: " + again)
    # the local part had nothing to free: the error comes from worker 1's part, as in PyTorch
    assert distributed["freed_remote"].startswith("Error on Node 0: ")
    assert "Error on Node 1: " + again in distributed["freed_remote"]
