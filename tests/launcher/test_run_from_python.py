"""``torch.distributed.run`` called from Python, as accelerate's ``accelerate launch
--multi_gpu`` calls it: torchrun's parser, ``run(namespace)`` launching the job with
``disttorch-launch`` and waiting, ``ChildFailedError`` naming the rank that failed."""

from __future__ import annotations

import argparse

import pytest

from disttorch.distributed import run
from disttorch.distributed.elastic.multiprocessing.errors import ChildFailedError

from dist_helpers import free_port

SCRIPT = """
import os, sys
import numpy as np
import disttorch.distributed as dist
dist.init_process_group()
rank = dist.get_rank()
if sys.argv[2] == "fail" and rank == 1:
    raise ValueError("rank 1 refuses to go on")
x = np.full(3, float(rank + 1))
dist.all_reduce(x)
with open(os.path.join(sys.argv[1], f"rank{rank}.txt"), "w") as f:
    f.write(f"{dist.get_world_size()} {x.tolist()}")
dist.destroy_process_group()
"""


@pytest.fixture
def script(tmp_path, monkeypatch):
    for name in ("DISTTORCH_JOB_SECRET", "DISTTORCH_RUN_ID", "RANK", "WORLD_SIZE", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    return path


def _namespace(script, out, how: str) -> argparse.Namespace:
    return run.parse_args(
        ["--nproc-per-node", "2", "--master-port", str(free_port()), str(script), str(out), how]
    )


@pytest.mark.timeout(120)
def test_run_launches_the_job_a_namespace_describes_and_waits(script, tmp_path):
    assert run.run(_namespace(script, tmp_path, "ok")) is None
    for rank in (0, 1):
        assert (tmp_path / f"rank{rank}.txt").read_text() == "2 [3.0, 3.0, 3.0]"


@pytest.mark.timeout(120)
def test_run_raises_child_failed_error_naming_the_rank_that_failed(script, tmp_path):
    with pytest.raises(ChildFailedError) as info:
        run.run(_namespace(script, tmp_path, "fail"))
    assert set(info.value.failures) <= {0, 1}  # rank 0 may fail of rank 1's exit: it is listed too
    assert info.value.get_first_failure()[0] == 1  # the root cause, as the launcher's report says
    failure = info.value.failures[1]
    assert failure.local_rank == 1 and failure.exitcode == 1 and failure.pid > 0
    assert "ValueError: rank 1 refuses to go on" in failure.message
    assert "ValueError: rank 1 refuses to go on" in str(info.value)


def test_a_namespace_a_library_built_reads_none_and_false_as_the_defaults():
    given = vars(run.parse_args(["t.py"]))
    given.update(
        module=None, no_python=None, log_dir=None, nproc_per_node="2", training_script_args=["--lr", "0.1"]
    )
    ns = argparse.Namespace(**given)
    assert run._launcher_argv(ns) == ["--nproc-per-node", "2", "t.py", "--lr", "0.1"]
    ns.module, ns.standalone, ns.tee = True, True, "3"
    assert run._launcher_argv(ns) == [
        "--nproc-per-node",
        "2",
        "--standalone",
        "-m",
        "-t",
        "3",
        "t.py",
        "--lr",
        "0.1",
    ]


def test_an_option_the_launcher_lacks_is_refused_naming_it():
    ns = run.parse_args(["--numa-binding", "node", "--local-addr", "10.0.0.1", "t.py"])
    with pytest.raises(ValueError, match=r"no counterpart for --local-addr, --numa-binding"):
        run._launcher_argv(ns)


@pytest.mark.parity
def test_the_parser_is_torchruns(torch, monkeypatch):
    for name in ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_MASTER_ADDR", "PET_MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    from torch.distributed.run import get_args_parser

    def table(parser):
        return [(a.dest, sorted(a.option_strings), a.default) for a in parser._actions if a.dest != "help"]

    assert table(run.get_args_parser()) == table(get_args_parser())
