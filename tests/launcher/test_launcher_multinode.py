"""disttorch-launch across nodes: two launcher processes on this machine, 2 nodes x 2 ranks.

Node 0's agent hosts the agents' store on 127.0.0.2 (a loopback address standing for the
master host); node 1's agent joins it. The job secret comes from DISTTORCH_JOB_SECRET.
"""

import json
import secrets
import signal
import subprocess
import sys
import time

import pytest

from disttorch.launcher.rendezvous import free_port

from launcher_scripts.harness import (
    SCRIPTS,
    StderrClock,
    assert_all_gone,
    recorded_pids,
    start,
    wait_for_files,
)

pytest.importorskip("zmq")
MASTER = "127.0.0.2"


def start_nodes(*script_args, extra=(), nodes=(0, 1)):
    port = free_port(MASTER)
    env = {"DISTTORCH_JOB_SECRET": secrets.token_hex(32)}
    return [
        start(
            "--nnodes",
            2,
            "--node-rank",
            k,
            "--master-addr",
            MASTER,
            "--master-port",
            port,
            "--nproc",
            2,
            *extra,
            *script_args,
            env=env,
        )
        for k in nodes
    ]


def finish(procs, timeout=40):
    """Each launcher's (exit code, stdout, stderr); all are killed at the end, also those after
    one that outlived ``timeout``."""
    results = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            results.append((proc.returncode, out, err))
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    return results


def finish_timed(procs, timeout=40):
    """As :func:`finish`, with times (``time.time()``): ``([(exit code, stderr, when its first
    line came: the launcher had started, past its imports), ...], when all had exited)``.
    A bound on how soon launchers fail counts from there, not from a start a loaded host slows."""
    clocks = [StderrClock(proc.stderr) for proc in procs]
    for clock in clocks:
        clock.start()
    try:
        for proc in procs:
            proc.wait(timeout=timeout)
        ended = time.time()
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    for clock in clocks:
        clock.join(timeout=5)
    results = [(proc.returncode, clock.text(), clock.lines[0][0]) for proc, clock in zip(procs, clocks)]
    return results, ended


