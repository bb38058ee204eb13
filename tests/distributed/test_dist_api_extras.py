"""The smaller names of ``torch.distributed`` on real processes, as PyTorch 2.13 answers them
(measured under ``torch.distributed.run`` with gloo): ``send_object_list``/``recv_object_list``,
``new_subgroups`` and ``new_subgroups_by_enumeration``, ``get_pg_count``,
``get_node_local_rank``, ``get_backend_config``, the debug level, and the deprecated
``all_reduce_coalesced``/``all_gather_coalesced`` (one collective over the tensors laid end to
end, a ``FutureWarning`` each, a ``Future`` when asynchronous)."""

from __future__ import annotations

import os
import warnings

import pytest

from dist_helpers import run_ranks


def _error(fn) -> str:
    try:
        fn()
    except (ValueError, RuntimeError) as e:
        return f"{type(e).__name__}: {e}"
    return "no error"


def _worker(rank: int, world: int) -> dict:
    import disttorch as torch
    import disttorch.distributed as dist

    before = dist.get_pg_count()
    dist.init_process_group("gloo")
    out: dict = {"count0": (before, dist.get_pg_count()), "config": dist.get_backend_config()}
    out["local"] = dist.get_node_local_rank(fallback_rank=7) == int(os.environ.get("LOCAL_RANK", 7))
    objs = [{"a": 1}, [2, 3], "x" * 1000] if rank == 0 else [None] * 3
    if rank == 0:
        dist.send_object_list(objs, dst=1)
        out["sender"] = None
    else:
        out["sender"] = dist.recv_object_list(objs, src=None)
    out["objs"] = objs
    out["self_send"] = _error(lambda: dist.recv_object_list([None], src=rank))
    cur, subs = dist.new_subgroups(group_size=1)
    out["sub"] = (dist.get_process_group_ranks(cur), len(subs), dist.get_pg_count())
    cur, subs = dist.new_subgroups_by_enumeration([[1], [0]])
    out["enum"] = (dist.get_process_group_ranks(cur), subs.index(cur), dist.get_pg_count())
    out["errors"] = [
        _error(lambda: dist.new_subgroups()),
        _error(lambda: dist.new_subgroups(group_size=3)),
        _error(lambda: dist.new_subgroups_by_enumeration([[0, 1], [1]])),
    ]
    ts = [torch.ones(2) * (rank + 1), torch.arange(3.0).reshape(3, 1)[:, 0]]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist.all_reduce_coalesced(ts)
        outs = [[torch.zeros(2), torch.zeros(1, dtype=torch.float32)] for _ in range(world)]
        fut = dist.all_gather_coalesced(
            outs, [torch.ones(2) * rank, torch.ones(1) * (rank + 5)], async_op=True
        )
        fut.wait()
    out["coalesced"] = [t.tolist() for t in ts]
    out["gathered"] = [[t.tolist() for t in row] for row in outs]
    out["warnings"] = sorted({(w.category.__name__, str(w.message)[:40]) for w in caught})
    out["mixed"] = _error(
        lambda: dist.all_reduce_coalesced([torch.ones(1), torch.ones(1, dtype=torch.float64)])
    )
    out["debug"] = (repr(dist.get_debug_level()), int(dist.DebugLevel.DETAIL), str(dist.DebugLevel.INFO))
    dist.destroy_process_group()
    return out


@pytest.fixture(scope="module")
def ranks() -> list:
    return run_ranks(_worker, 2, timeout=120)


def test_object_lists_travel_point_to_point(ranks):
    assert ranks[1]["objs"] == [{"a": 1}, [2, 3], "x" * 1000]
    assert ranks[1]["sender"] == 0
    for out in ranks:
        assert out["self_send"].startswith(
            "ValueError: Invalid source rank: source rank should not be the same as the rank of the current process"
        )


def test_subgroups_and_the_group_count(ranks):
    for rank, out in enumerate(ranks):
        assert out["count0"] == (0, 1)
        assert out["sub"] == ([rank], 2, 3)
        assert out["enum"] == ([rank], 1 - rank, 5)
        assert out["errors"] == [
            "ValueError: Default group size only takes effect when CUDA is available.If your subgroup "
            "using a backend that does not depend on CUDA,please pass in 'group_size' correctly.",
            "ValueError: The arg 'group_size' (3) must not exceed the world size (2)",
            "ValueError: Rank 1 has appeared in both subgroup [0, 1] and [1]",
        ]


def test_coalesced_collectives_reduce_and_gather_every_tensor(ranks):
    for out in ranks:
        assert out["coalesced"] == [[3.0, 3.0], [0.0, 2.0, 4.0]]
        assert out["gathered"] == [[[0.0, 0.0], [5.0]], [[1.0, 1.0], [6.0]]]
        assert [name for name, _ in out["warnings"]] == ["FutureWarning", "FutureWarning"]
        assert out["mixed"].startswith("ValueError: Invalid usage of tensors with different dtypes")


def test_launch_facts_and_debug_level(ranks):
    for out in ranks:
        assert out["config"] == "cpu:gloo,cuda:gloo"
        assert out["local"]
        assert out["debug"] == ("<DebugLevel.OFF: 0>", 2, "DebugLevel.INFO")


def test_debug_level_comes_from_the_environment(monkeypatch):
    import disttorch.distributed as dist
    from disttorch.distributed import debug

    monkeypatch.setattr(debug, "_level", None)
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "detail")
    assert dist.get_debug_level() is dist.DebugLevel.DETAIL
    monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "loud")
    with pytest.raises(ValueError, match="must be OFF, INFO, or DETAIL"):
        dist.set_debug_level_from_env()
    assert dist.get_debug_level() is dist.DebugLevel.DETAIL
    dist.set_debug_level(dist.DebugLevel.INFO)
    assert dist.get_debug_level() is dist.DebugLevel.INFO
    with pytest.raises(TypeError, match="DebugLevel"):
        dist.set_debug_level(2)


def test_node_local_rank_needs_the_variable_or_a_fallback(monkeypatch):
    import disttorch.distributed as dist

    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert dist.get_node_local_rank(fallback_rank=3) == 1


def test_grad_bucket_is_the_hooks_bucket():
    import disttorch.distributed as dist
    from disttorch.nn.parallel import comm_hooks

    assert comm_hooks.GradBucket is dist.GradBucket


@pytest.mark.parametrize(
    "first",
    [
        "import disttorch.distributed.groups as m",
        "from disttorch.distributed.algorithms.ddp_comm_hooks import default_hooks as m",
        "import disttorch.distributed.store as m",
        "m = __import__('disttorch.distributed').distributed",
    ],
)
def test_a_submodule_imported_first_is_the_one_the_package_names_use(first):
    # the package loads its floors on first use: a submodule whose import started that load
    # is not run a second time (two `groups`: init_process_group in one, the default group
    # looked for in the other)
    import subprocess
    import sys

    code = (
        f"import sys\n{first}\n"
        "import disttorch.distributed as dist\n"
        "from disttorch.distributed import groups\n"
        "assert dist.init_process_group is groups.init_process_group\n"
        "assert sys.modules['disttorch.distributed.groups'] is groups\n"
        "assert m is sys.modules[m.__name__] and type(m.__spec__.loader).__name__ == 'SourceFileLoader'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr
