"""``torch.distributed`` names libraries import at load: ``ReduceOp.RedOpType``,
``constants``, ``rpc`` (available, with its ``api`` module), ``algorithms.join`` (its
joinables run in ``tests/distributed/test_join.py``) and the functional collectives (run on
two real ranks)."""

from __future__ import annotations

import pytest

import disttorch.distributed as dist
from disttorch.distributed import _functional_collectives as funcol
from disttorch.distributed import constants, rpc
from disttorch.distributed.algorithms.join import Join, Joinable

from dist_helpers import run_ranks


def test_names_answer_as_pytorch_cpu_build():
    assert dist.ReduceOp.RedOpType.SUM == dist.ReduceOp.SUM and isinstance(
        dist.ReduceOp.MAX, dist.ReduceOp.RedOpType
    )
    assert constants.default_pg_timeout.total_seconds() == 1800
    assert rpc.is_available() is True and hasattr(rpc, "api")


def test_join_needs_joinables_that_implement_its_members():
    class Partial(Joinable):
        def join_hook(self, **kwargs):
            return None

    with pytest.raises(TypeError, match="abstract"):
        Partial()
    with pytest.raises(ValueError, match="at least one joinable"):
        Join([])


def _functional(rank: int, world: int) -> list:
    import disttorch as dt

    dist.init_process_group("gloo")
    x = dt.tensor([float(rank + 1), 10.0 * (rank + 1)])
    out = [funcol.all_reduce(x, "sum", None).tolist(), x.tolist()]
    out.append(funcol.all_gather_tensor(x.view(1, 2), 0, None).tolist())
    out.append(funcol.reduce_scatter_tensor(x, "sum", 0, None).tolist())
    out.append(funcol.wait_tensor(funcol.broadcast(x, 1, None)).tolist())
    y = (dt.arange(2.0) + rank).requires_grad_()
    moved = funcol.all_to_all_single_autograd(y, None, None, None)
    (moved * dt.tensor([1.0, 2.0])).sum().backward()
    return [*out, moved.tolist(), y.grad.tolist()]


@pytest.mark.timeout(120)
def test_functional_collectives_on_two_ranks():
    results = run_ranks(_functional, 2, timeout=90)
    assert results[0][:5] == [[3.0, 30.0], [1.0, 10.0], [[1.0, 10.0], [2.0, 20.0]], [3.0], [2.0, 20.0]]
    assert results[1][3] == [30.0]
    assert results[0][5] == [0.0, 1.0] and results[1][5] == [1.0, 2.0]
    assert results[0][6] == [1.0, 1.0] and results[1][6] == [2.0, 2.0]


def test_old_tensor_package_name_is_the_new_one():
    """``torch.distributed._tensor`` (opacus imports it) is ``torch.distributed.tensor``, its
    ``experimental`` submodule included, with ``implicit_replication``."""
    import disttorch.distributed.tensor as new
    from disttorch.distributed._tensor import DTensor, Shard
    from disttorch.distributed._tensor.experimental import implicit_replication

    assert DTensor is new.DTensor and Shard is new.Shard
    with implicit_replication() as entered:
        assert entered is None