@pytest.mark.timeout(90)
def test_two_nodes_world_ranks_and_restart(tmp_path):
    # rank 1 (node 0) fails on the first attempt; both nodes restart, the second attempt succeeds
    results = finish(start_nodes(SCRIPTS / "env_dump.py", tmp_path, 0, extra=("--max-restarts", 1)))
    for code, _, err in results:
        assert code == 0, err
        assert "rank 1 was the first to fail" in err and "restart 1 of 1" in err
    envs = [json.loads((tmp_path / f"rank{r}_attempt1.json").read_text()) for r in range(4)]
    for rank, env in enumerate(envs):
        assert env["RANK"] == str(rank) and env["LOCAL_RANK"] == str(rank % 2)
        assert env["GROUP_RANK"] == str(rank // 2) and env["GROUP_WORLD_SIZE"] == "2"
        assert env["WORLD_SIZE"] == "4" and env["LOCAL_WORLD_SIZE"] == "2"
        assert env["MASTER_ADDR"] == MASTER and env["DISTTORCH_RESTART_COUNT"] == "1"
    for name in ("MASTER_PORT", "DISTTORCH_RUN_ID", "DISTTORCH_JOB_SECRET"):
        assert len({env[name] for env in envs}) == 1, f"{name} differs between ranks"
    first = json.loads((tmp_path / "rank1_attempt0.json").read_text())  # the rank that failed wrote it
    assert first["MASTER_PORT"] != envs[1]["MASTER_PORT"]  # a fresh workers' port per attempt


@pytest.mark.timeout(90)
def test_failure_on_one_node_stops_both_and_both_report_it(tmp_path):
    started = time.monotonic()
    results = finish(start_nodes(SCRIPTS / "fail.py", tmp_path, "raise", 3, extra=("--stop-delay", 0)))
    assert time.monotonic() - started < 20
    for code, _, err in results:
        assert code == 1, err
        summary = err[err.index("job failed") :]
        assert "rank 3 was the first to fail" in summary
        assert "rank       : 3 (local rank 1 on node 1)" in summary
        assert "ValueError: rank 3 cannot go on" in summary
        assert "  ranks 0-2: stopped by the launcher after rank 3 failed (signal SIGTERM (15))" in summary
    assert_all_gone(recorded_pids(tmp_path))


@pytest.mark.timeout(90)
def test_interrupting_one_node_stops_the_other(tmp_path):
    procs = start_nodes(SCRIPTS / "fail.py", tmp_path, "lone", -1)
    try:
        wait_for_files(tmp_path, "rank*.pid", 4)
        procs[1].send_signal(signal.SIGINT)
        (code0, _, err0), (code1, _, err1) = finish(procs)
    finally:
        for proc in procs:
            proc.kill()
    assert code1 == 130, err1
    assert code0 == 1, err0
    assert "node 1 was interrupted by SIGINT" in err0
    assert_all_gone(recorded_pids(tmp_path))


@pytest.mark.timeout(90)
def test_a_node_whose_launcher_is_killed_fails_the_job_on_the_others(tmp_path):
    # node 1's launcher and ranks vanish at once (SIGKILL: nothing announces it); node 0's
    # ranks would wait for them until their timeout (init_process_group): node 0 ends the job
    procs = start_nodes(SCRIPTS / "fail.py", tmp_path, "lone", -1, extra=("--node-timeout", 2))
    try:
        wait_for_files(tmp_path, "rank*.pid", 4)
        procs[1].kill()
        killed = time.monotonic()
        (code0, _, err0), _ = finish(procs)
    finally:
        for proc in procs:
            proc.kill()
    assert time.monotonic() - killed < 20, err0
    assert code0 == 1, err0
    assert "node(s) 1 stopped answering in the agents' store for 2 s (--node-timeout)" in err0, err0
    assert "node 1 did not report" in err0, err0
    assert_all_gone(recorded_pids(tmp_path))


def test_a_node_is_silent_once_its_beat_stands_still_unless_it_reported(monkeypatch):
    from disttorch.distributed.store import HashStore
    from disttorch.launcher import rendezvous
    from disttorch.launcher.cli import LaunchConfig

    monkeypatch.setattr(rendezvous, "NODE_BEAT_S", 0.0)
    agent = object.__new__(rendezvous.StoreRendezvous)
    agent.config = LaunchConfig("x.py", [], nnodes=3, node_rank=0, node_timeout=0.2)
    agent.store, agent._next_beat, agent._beats = HashStore(), 0.0, {}
    assert agent.silent_nodes(0) == []  # the first look starts every node's clock
    assert agent.store.add("attempt0/beat/0", 0) == 1  # and counts this node's own beat
    time.sleep(0.3)
    agent.store.add("attempt0/beat/1", 1)  # node 1 beats; node 2 stands still...
    assert agent.silent_nodes(0) == [2]
    agent.store.set("attempt0/report/2", "{}")  # ...until it reports: its workers ended
    assert agent.silent_nodes(0) == []
    assert agent.silent_nodes(1) == []  # another attempt: every clock starts again


@pytest.mark.timeout(90)
def test_inconsistent_nodes_fail_fast_with_the_reason(tmp_path):
    port = free_port(MASTER)
    env = {"DISTTORCH_JOB_SECRET": secrets.token_hex(32)}
    common = ("--master-addr", MASTER, "--master-port", port, "--nproc", 1, SCRIPTS / "env_dump.py", tmp_path)
    node0 = start("--nnodes", 2, "--node-rank", 0, *common, env=env)
    node1 = start("--nnodes", 3, "--node-rank", 1, *common, env=env)
    results, ended = finish_timed([node1, node0])
    for code, err, _ in results:
        assert code == 1, err
        assert "node 0 was started with --nnodes 2, node 1 with --nnodes 3; give every node the same" in err
    both_up = max(up for _, _, up in results)  # (the default --join-timeout is 300 s)
    assert ended - both_up < 20, f"the nodes ended {ended - both_up:.1f} s after both had started"
    assert not list(tmp_path.iterdir())  # no worker was started


@pytest.mark.timeout(60)
def test_a_node_with_the_wrong_secret_fails_at_once_and_the_others_stop_together(tmp_path):
    # node 2 has another secret: refused at the handshake. Node 0 gives up at its --join-timeout
    # and tells node 1 (which would wait 30 s), and neither lingers after saying so. Node 0
    # starts last: the others wait for its store, so all of them meet it, however slow the host.
    port = free_port(MASTER)
    common = ("--nnodes", 3, "--master-addr", MASTER, "--master-port", port, "--nproc", 1)
    script = (SCRIPTS / "env_dump.py", tmp_path)
    secret = {"DISTTORCH_JOB_SECRET": secrets.token_hex(32)}
    other = {"DISTTORCH_JOB_SECRET": secrets.token_hex(32)}
    stranger = start(*common, "--node-rank", 2, "--join-timeout", 20, *script, env=other)
    node1 = start(*common, "--node-rank", 1, "--join-timeout", 30, *script, env=secret)
    node0 = start(*common, "--node-rank", 0, "--join-timeout", 3, *script, env=secret)
    results, ended = finish_timed([node0, node1, stranger])
    (code0, err0, up0), (code1, err1, _), (code2, err2, _) = results
    # node 0 gives up 3 s after it hosts the store (its first line), and closes it 5 s after that
    assert ended - up0 < 12, f"the nodes ended {ended - up0:.1f} s after node 0 started"
    assert code2 == 1 and "the job secrets differ" in err2, err2
    for code, err in ((code0, err0), (code1, err1)):
        assert code == 1, err
        assert "node(s) 2 did not join within --join-timeout 3 s" in err, err
    assert not list(tmp_path.iterdir())  # no worker was started


RESTARTS_ONCE = r"""
import os, pathlib, sys, time
out = pathlib.Path(sys.argv[1])
attempt, rank = os.environ["DISTTORCH_RESTART_COUNT"], os.environ["RANK"]
(out / f"rank{rank}_attempt{attempt}").write_text("")
if attempt == "0" and rank == "1":
    while not (out / "go").exists():
        time.sleep(0.05)
    sys.exit(4)
"""


@pytest.mark.timeout(60)
def test_a_second_agent_for_a_node_of_a_running_job_is_refused_and_the_job_still_restarts(tmp_path):
    script = tmp_path / "restarts_once.py"
    script.write_text(RESTARTS_ONCE)
    common = ("--nnodes", 2, "--master-addr", MASTER, "--master-port", free_port(MASTER), "--nproc", 2)
    secret = {"DISTTORCH_JOB_SECRET": secrets.token_hex(32)}
    nodes = [
        start(*common, "--node-rank", k, "--max-restarts", 1, script, tmp_path, env=secret) for k in (0, 1)
    ]
    try:
        wait_for_files(tmp_path, "rank*_attempt0", 4)  # the nodes met: the job runs
        (code, _, err), *_ = finish([start(*common, "--node-rank", 1, script, tmp_path, env=secret)], 20)
        assert code == 1 and "two agents joined as --node-rank 1" in err, err
    finally:
        (tmp_path / "go").write_text("")
    for code, _, err in finish(nodes):
        assert code == 0, err
        assert "restart 1 of 1" in err and "all 4 ranks exited 0" in err, err


def test_an_agent_waiting_for_nodes_says_which_while_it_waits(monkeypatch):
    from disttorch.launcher import rendezvous
    from disttorch.launcher.cli import LaunchConfig

    class NoNodes:  # a store no other node has written to
        def check(self, keys):
            return False

        def compare_set(self, key, expected, value):
            pass

    monkeypatch.setattr(rendezvous, "WAIT_NOTICE_S", 0.1)
    agent = object.__new__(rendezvous.StoreRendezvous)
    said = []
    agent.config = LaunchConfig("x.py", [], nnodes=3, join_timeout=0.35, monitor_interval=0.02)
    agent.store, agent._say = NoNodes(), said.append
    with pytest.raises(rendezvous.RendezvousError, match=r"node\(s\) 1, 2 did not join within"):
        agent._wait_for_nodes(["attempt0/nproc/1", "attempt0/nproc/2"])
    assert 2 <= len(said) <= 3, said
    assert said[0].startswith("waiting for node(s) 1, 2 to join (0 s of --join-timeout 0.35 s): is ")


@pytest.mark.parametrize("nnodes, others", [(2, "1;"), (4, "1..3;")])
def test_node_0_on_a_machine_that_is_not_master_addr_says_to_give_the_node_rank(monkeypatch, nnodes, others):
    # torchrun's c10d rendezvous numbers the nodes itself; here a node started without
    # --node-rank is node 0 and would host a store of its own and wait for ever
    from disttorch.distributed import store
    from disttorch.launcher import rendezvous
    from disttorch.launcher.cli import LaunchConfig

    def no_store(*args, **kwargs):
        raise OSError("no store in this test")

    monkeypatch.setattr(store, "TCPStore", no_store)
    for addr, warned in (("203.0.113.9", True), (MASTER, False)):  # TEST-NET-3: not this machine
        said = []
        config = LaunchConfig("x.py", [], nnodes=nnodes, master_addr=addr, master_port=29500)
        with pytest.raises(rendezvous.RendezvousError, match="no store in this test"):
            rendezvous.StoreRendezvous(config, said.append)
        notes = [line for line in said if "is not this machine" in line]
        assert len(notes) == int(warned), said
        if warned:
            assert notes[0].startswith(f"--master-addr {addr} is not this machine, yet this node is node 0")
            assert f"start it with its own --node-rank ({others} disttorch-launch numbers" in notes[0]
    assert notes == [] and said[0] == f"node 0 of {nnodes}: hosting the agents' store at {MASTER}:29500"


def test_a_lost_agents_store_is_named_once(monkeypatch):
    # the store lost (its host cut off): every later store operation of the agent fails the same
    # way, each after the store's reconnect grace; the summary needs the reason once, not three times
    from disttorch.launcher import agent as agent_module
    from disttorch.launcher.cli import LaunchConfig

    said = []
    monkeypatch.setattr(agent_module, "say", said.append)
    agent = object.__new__(agent_module.Agent)
    agent.config = LaunchConfig("x.py", [], nnodes=2, master_addr=MASTER, master_port=29500)
    agent._store_failed = False

    def lost():
        raise ConnectionError("lost the connection to the store")

    assert agent._try(lost) is None and agent._try(lost) is None
    assert said == [f"the agents' store at {MASTER}:29500 failed: lost the connection to the store"]


@pytest.mark.timeout(60)
def test_hosting_the_agents_store_loads_no_tensor_stack():
    # the store and its addresses need no NumPy: a node's launcher hosts the store and waits for
    # the other nodes without paying for the tensor stack (about 1 s of CPU per node)
    code = (
        "import sys\n"
        "from disttorch.launcher import rendezvous\n"
        "from disttorch.launcher.cli import LaunchConfig\n"
        f"port = rendezvous.free_port({MASTER!r})\n"
        f"config = LaunchConfig('x.py', [], nnodes=2, master_addr={MASTER!r}, master_port=port)\n"
        "agent = rendezvous.StoreRendezvous(config, print)\n"
        "agent.store.close()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'numpy' or m.startswith("
        "('disttorch._facade', 'disttorch.distributed._api', 'disttorch.distributed.engine'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50)
    assert done.returncode == 0, done.stderr
    assert "hosting the agents' store" in done.stdout, done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
