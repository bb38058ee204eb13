"""Diagnoses: a frozen (SIGSTOP) or cut-off rank is reported by every survivor within seconds
naming it (a frozen one on the same host as stopped by a signal, with its pid), and the
launcher exits naming it as the root cause; an early exit is reported as an
exit. (Product bounds: 5 s for the survivors, 10 s for the launcher; the test bounds leave room
for a loaded machine.)"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "scripts", "busy_loop.py")
SURVIVOR_BOUND = 12.0
LAUNCHER_BOUND = 20.0


def _env(**extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=REPO, DISTTORCH_TIMEOUT="120", PYTHONUNBUFFERED="1")
    env.pop("DISTTORCH_JOB_SECRET", None)
    env.update(extra)
    return env


def _read_until_ready(proc: subprocess.Popen, n: int, timeout: float) -> tuple[list[str], dict[int, int]]:
    lines, pids = [], {}
    deadline = time.monotonic() + timeout
    while len(pids) < n and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"READY (\d+) (\d+)", line)
        if m:
            pids[int(m.group(1))] = int(m.group(2))
    assert len(pids) == n, "".join(lines)
    return lines, pids


@pytest.mark.timeout(120)
@pytest.mark.parametrize("victim", [0, 1])
def test_a_frozen_rank_is_reported_by_every_survivor_and_named_by_the_launcher(victim):
    proc = subprocess.Popen(
        [sys.executable, "-m", "disttorch.launcher", "--nproc", "3", SCRIPT],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    frozen = None
    try:
        lines, pids = _read_until_ready(proc, 3, 90)
        time.sleep(1.0)
        frozen = pids[victim]
        stopped_at = time.time()
        os.kill(frozen, signal.SIGSTOP)
        rest = proc.communicate(timeout=60)[0]
        ended = time.time()
    finally:
        if frozen is not None:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(frozen, sig)
                except ProcessLookupError:
                    pass
        if proc.poll() is None:
            proc.kill()
    text = "".join(lines) + rest
    assert ended - stopped_at < LAUNCHER_BOUND, f"launcher took {ended - stopped_at:.1f} s\n{text}"
    assert f"rank {victim} stopped responding or died" in text, text
    survivors = [r for r in range(3) if r != victim]
    said = []
    for r in survivors:
        m = re.search(rf"\[rank{r}\]: FAILED (\S+) PeerDiedError: (.*)", text)
        assert m, f"rank {r} did not report\n{text}"
        assert float(m.group(1)) - stopped_at < SURVIVOR_BOUND, text
        assert f"rank {victim}" in m.group(2), m.group(2)
        said.append(m.group(2))
    # a peer on this host is looked at: the first to notice says it is stopped, and its pid
    stopped = f"rank {victim} stopped responding: it is stopped by a signal (SIGSTOP, or SIGTSTP: Ctrl-Z; pid {frozen})"
    assert any(stopped in line for line in said), said


@pytest.mark.timeout(120)
def test_an_early_exit_is_reported_as_an_exit():
    for _ in range(3):
        proc = subprocess.run(
            [sys.executable, "-m", "disttorch.launcher", "--nproc", "2", SCRIPT, "exit-early"],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=100,
            check=False,
        )
        text = proc.stdout + proc.stderr
        assert proc.returncode == 1, text
        assert "AuthenticationError" not in text and "disagree on security" not in text, text
        assert "rank 1 left the group" in text, text


@pytest.mark.timeout(150)
def test_a_cut_link_is_reported_on_both_sides_and_both_launchers_exit(two_namespaces):
    ns = two_namespaces
    ns_a, addr_a, ns_b, addr_b, cut = ns.a, ns.addr_a, ns.b, ns.addr_b, ns.cut
    secret = os.urandom(32).hex()
    procs = []
    for node, (ns, addr) in enumerate(((ns_a, addr_a), (ns_b, addr_b))):
        env = _env(DISTTORCH_JOB_SECRET=secret, DISTTORCH_SAME_HOST_TRANSPORT="tcp", DISTTORCH_HOST_ADDR=addr)
        cmd = [
            "ip",
            "netns",
            "exec",
            ns,
            sys.executable,
            "-m",
            "launcher",
            "--nnodes",
            "2",
            "--node-rank",
            str(node),
            "--nproc",
            "1",
            "--master-addr",
            addr_a,
            "--master-port",
            "29455",
            SCRIPT,
        ]
        procs.append(
            subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        )
    try:
        outputs = [_read_until_ready(p, 1, 90)[0] for p in procs]
        time.sleep(1.0)
        cut_at = time.time()
        cut()
        rests = [p.communicate(timeout=90)[0] for p in procs]
        ended = time.time()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for node in (0, 1):
        text = "".join(outputs[node]) + rests[node]
        other = 1 - node
        m = re.search(rf"\[rank{node}\]: FAILED (\S+) PeerDiedError: (.*)", text)
        assert m, f"rank {node} did not report\n{text}"
        assert float(m.group(1)) - cut_at < SURVIVOR_BOUND, text
        assert f"rank {other}" in m.group(2), m.group(2)
        assert procs[node].returncode != 0, text
    assert ended - cut_at < LAUNCHER_BOUND, f"launchers took {ended - cut_at:.1f} s"


def test_the_launcher_blames_the_peer_a_rank_reported():
    from disttorch.launcher.failure import RankExit, blame, format_summary

    def rank_exit(rank, code, t, stopped=False, record=None):
        return RankExit(
            rank=rank,
            local_rank=rank,
            node_rank=0,
            host="h",
            pid=100 + rank,
            returncode=code,
            time=t,
            stopped=stopped,
            record=record,
        )

    reporter = rank_exit(1, 1, 10.0, record={"error": "PeerDiedError: rank 0 died", "blamed_rank": 0})
    frozen = rank_exit(0, -9, 12.0, stopped=True)
    root, by = blame(reporter, [frozen, reporter])
    assert root is frozen and by is reporter
    text = format_summary(root, [frozen, reporter], 0, 0, reported_by=by)
    assert "rank 0 stopped responding or died (reported by rank 1)" in text
    early = rank_exit(0, 0, 9.0)
    root, by = blame(reporter, [early, reporter])
    assert root is early
    assert "rank 0 ended while rank 1 still needed it" in format_summary(
        root, [early, reporter], 0, 0, reported_by=by
    )
    exited = rank_exit(0, 2, 9.0)  # sys.exit(2)
    root, by = blame(reporter, [exited, reporter])
    assert "rank 0 exited with code 2 while rank 1 still needed it" in format_summary(
        root, [exited, reporter], 0, 0, reported_by=by
    )
    plain = rank_exit(1, 1, 10.0, record={"error": "ValueError: x"})
    assert blame(plain, [frozen, plain]) == (plain, None)


@pytest.mark.timeout(200)
def test_a_link_cut_longer_than_the_report_grace_still_restarts_the_attempt(two_namespaces):
    # --max-restarts 1: the link between the nodes is down until node 0 has given up waiting for
    # node 1's report (--stop-grace + 2 s), and node 1 cannot report at all: both nodes still
    # restart, meet again once the link is back, and the second attempt succeeds
    import threading

    ns = two_namespaces
    secret = os.urandom(32).hex()
    procs, lines = [], [[], []]
    for node, (name, addr) in enumerate(((ns.a, ns.addr_a), (ns.b, ns.addr_b))):
        env = _env(DISTTORCH_JOB_SECRET=secret, DISTTORCH_SAME_HOST_TRANSPORT="tcp", DISTTORCH_HOST_ADDR=addr)
        cmd = ns.run_in(name, [sys.executable, "-m", "launcher", "--nnodes", "2", "--node-rank", str(node)])
        cmd += ["--nproc", "1", "--master-addr", ns.addr_a, "--master-port", "29456", "--max-restarts", "1"]
        cmd += ["--stop-grace", "1", "--stop-delay", "1", SCRIPT, "restart-ends"]
        procs.append(
            subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        )
    readers = [
        threading.Thread(target=lambda p=p, out=out: out.extend(p.stdout), daemon=True)
        for p, out in zip(procs, lines)
    ]
    for reader in readers:
        reader.start()

    def wait_for(node, text, timeout):
        deadline = time.monotonic() + timeout
        while not any(text in line for line in lines[node]):
            assert time.monotonic() < deadline, f"node {node} never said {text!r}:\n" + "".join(lines[node])
            time.sleep(0.1)

    try:
        wait_for(0, "READY 0", 90)
        wait_for(1, "READY 1", 30)
        ns.cut()
        wait_for(0, "node 1 did not report", 60)  # node 0 gave up waiting for node 1's report
        time.sleep(2.0)  # and the link stays down a while longer
        ns.restore()
        deadline = time.monotonic() + 90
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.1)
        codes = [p.poll() for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for reader in readers:
            reader.join(timeout=5)
    both = "".join(lines[0]) + "".join(lines[1])
    for node in (0, 1):
        text = "".join(lines[node])
        assert codes[node] == 0, both
        assert "restart 1 of 1" in text, text
        assert f"DONE {node} 8" in text, text  # three all-reduces of ones by two ranks
