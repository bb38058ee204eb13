"""disttorch-launch on one node: environment, ranks, output, failures, signals, restarts, clean-up.

Every test runs the real launcher (``python -m disttorch.launcher``) on small scripts from
tests/launcher_scripts and checks what it printed, returned and left behind.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from disttorch.launcher.cli import build_parser, parse_args
from disttorch.launcher.devices import blas_note, cpu_flags

from launcher_scripts.harness import (
    ROOT,
    SCRIPTS,
    assert_all_gone,
    command,
    launch,
    launcher_env,
    recorded_pids,
    start,
    wait_for_files,
)

FAIL = SCRIPTS / "fail.py"
ENV_DUMP = SCRIPTS / "env_dump.py"


def read_env(out: Path, rank: int, attempt: int = 0) -> dict:
    return json.loads((out / f"rank{rank}_attempt{attempt}.json").read_text())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("nproc", [1, 4])
def test_environment_and_ranks(tmp_path, nproc):
    result = launch("--nproc-per-node", nproc, ENV_DUMP, tmp_path)
    assert result.returncode == 0, result.stderr
    envs = [read_env(tmp_path, r) for r in range(nproc)]
    usable = len(os.sched_getaffinity(0))
    per_rank = max(1, usable // nproc)
    for rank, env in enumerate(envs):
        assert env["RANK"] == env["LOCAL_RANK"] == env["ROLE_RANK"] == str(rank)
        assert env["WORLD_SIZE"] == env["LOCAL_WORLD_SIZE"] == env["ROLE_WORLD_SIZE"] == str(nproc)
        assert env["GROUP_RANK"] == "0" and env["GROUP_WORLD_SIZE"] == "1" and env["ROLE_NAME"] == "default"
        assert env["MASTER_ADDR"] == "127.0.0.1"
        assert env["TORCHELASTIC_RESTART_COUNT"] == env["DISTTORCH_RESTART_COUNT"] == "0"
        assert env["TORCHELASTIC_MAX_RESTARTS"] == env["DISTTORCH_MAX_RESTARTS"] == "0"
        assert env["TORCHELASTIC_RUN_ID"] == env["DISTTORCH_RUN_ID"]
        assert env["TORCHELASTIC_USE_AGENT_STORE"] == "False"  # (rank 0 hosts the job's store)
        assert env["TORCHELASTIC_SIGNALS_TO_HANDLE"] == "SIGTERM,SIGINT,SIGHUP"
        assert env["TORCHELASTIC_ERROR_FILE"].endswith("error.json") and env["error_dir_exists"]
        assert re.fullmatch(r"[0-9a-f]{64}", env["DISTTORCH_JOB_SECRET"])
        assert env["DISTTORCH_TRACE_DIR"] is None and env["DISTTORCH_FAULT"] is None
        assert (
            env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == str(per_rank)
        )
        assert env["main"] == "__main__" and env["argv"] == [str(ENV_DUMP), str(tmp_path)]
        if nproc * per_rank <= usable:  # pinned: each rank on its own cores
            assert env["cores"] == sorted(os.sched_getaffinity(0))[rank * per_rank : (rank + 1) * per_rank]
            assert env["DISTTORCH_CPU_AFFINITY"] == ",".join(map(str, env["cores"]))
        else:
            assert env["DISTTORCH_CPU_AFFINITY"] is None and env["cores"] == sorted(os.sched_getaffinity(0))
    for name in ("MASTER_PORT", "DISTTORCH_RUN_ID", "DISTTORCH_JOB_SECRET"):
        assert len({env[name] for env in envs}) == 1, f"{name} differs between ranks"
    assert len({env["TORCHELASTIC_ERROR_FILE"] for env in envs}) == nproc
    assert 0 < int(envs[0]["MASTER_PORT"]) < 65536
    assert len({env["DISTTORCH_ERROR_FILE"] for env in envs}) == nproc
    assert "[launcher] run " in result.stderr and "cores:" in result.stderr  # the assignment table, once
    assert result.stderr.count("cores:") == 1
    assert ("all 4 ranks exited 0" if nproc == 4 else "the rank exited 0") in result.stderr
    assert ("4 local ranks 0..3 of world 4" if nproc == 4 else "1 local rank 0 of world 1") in result.stderr


@pytest.mark.timeout(60)
def test_user_settings_win(tmp_path):
    result = launch(
        "--nproc",
        2,
        "--master-port",
        0,
        "--no-bind-cores",
        "--rdzv-id",
        "myjob",
        ENV_DUMP,
        tmp_path,
        env={"OMP_NUM_THREADS": "7", "DISTTORCH_JOB_SECRET": "ab" * 16},
    )
    assert result.returncode == 0, result.stderr
    env = read_env(tmp_path, 1)
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "7"
    assert "threads: 7 per rank (OMP_NUM_THREADS=7 from your environment)" in result.stderr
    assert env["DISTTORCH_JOB_SECRET"] == "ab" * 16 and env["DISTTORCH_RUN_ID"] == "myjob"
    assert env["DISTTORCH_CPU_AFFINITY"] is None and "--no-bind-cores" in result.stderr


def test_blas_note_names_a_kernel_pin_below_the_cpu(tmp_path):
    avx512 = {"avx2", "avx512f"}
    note = blas_note({"OPENBLAS_CORETYPE": "Haswell"}, avx512)
    assert note.startswith("blas: OPENBLAS_CORETYPE=Haswell pins NumPy's OpenBLAS to kernels without AVX-512")
    assert note.endswith("unset it")
    assert blas_note({"OPENBLAS_CORETYPE": "skylakex"}, avx512) is None  # an AVX-512 kernel set
    assert blas_note({"OPENBLAS_CORETYPE": "Haswell"}, {"avx2"}) is None  # the CPU has no AVX-512
    assert blas_note({}, avx512) is None and blas_note({"OPENBLAS_CORETYPE": " "}, avx512) is None
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f\n\nprocessor\t: 1\nflags\t\t: fpu\n")
    assert cpu_flags(str(cpuinfo)) == {"fpu", "avx2", "avx512f"}
    assert cpu_flags(str(tmp_path / "missing")) == set()


@pytest.mark.timeout(60)
def test_start_table_names_a_kernel_pin_and_passes_it_on(tmp_path):
    result = launch("--nproc", 1, ENV_DUMP, tmp_path, env={"OPENBLAS_CORETYPE": "Haswell"})
    assert result.returncode == 0, result.stderr
    shown = "[launcher] blas: OPENBLAS_CORETYPE=Haswell pins" in result.stderr
    assert shown == ("avx512f" in cpu_flags())  # exactly on CPUs with AVX-512
    assert read_env(tmp_path, 0)["OPENBLAS_CORETYPE"] == "Haswell"  # the user's choice, unchanged


@pytest.mark.timeout(60)
def test_output_prefixed_streams_apart_lines_whole(tmp_path):
    result = launch("--nproc", 3, SCRIPTS / "chatter.py", 40)
    assert result.returncode == 0, result.stderr
    out_lines = result.stdout.splitlines()
    err_lines = [line for line in result.stderr.splitlines() if not line.startswith("[launcher]")]
    for rank in range(3):
        mine = [line for line in out_lines if line.startswith(f"[rank{rank}]: ")]
        assert mine[:40] == [f"[rank{rank}]: out {rank} {i} " + "x" * 500 for i in range(40)]
        assert mine[40:] == [f"[rank{rank}]: last {rank} without newline"]
        assert [line for line in err_lines if line.startswith(f"[rank{rank}]: ")] == [
            f"[rank{rank}]: err {rank} {i} " + "y" * 300 for i in range(40)
        ]
    assert len(out_lines) == 3 * 41 and len(err_lines) == 3 * 40  # nothing else, nothing cut


@pytest.mark.timeout(60)
def test_carriage_returns_end_lines_so_progress_bars_keep_their_prefix(tmp_path):
    script = tmp_path / "progress.py"
    script.write_text(
        "import sys, time\n"
        "for i in range(3):\n"
        "    sys.stdout.write(f'\\rstep {i}'); sys.stdout.flush(); time.sleep(0.05)\n"
        "sys.stdout.write('\\ndos line\\r\\nend\\r')\n"
    )
    done = subprocess.run(
        command("--nproc", 1, script), cwd=ROOT, env=launcher_env(), capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        b"[rank0]: \r[rank0]: step 0\r[rank0]: step 1\r[rank0]: step 2\n[rank0]: dos line\r\n[rank0]: end\r\n"
    )


@pytest.mark.timeout(60)
def test_log_dir_redirects_and_filter(tmp_path):
    logs = tmp_path / "logs"
    result = launch(
        "--nproc",
        2,
        "--log-dir",
        logs,
        "--redirects",
        "1",
        "--local-ranks-filter",
        "1",
        "--rdzv-id",
        "job7",
        SCRIPTS / "chatter.py",
        3,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # stdout redirected to files for every rank
    assert (
        "[rank1]: err 1 0" in result.stderr and "[rank0]:" not in result.stderr
    )  # filter: local rank 1 only
    for rank in range(2):
        folder = logs / "job7" / "attempt_0" / str(rank)
        assert (folder / "stdout.log").read_text().splitlines()[0] == f"out {rank} 0 " + "x" * 500
        assert (folder / "stderr.log").read_text().splitlines()[2] == f"err {rank} 2 " + "y" * 300


@pytest.mark.timeout(60)
def test_tee_without_log_dir_uses_a_temporary_one(tmp_path):
    result = launch("--nproc", 1, "--tee", "3", SCRIPTS / "chatter.py", 1, env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "[rank0]: out 0 0" in result.stdout
    logs = Path(re.search(r"logs: (\S+)", result.stderr).group(1))
    assert logs.is_relative_to(tmp_path)
    assert (logs / "attempt_0" / "0" / "stdout.log").read_text().startswith("out 0 0 ")


def _since_every_rank_ran(pid_dir: Path) -> float:
    """Seconds since the last rank of a fail.py job recorded its pid (its failing rank fails
    then; the others would sleep 60 s): the start-up before is not the launcher's to bound and
    takes over 10 s on a loaded machine."""
    return time.time() - max(p.stat().st_mtime for p in pid_dir.glob("rank*.pid"))


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "mode, expected",
    [
        (
            "raise",
            [
                "exit       : exit code 1",
                "rank 1 was the first to fail: ValueError: rank 1 cannot go on",
                "traceback  :",
                "in deep_failure",
                'raise ValueError(f"rank {rank} cannot go on")',
            ],
        ),
        ("exit3", ["exit       : exit code 3", "no traceback: the process exited with code 3"]),
        ("kill9", ["exit       : signal SIGKILL (9)", "no traceback: killed by signal SIGKILL"]),
        ("segv", ["exit       : signal SIGSEGV (11)", "crashed in native code (SIGSEGV)"]),
    ],
)
def test_failing_rank_stops_the_rest_and_is_reported(tmp_path, mode, expected):
    result = launch("--nproc", 3, "--stop-delay", 0, FAIL, tmp_path, mode, 1, timeout=30)
    elapsed = _since_every_rank_ran(tmp_path)
    assert result.returncode == 1, result.stderr
    assert elapsed < 10, f"the launcher took {elapsed:.1f} s to stop the job"
    summary = result.stderr[result.stderr.index("job failed") :]
    assert "rank 1 was the first to fail" in summary
    assert "rank       : 1 (local rank 1 on node 0)" in summary
    pid = (tmp_path / "rank1.pid").read_text()
    assert f"pid        : {pid}" in summary
    for text in expected:
        assert text in summary, f"{text!r} missing from:\n{summary}"
    assert "  ranks 0,2: stopped by the launcher after rank 1 failed (signal SIGTERM (15))" in summary
    if mode == "segv":  # faulthandler printed the Python stack of the crashed rank
        assert "[rank1]: Fatal Python error: Segmentation fault" in result.stderr
    if mode == "raise":  # the rank's traceback starts at the script, as `python fail.py` shows it
        assert re.search(
            r"\[rank1\]: Traceback \(most recent call last\):\n\[rank1\]:   File \"[^\"]*fail\.py\"",
            result.stderr,
        ), result.stderr
    pids = recorded_pids(tmp_path)
    assert len(pids) == 5  # 3 ranks + the grandchildren of ranks 0 and 2
    assert_all_gone(pids)


@pytest.mark.timeout(60)
def test_root_cause_is_the_first_failure_and_the_others_errors_are_shown(tmp_path):
    # the wait ends as soon as the others have exited; 8 s only leaves room for a loaded machine
    result = launch("--nproc", 3, "--stop-delay", 8, FAIL, tmp_path, "cascade", 1, timeout=30)
    assert result.returncode == 1
    summary = result.stderr[result.stderr.index("job failed") :]
    assert "rank 1 was the first to fail" in summary and "exit       : signal SIGKILL (9)" in summary
    for rank in (0, 2):  # they ended on their own within --stop-delay: their errors are listed
        assert re.search(
            rf"rank {rank} +\(node 0, pid \d+\): failed, exit code 1: "
            rf"ConnectionError: rank {rank} lost its peer rank 1",
            summary,
        ), summary
    assert_all_gone(recorded_pids(tmp_path))


@pytest.mark.timeout(60)
def test_dump_stacks_shows_where_the_other_ranks_were(tmp_path):
    result = launch(
        "--nproc", 3, "--stop-delay", 0.2, "--dump-stacks", FAIL, tmp_path, "raise", 1, timeout=30
    )
    assert result.returncode == 1
    assert "ranks still running after the failure print their Python stacks" in result.stderr
    for rank in (0, 2):
        assert re.search(rf"\[rank{rank}\]:   File \".*fail\.py\", line \d+ in <module>", result.stderr), (
            result.stderr
        )
    assert "[rank1]:   File" not in result.stderr.split("print their Python stacks")[1]
    assert_all_gone(recorded_pids(tmp_path))


@pytest.mark.timeout(60)
def test_workers_ignoring_sigterm_are_killed_after_the_grace_period(tmp_path):
    result = launch(
        "--nproc", 3, "--stop-delay", 0, "--stop-grace", 1, FAIL, tmp_path, "stubborn", 1, timeout=30
    )
    assert result.returncode == 1
    assert 1.0 < _since_every_rank_ran(tmp_path) < 10
    assert "rank 1 was the first to fail" in result.stderr
    assert "ranks 0,2: stopped by the launcher after rank 1 failed (signal SIGKILL (9))" in result.stderr, (
        result.stderr
    )
    assert_all_gone(recorded_pids(tmp_path))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_to_launcher_stops_everything(tmp_path, sig, code):
    proc = start("--nproc", 2, FAIL, tmp_path, "sleep", -1)
    try:
        wait_for_files(tmp_path, "*.pid", 4)
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert time.monotonic() - sent < 10
    assert proc.returncode == code, err
    assert f"received {signal.Signals(sig).name}: stopped all workers" in err
    assert_all_gone(recorded_pids(tmp_path))


@pytest.mark.timeout(60)
def test_worker_dies_with_a_killed_launcher(tmp_path):
    tmp = tmp_path / "tmp"  # the launcher's run directory: it cannot remove it when killed
    tmp.mkdir()
    proc = start("--nproc", 2, FAIL, tmp_path, "lone", -1, env={"TMPDIR": str(tmp)})  # no grandchildren:
    # they would outlive a kill -9 of the launcher
    try:
        wait_for_files(tmp_path, "rank*.pid", 2)
        proc.kill()  # SIGKILL: the launcher cannot clean up, the workers' parent-death signal must
        proc.communicate(timeout=10)
        ranks = [int(p.read_text()) for p in tmp_path.glob("rank*.pid")]
        assert_all_gone(ranks, within=5)
    finally:
        proc.kill()


@pytest.mark.timeout(90)
def test_restarts_with_count_in_environment(tmp_path):
    result = launch("--nproc", 2, "--max-restarts", 2, ENV_DUMP, tmp_path, 0)
    assert result.returncode == 0, result.stderr
    assert "restarting the worker group: restart 1 of 2 (DISTTORCH_RESTART_COUNT=1" in result.stderr
    assert "failing on purpose on attempt 0" in result.stderr  # the first attempt's summary
    assert "restart 2 of 2" not in result.stderr
    first, second = read_env(tmp_path, 1, 0), read_env(tmp_path, 1, 1)
    assert first["DISTTORCH_RESTART_COUNT"] == "0" and second["DISTTORCH_RESTART_COUNT"] == "1"
    assert second["TORCHELASTIC_RESTART_COUNT"] == "1" and second["DISTTORCH_MAX_RESTARTS"] == "2"
    assert first["DISTTORCH_RUN_ID"] == second["DISTTORCH_RUN_ID"]


@pytest.mark.timeout(90)
def test_restarts_exhausted(tmp_path):
    result = launch("--nproc", 2, "--max-restarts", 1, "--stop-delay", 0, FAIL, tmp_path, "raise", 0)
    assert result.returncode == 1
    assert "job failed (attempt 1 of 2)" in result.stderr and "job failed (attempt 2 of 2)" in result.stderr
    last = result.stderr.rstrip().splitlines()[-1]
    assert "gave up after 1 restart; all 2 attempts failed the same way: " in last, last
    assert_all_gone(recorded_pids(tmp_path))


@pytest.mark.timeout(60)
def test_module_and_no_python():
    result = launch("--nproc", 2, "-m", "launcher_scripts.pkg.hello", "a", "--flag", cwd=SCRIPTS.parent)
    assert result.returncode == 0, result.stderr
    assert "[rank1]: module rank 1 argv ['a', '--flag'] name __main__" in result.stdout
    result = launch("--nproc", 2, "--no-python", "sh", "-c", 'echo "shell rank $RANK"')
    assert result.returncode == 0, result.stderr
    assert "[rank0]: shell rank 0" in result.stdout and "[rank1]: shell rank 1" in result.stdout


@pytest.mark.timeout(60)
def test_two_concurrent_jobs_do_not_clash(tmp_path):
    jobs = [start("--nproc", 3, SCRIPTS / "ping.py") for _ in range(2)]
    outputs = [job.communicate(timeout=40) for job in jobs]
    ports = set()
    for job, (out, err) in zip(jobs, outputs):
        assert job.returncode == 0, err
        heard = re.search(r"\[rank0\]: heard \[1, 2\] port (\d+)", out)
        assert heard, out
        ports.add(heard.group(1))
    assert len(ports) == 2


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "args, message",
    [
        (["--nproc-per-node", "0", "x.py"], "--nproc-per-node: expected an integer >= 1 or 'auto', got '0'"),
        (["--nproc", "two", "x.py"], "--nproc-per-node: expected an integer >= 1 or 'auto', got 'two'"),
        (["--nproc", "1", "no_such_script.py"], "script 'no_such_script.py' not found"),
        (
            ["--inject-fault", "explode:rank=1", str(ENV_DUMP)],
            "unknown action 'explode'; expected one of kill",
        ),
        (["--nproc", "2", "--inject-fault", "kill:rank=5:at=step:1", str(ENV_DUMP)], "rank 5 does not exist"),
        (
            ["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", "29999", str(ENV_DUMP)],
            "needs the same job secret on every node",
        ),
        (["--nnodes", "2", str(ENV_DUMP)], "--nnodes 2 needs --master-addr: the address of node 0"),
        (
            ["--nnodes", "2", "--master-addr", "10.0.0.1", "--master-port", "0", str(ENV_DUMP)],
            "--master-port 0: several nodes need a fixed port",
        ),
        (
            ["--nnodes", "2", "--node-rank", "2", str(ENV_DUMP)],
            "--node-rank 2 is out of range: expected 0..1",
        ),
        (
            ["--nproc", "2", "--cores-per-rank", "64", "--bind-cores", str(ENV_DUMP)],
            "--bind-cores needs 2 ranks x 64",
        ),
        (["--nproc", "2", "--redirects", "0:9", str(ENV_DUMP)], "--redirects: expected 0 (none)"),
        (
            ["--nproc", "2", "--local-ranks-filter", "3", str(ENV_DUMP)],
            "--local-ranks-filter: local rank 3 is out of",
        ),
        (["--max-restarts", "-1", str(ENV_DUMP)], "--max-restarts: expected an integer >= 0, got '-1'"),
        (["--standalone", "--nnodes", "2", str(ENV_DUMP)], "--standalone runs a single node"),
        (
            ["--rdzv-conf", "read_timeout=5", str(ENV_DUMP)],
            "--rdzv-conf: only join_timeout=SECONDS is understood",
        ),
        (["--dump-stacks", "--no-python", "true"], "--dump-stacks needs Python workers"),
        (["--nnodes", "1:2", str(ENV_DUMP)], "elastic ranges MIN:MAX are not supported"),
        (["--nprocc", "2", str(ENV_DUMP)], "unknown option --nprocc; did you mean --nproc?"),
        (["--master_prot=5", str(ENV_DUMP)], "unknown option --master_prot; did you mean --master-port?"),
        (["--local_addr", "10.0.0.2", str(ENV_DUMP)], "--local_addr is a PyTorch launcher option"),
        # a script's option, not the hidden --local-rank-arg (python -m torch.distributed.launch's)
        (["--local_rank=0", str(ENV_DUMP)], "--local_rank is a script's option, not a launcher's"),
        (
            ["--local-rank-ar", str(ENV_DUMP)],
            "unknown option --local-rank-ar; did you mean --local-ranks-filter?",
        ),
        # the store listens on IPv4: an IPv6 endpoint, bracketed or not, is refused by the launcher
        (
            ["--rdzv-endpoint", "[::1]:29500", str(ENV_DUMP)],
            "'::1' is an IPv6 address: the store listens on IPv4",
        ),
        (["--rdzv-endpoint", "::1", str(ENV_DUMP)], "'::1' is an IPv6 address"),
        (["--rdzv-endpoint", "host:abc", str(ENV_DUMP)], "--rdzv-endpoint's port: expected an integer >= 0"),
        (
            ["--shutdown-timeout", "-1", str(ENV_DUMP)],
            "--stop-grace/--shutdown-timeout: expected a number >= 0",
        ),
        (["--stopped-timeout", "nan", str(ENV_DUMP)], "--stopped-timeout: expected a number >= 0, got 'nan'"),
        (["--numa-binding", "node", str(ENV_DUMP)], "use --cores-per-rank and --bind-cores"),
        (
            ["-m", "tests/dist_helpers.py"],
            "-m takes a module name, got the file name 'tests/dist_helpers.py': drop -m to run the "
            "file, or give -m tests.dist_helpers",
        ),
        (["tests"], "script 'tests' is a directory without a __main__.py"),
        # the option before the script took it as its value
        (
            ["--nproc", str(ENV_DUMP)],
            f"no script given: expected disttorch-launch [options] script.py [script args]; --nproc took "
            f"'{ENV_DUMP}' as its value, which looks like the script: give --nproc a value first "
            f"(disttorch-launch --nproc N {ENV_DUMP})",
        ),
        # one node: rank 0 hosts the store here, so an address elsewhere could never be reached
        (
            ["--nproc", "2", "--master-addr", "192.0.2.1", str(ENV_DUMP)],
            "--master-addr 192.0.2.1: not an address of this machine, yet with --nnodes 1 every rank "
            "runs here and rank 0 hosts the store here",
        ),
        (["--rdzv-endpoint", "192.0.2.1:29400", str(ENV_DUMP)], "--rdzv-endpoint 192.0.2.1: not an address"),
        (
            ["--master-addr", "no-such-host.invalid", str(ENV_DUMP)],
            "--master-addr='no-such-host.invalid' does not resolve to an address",
        ),
    ],
)
def test_argument_errors(args, message, monkeypatch, capsys):
    for name in ("DISTTORCH_JOB_SECRET", "DISTTORCH_FAULT", "DISTTORCH_TRACE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as exit_info:
        parse_args(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert "disttorch-launch: error:" in err and message in err, err


def test_a_program_on_path_given_as_the_script_is_named(monkeypatch, capsys):
    # "disttorch-launch --nproc 2 python train.py": the launcher runs Python itself
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    interpreter = os.path.basename(sys.executable)
    with pytest.raises(SystemExit):
        parse_args(["--nproc", "2", interpreter, "train.py", "--epochs", "2"])
    assert (
        f"; {interpreter!r} is the Python interpreter ({sys.executable}), which runs every rank's script "
        "already: drop it (disttorch-launch [options] train.py --epochs 2)"
    ) in capsys.readouterr().err
    monkeypatch.setenv("PATH", "/bin:/usr/bin")
    with pytest.raises(SystemExit):
        parse_args(["--nproc", "2", "sh", "-c", "true"])
    err = capsys.readouterr().err
    assert "; 'sh' is a program on PATH (/" in err and "): add --no-python to run it as each rank" in err, err


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "args, message",
    [
        (["--nproc", "0", "x.py"], "--nproc-per-node: expected an integer >= 1 or 'auto', got '0'"),
        (["--nproc", "-1", "x.py"], "--nproc-per-node: expected an integer >= 1 or 'auto', got '-1'"),
        (["--nproc", "2"], "no script given: expected disttorch-launch [options] script.py"),
    ],
)
def test_argument_errors_are_one_line_without_the_usage_block(args, message, capsys):
    with pytest.raises(SystemExit):
        parse_args(args)
    first, *rest = capsys.readouterr().err.splitlines()
    assert first.startswith("disttorch-launch: error: ") and message in first, first
    assert rest == ["(see disttorch-launch --help)"]


def test_launcher_options_after_the_script_are_noted(monkeypatch):
    monkeypatch.chdir(ROOT)
    late = parse_args([str(ENV_DUMP), "out", "--nproc=2", "--as-torch"])
    assert late.script_args == ["out", "--nproc=2", "--as-torch"] and late.nproc == 1
    assert late.notes == [
        "note: --nproc=2 --as-torch after the script is passed to the script, not to the launcher; "
        f"launcher options go before it (disttorch-launch --nproc 2 {ENV_DUMP} ...)"
    ]
    assert parse_args([str(ENV_DUMP), "--epochs", "2"]).notes == []


@pytest.mark.timeout(60)
def test_torch_distributed_launch_passes_each_script_its_local_rank(tmp_path):
    script = tmp_path / "argv.py"
    script.write_text("import os, sys; print(sys.argv[1:], os.environ['LOCAL_RANK'])\n")
    done = subprocess.run(
        [sys.executable, "-m", "disttorch.distributed.launch", "--nproc_per_node", "2", script, "x"],
        cwd=ROOT,
        env=launcher_env(),
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 0, done.stderr
    assert "FutureWarning: The module torch.distributed.launch is deprecated" in done.stderr
    for rank in (0, 1):
        assert f"[rank{rank}]: ['x', '--local-rank={rank}'] {rank}" in done.stdout, done.stdout


def test_torch_distributed_launch_flags(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert parse_args(["--local-rank-arg", str(ENV_DUMP)]).local_rank_arg
    assert not parse_args(["--local-rank-arg", "--use_env", str(ENV_DUMP)]).local_rank_arg
    assert not parse_args(["--use-env", str(ENV_DUMP)]).local_rank_arg
    with pytest.raises(SystemExit):
        parse_args(["--local-rank-arg", "--no-python", "true"])
    assert "you must also set the '--use-env' flag" in capsys.readouterr().err


def test_import_torch_without_the_alias_says_how_to_run_a_pytorch_program(monkeypatch):
    from disttorch.launcher.bootstrap import _add_hint

    monkeypatch.delenv("DISTTORCH_AS_TORCH", raising=False)
    missing = [ModuleNotFoundError(f"No module named {n!r}", name=n) for n in ("torch", "torchvision")]
    for exc in missing:
        _add_hint(exc)
    assert str(missing[0]).startswith("No module named 'torch' (to run a PyTorch program on disttorch")
    assert "--as-torch" in str(missing[0]) and str(missing[1]) == "No module named 'torchvision'"


def test_torchruns_start_method_shutdown_timeout_and_portless_endpoints_are_accepted(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("DISTTORCH_JOB_SECRET", "ab" * 16)
    config = parse_args(["--start_method", "fork", "--shutdown-timeout", "3", str(ENV_DUMP)])
    assert config.stop_grace == 3.0
    single = parse_args(["--rdzv-endpoint", "localhost", str(ENV_DUMP)])
    assert (single.master_addr, single.master_port) == ("localhost", None)  # a free port
    two = parse_args(["--nnodes", "2", "--rdzv_endpoint=10.0.0.1", str(ENV_DUMP)])
    assert (two.master_addr, two.master_port) == ("10.0.0.1", 29400)  # torchrun's default
    portless = parse_args(["--nnodes", "2", "--master-addr", "10.0.0.1", str(ENV_DUMP)])
    assert portless.master_port == 29500  # torchrun's --master-port default
    assert parse_args(["--nnodes", "1:1", str(ENV_DUMP)]).nnodes == 1  # torchrun's default range


def test_a_master_port_in_use_is_refused_before_any_rank_starts(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("DISTTORCH_JOB_SECRET", "ab" * 16)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        for args, advice in [
            (["--master-port", port], "choose another, or leave it out (a free port is picked)"),
            (
                ["--nnodes", "2", "--master-addr", "127.0.0.1", "--master-port", port],
                "the same on every node",
            ),
        ]:
            with pytest.raises(SystemExit):
                parse_args([*args, str(ENV_DUMP)])
            err = capsys.readouterr().err
            assert f"--master-port {port}: another program or job already uses 127.0.0.1:{port}" in err
            assert advice in err, err
        # node 1 only connects there: the port is node 0's to host
        joining = ["--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1", "--master-port", port]
        assert parse_args([*joining, str(ENV_DUMP)]).master_port == int(port)


def test_torchruns_pet_variables_set_the_options_not_given(monkeypatch, capsys):
    # torchrun reads PET_<OPTION> for its options (Kubeflow's PyTorchJob sets them)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("DISTTORCH_JOB_SECRET", "ab" * 16)
    for name, value in [("PET_NNODES", "2"), ("PET_NODE_RANK", "1"), ("PET_MASTER_ADDR", "10.0.0.1")]:
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PET_NPROC_PER_NODE", "2")
    monkeypatch.setenv("PET_STANDALONE", "0")
    config = parse_args(["--nproc", "3", str(ENV_DUMP)])  # given: the option wins
    assert (config.nnodes, config.node_rank, config.master_addr, config.master_port) == (
        2,
        1,
        "10.0.0.1",
        29500,
    )
    assert config.nproc == 3
    assert config.notes == [
        "note: from torchrun's variables: PET_NNODES=2 (--nnodes), PET_NODE_RANK=1 (--node-rank), "
        "PET_MASTER_ADDR=10.0.0.1 (--master-addr), PET_STANDALONE=0 (--standalone)"
    ]
    monkeypatch.setenv("PET_STANDALONE", "yes")
    with pytest.raises(SystemExit):
        parse_args([str(ENV_DUMP)])
    err = capsys.readouterr().err
    assert "$PET_STANDALONE: expected an integer (0 off, 1 on) for --standalone, got 'yes'" in err, err


@pytest.mark.timeout(60)
def test_argument_error_exit_status_from_the_command_line():
    result = launch("--nproc-per-node", "0", ENV_DUMP)
    assert result.returncode == 2
    assert (
        "disttorch-launch: error: --nproc-per-node: expected an integer >= 1 or 'auto', got '0'"
        in result.stderr
    )
    assert result.stdout == ""


@pytest.mark.timeout(60)
def test_start_up_imports_only_the_core():
    code = (
        "import sys, disttorch.launcher.main, disttorch.launcher.bootstrap, disttorch._faults; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('zmq', 'cloudpickle') "
        "or m.startswith(('disttorch.nn', 'disttorch.distributed', 'disttorch.optim'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.timeout(60)
def test_underscore_spellings_and_help():
    result = launch(
        "--nproc_per_node",
        "2",
        "--max_restarts",
        "0",
        "--monitor_interval",
        "0.05",
        "--no_bind_cores",
        SCRIPTS / "chatter.py",
        1,
    )
    assert result.returncode == 0, result.stderr
    assert "[rank1]: out 1 0" in result.stdout
    help_text = launch("--help").stdout
    for option in (
        "--nproc-per-node",
        "--nnodes",
        "--node-rank",
        "--master-addr",
        "--master-port",
        "--standalone",
        "--max-restarts",
        "--monitor-interval",
        "--log-dir",
        "--redirects",
        "--tee",
        "--local-ranks-filter",
        "--cores-per-rank",
        "--bind-cores",
        "--trace-dir",
        "--inject-fault",
        "--job-secret-file",
        "--stop-grace",
    ):
        assert option in help_text


def test_help_says_when_a_rank_stopped_by_a_signal_is_ended():
    """As the agent does: while other ranks still run too, not only once one has ended."""
    text = " ".join(build_parser().format_help().split())
    assert "--stopped-timeout S end a rank that has stayed stopped by a signal" in text
    assert "the ranks still running would wait for it until their own timeout, or none is left" in text
