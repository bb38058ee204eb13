"""Fault injection (disttorch._faults): the spec format, and kill/delay/drop/raise in real ranks."""

import json

import pytest

from disttorch import _faults as faults
from disttorch._faults import Fault, parse_faults

from launcher_scripts.harness import SCRIPTS, launch

STEPS = SCRIPTS / "steps.py"


def test_parse_all_spellings():
    kill, short, delay, drop, every = parse_faults(
        "kill:rank=1:at=collective:5; kill:rank=1,step=5;delay:rank=2:seconds=3:at=step:2;"
        "drop:rank=1:at=collective:3; raise:at=step:1:attempt=*"
    )
    assert kill == Fault("kill", "collective", 5, rank=1, spec="kill:rank=1:at=collective:5")
    assert (short.action, short.event, short.count, short.rank) == ("kill", "step", 5, 1)
    assert (delay.seconds, delay.event, delay.count, delay.rank) == (3.0, "step", 2, 2)
    assert (drop.action, drop.event, drop.count) == ("drop", "collective", 3)
    assert every.rank is None and every.attempt is None
    assert parse_faults("kill:at=step:1:signal=term")[0].signal == 15
    assert parse_faults("") == []


@pytest.mark.parametrize(
    "spec, message",
    [
        ("boom:rank=1", "unknown action 'boom'; expected one of kill, delay, drop, raise"),
        ("kill:rank=x:at=step:1", "rank='x' must be an integer >= 0"),
        ("kill:rank=1", "missing at=EVENT:N"),
        ("kill:at=step", "at=step needs a count"),
        ("kill:at=step:0", "count='0' must be an integer >= 1"),
        ("delay:at=step:1", "delay needs seconds=S"),
        ("delay:seconds=-2:at=step:1", "seconds='-2' must be a number >= 0"),
        ("kill:at=epoch:1", "unknown event 'epoch'; expected one of step, collective"),
        ("kill:seconds=1:at=step:2", "key 'seconds' does not apply to 'kill'"),
        ("kill:rank=1:5", "expected key=value, got '5'"),
        ("kill:at=step:1:signal=SIGNOPE", "unknown signal 'SIGNOPE'"),
    ],
)
def test_parse_errors_name_the_problem(spec, message):
    with pytest.raises(ValueError, match="fault '") as info:
        parse_faults(spec)
    assert message in str(info.value)


def test_in_process_delay_drop_raise_and_rank_filter(monkeypatch):
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("DISTTORCH_RESTART_COUNT", "0")
    dropped = []
    faults.register_drop_handler(dropped.append)
    try:
        kept = faults.configure(
            "delay:rank=2:seconds=0:at=step:2; drop:rank=2:at=collective:3;"
            "kill:rank=1:at=step:1; raise:at=step:4; raise:at=step:5:attempt=1"
        )
        assert [f.action for f in kept] == ["delay", "drop", "raise"]  # not rank 1's, not attempt 1's
        faults.maybe_inject("step", 1)  # rank 1's kill: not for us
        for _ in range(3):
            faults.maybe_inject("collective")  # counted by the module: 1, 2, 3
        assert [f.action for f in dropped] == ["drop"]
        faults.maybe_inject("step", 2)
        with pytest.raises(
            RuntimeError, match=r"injected fault 'raise:at=step:4'.*raised RuntimeError at step 4"
        ):
            faults.maybe_inject("step", 4)
        faults.maybe_inject("step", 4)  # fires once only
    finally:
        faults.unregister_drop_handler(dropped.append)
        faults.configure("")


def test_no_fault_configured_costs_nothing(monkeypatch):
    monkeypatch.delenv("DISTTORCH_FAULT", raising=False)
    faults.configure()
    import time

    start = time.perf_counter()
    for i in range(100_000):
        faults.maybe_inject("collective", i)
    assert time.perf_counter() - start < 0.5


@pytest.mark.timeout(60)
def test_kill_at_step_is_diagnosed(tmp_path):
    result = launch("--nproc", 2, "--inject-fault", "kill:rank=1:at=step:3", STEPS, 5, tmp_path)
    assert result.returncode == 1
    err = result.stderr
    assert "[rank1]: [disttorch fault] rank 1: injected fault 'kill:rank=1:at=step:3'" in err
    assert "rank 1 was the first to fail" in err and "exit       : signal SIGKILL (9)" in err
    assert "this was an injected fault (kill:rank=1:at=step:3)" in err
    assert "[rank1]: step 2" in result.stdout and "[rank1]: step 3" not in result.stdout
    assert not (tmp_path / "rank1_attempt0.json").exists()  # rank 1 never finished its loop


@pytest.mark.timeout(60)
def test_kill_then_restart_runs_clean(tmp_path):
    result = launch(
        "--nproc", 2, "--max-restarts", 1, "--inject-fault", "kill:rank=0,step=2", STEPS, 3, tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "restart 1 of 1" in result.stderr
    assert (tmp_path / "rank0_attempt1.json").exists() and not (tmp_path / "rank0_attempt0.json").exists()


@pytest.mark.timeout(60)
def test_delay_and_drop_through_environment(tmp_path):
    result = launch(
        "--nproc",
        2,
        "--inject-fault",
        "delay:rank=1:seconds=1.0:at=step:2",
        STEPS,
        3,
        tmp_path,
        env={"DISTTORCH_FAULT": "drop:rank=0:at=step:1"},
    )
    assert result.returncode == 0, result.stderr
    rank0 = json.loads((tmp_path / "rank0_attempt0.json").read_text())
    rank1 = json.loads((tmp_path / "rank1_attempt0.json").read_text())
    assert rank1["times"][1] >= 1.0 and max(rank1["times"][0], rank1["times"][2]) < 0.5
    assert max(rank0["times"]) < 0.5
    assert rank0["dropped"] == ["drop:rank=0:at=step:1"] and rank1["dropped"] == []
    assert "delay of 1 s at step 2" in result.stderr
    assert "DISTTORCH_FAULT=drop:rank=0:at=step:1;delay:rank=1:seconds=1.0:at=step:2" in result.stderr
