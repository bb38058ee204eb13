"""``mp.spawn`` gives a job without a secret one fresh secret for all its children, so a process
of this host without it (another user's) cannot reach their store; it leaves the environment's
secret, a multi-node job's store and a store this process made without a secret alone."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap

import pytest

from disttorch.distributed.base import auth

from dist_helpers import REPO, free_port

OUTSIDER = textwrap.dedent(
    """
    import sys
    from datetime import timedelta
    import disttorch.distributed as dist
    try:
        store = dist.TCPStore("127.0.0.1", int(sys.argv[1]), is_master=False, timeout=timedelta(seconds=10))
        print("OUTSIDER", "read", store.num_keys())
    except Exception as e:
        print("OUTSIDER", "refused", type(e).__name__)
    """
)

JOB = textwrap.dedent(
    """
    import os, subprocess, sys
    from datetime import timedelta
    import disttorch.distributed as dist
    import disttorch.multiprocessing as mp

    def spawned_group(rank, port, outsider):
        dist.init_process_group("gloo", rank=rank, world_size=2)
        if rank == 0:
            env = {k: v for k, v in os.environ.items() if k != "DISTTORCH_JOB_SECRET"}
            probe = subprocess.run([sys.executable, "-c", outsider, str(port)], env=env,
                                   capture_output=True, text=True, timeout=60)
            print("SECRET", len(os.environ.get("DISTTORCH_JOB_SECRET", "")), probe.stdout.strip(), flush=True)
        dist.barrier()
        dist.destroy_process_group()

    def parents_store(rank, port, _):
        store = dist.TCPStore("127.0.0.1", port, is_master=False, timeout=timedelta(seconds=30))
        store.set(f"child{rank}", "here")
        print("CHILD", rank, "SECRET", "DISTTORCH_JOB_SECRET" in os.environ, flush=True)

    if __name__ == "__main__":
        how, port = sys.argv[1], int(sys.argv[2])
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        if how == "parents_store":
            store = dist.TCPStore("127.0.0.1", port, is_master=True, timeout=timedelta(seconds=30))
            mp.spawn(parents_store, args=(port, None), nprocs=2)
            print("PARENT", sorted(store.get(f"child{r}").decode() for r in range(2)), flush=True)
        else:
            mp.spawn(spawned_group, args=(port, sys.argv[3]), nprocs=2)
    """
)


def _job(tmp_path, *args: str) -> str:
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISTTORCH_JOB_SECRET", "MASTER_"))}
    env["PYTHONPATH"] = os.pathsep.join([REPO, env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    return out.stdout


@pytest.mark.timeout(180)
def test_spawned_ranks_share_a_fresh_secret_and_refuse_a_process_without_it(tmp_path):
    out = _job(tmp_path, "group", str(free_port()), OUTSIDER)
    assert "SECRET 64 OUTSIDER refused" in out, out


@pytest.mark.timeout(180)
def test_children_join_the_parents_store_made_without_a_secret(tmp_path):
    out = _job(tmp_path, "parents_store", str(free_port()))
    assert "PARENT ['here', 'here']" in out, out
    assert out.count("SECRET False") == 2, out


@pytest.mark.parametrize(
    "env, fresh",
    [
        ({}, True),
        ({"MASTER_ADDR": "localhost"}, True),
        ({"MASTER_ADDR": "127.0.0.1"}, True),
        ({"MASTER_ADDR": "[::1]"}, True),
        ({"MASTER_ADDR": "10.1.2.3"}, False),  # a multi-node job: its nodes could not share a fresh one
        ({"MASTER_ADDR": "node7.cluster"}, False),
        ({"DISTTORCH_JOB_SECRET": "ab" * 32}, False),  # the environment's secret is kept
        ({"made without a secret": True}, False),  # a store or peer of this process has none
    ],
)
def test_when_the_children_get_a_fresh_secret(monkeypatch, env, fresh):
    spawn = importlib.import_module(
        "disttorch.multiprocessing.spawn"
    )  # (the package's spawn is the function)
    monkeypatch.setattr(auth, "_configured_without_secret", env.pop("made without a secret", False))
    for name in ("DISTTORCH_JOB_SECRET", "MASTER_ADDR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    secret = spawn._children_secret()
    assert (secret is not None) == fresh
    if fresh:
        assert len(secret) == 64 and secret != spawn._children_secret()
