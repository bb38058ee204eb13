"""How many threads each rank runs, and the start table that says so and why (issue 26
point 11); ``--nproc auto`` with ``--cores-per-rank``."""

import os
import re

import pytest

from disttorch.launcher.cli import parse_args
from disttorch.launcher.devices import format_plan, plan_cores, plan_threads

from launcher_scripts.harness import SCRIPTS, launch

ENV_DUMP = SCRIPTS / "env_dump.py"


def test_a_rank_runs_one_thread_per_core_it_has():
    plan = plan_cores(1, None, None, usable=[0, 1, 2, 3])
    threads = plan_threads(plan, {})
    assert threads.count == 4 and threads.why == "one per core: 4 usable cores / 1 rank"
    assert threads.env == {"OMP_NUM_THREADS": "4", "OPENBLAS_NUM_THREADS": "4", "MKL_NUM_THREADS": "4"}
    plan = plan_cores(2, 1, None, usable=[0, 1, 2, 3])
    assert (
        plan_threads(plan, {}).count == 1 and plan_threads(plan, {}).why == "one per core: --cores-per-rank 1"
    )


def test_more_ranks_than_cores_are_said_to_take_turns():
    assert plan_cores(8, None, None, usable=[0, 1]).note == (
        "not pinned: 8 ranks share 2 usable cores and take turns on them (--nproc auto runs one rank per core)"
    )
    assert plan_cores(2, 2, None, usable=[0, 1]).note == "not pinned: 2 ranks x 2 cores > 2 usable cores"
    assert plan_cores(1, 4, None, usable=[0, 1]).note == "not pinned: 1 rank x 4 cores > 2 usable cores"


def test_the_users_omp_num_threads_is_every_library_s_count():
    plan = plan_cores(2, None, None, usable=[0, 1, 2, 3])
    threads = plan_threads(plan, {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "5"})
    assert threads.count == 3 and threads.why == "OMP_NUM_THREADS=3 from your environment"
    assert threads.env == {"OPENBLAS_NUM_THREADS": "3"}  # MKL_NUM_THREADS: the user's own


def test_the_start_table_gives_each_rank_its_threads_and_why():
    plan = plan_cores(2, None, None, usable=[0, 1, 2, 3])
    lines = format_plan(plan, [0, 1], plan_threads(plan, {}))
    assert lines[0] == "cores: 4 usable (0-3), 2 per rank (4 usable cores / 2 ranks), pinned"
    assert lines[1].startswith(
        "threads: 2 per rank (one per core: 4 usable cores / 2 ranks); OMP_NUM_THREADS=2"
    )
    assert re.fullmatch(r"\s+1\s+1\s+2\s+2-3", lines[-1])


@pytest.mark.parametrize("cores_per_rank", [None, "2", "5"])
def test_nproc_auto_is_one_rank_per_cores_per_rank(cores_per_rank):
    usable = len(os.sched_getaffinity(0))
    extra = ["--cores-per-rank", cores_per_rank] if cores_per_rank else []
    config = parse_args(["--nproc", "auto", *extra, "--no-bind-cores", str(ENV_DUMP)])
    assert config.nproc == max(1, usable // int(cores_per_rank or 1))


@pytest.mark.timeout(60)
def test_the_launched_rank_is_told_its_threads(tmp_path):
    usable = len(os.sched_getaffinity(0))
    result = launch("--nproc", 1, ENV_DUMP, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"threads: {usable} per rank (one per core: {usable} usable cores / 1 rank)" in result.stderr
