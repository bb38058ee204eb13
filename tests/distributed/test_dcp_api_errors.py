"""``dcp.save``/``dcp.load`` given no place to go raise PyTorch's ``RuntimeError`` (a bare
``AttributeError`` before), and a failed ``async_save`` whose future nobody asked is logged at
exit with the checkpoint's name (it failed silently, exit code 0), and recorded for the
launcher's report (the exit status stays 0, as PyTorch's); a tensor of another shape than the
checkpoint's, or a key it lacks, raises PyTorch's ``ValueError``/``RuntimeError`` wrapped in a
``CheckpointException``, as its planner's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest

import disttorch as dt
import disttorch.distributed.checkpoint as dcp
from disttorch._error_file import ERROR_FILE_ENV, read_error_file
from disttorch.launcher.failure import RankExit, format_lost_save

# PyTorch 2.13's message (its torch.distributed.checkpoint takes about 2 s to import)
NO_PLACE = "`checkpoint_id` must be specified if storage_reader/storage_writer is None."


@pytest.mark.parametrize("call", [dcp.save, dcp.load], ids=["save", "load"])
def test_save_or_load_without_a_checkpoint_id_or_storage_raises_pytorchs_error(call):
    with pytest.raises(RuntimeError) as raised:
        call({"w": dt.ones(2)})
    assert str(raised.value) == NO_PLACE


def test_async_save_without_a_checkpoint_id_fails_through_its_future():
    future = dcp.async_save({"w": dt.ones(2)})
    assert str(future.exception()) == NO_PLACE


def test_a_failed_async_save_nobody_asked_about_is_logged_at_exit(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    script = textwrap.dedent(
        f"""
        import disttorch as torch
        import disttorch.distributed.checkpoint as dcp
        asked = dcp.async_save({{"w": torch.ones(2)}}, checkpoint_id={str(blocker / "asked")!r})
        assert asked.exception() is not None
        dcp.async_save({{"w": torch.ones(2)}}, checkpoint_id={str(blocker / "dropped")!r})
        """
    )
    record = tmp_path / "error.json"  # as under disttorch-launch, whose report names the loss
    env = {**os.environ, ERROR_FILE_ENV: str(record)}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"async_save of checkpoint '{blocker / 'dropped'}' failed: CheckpointException" in proc.stderr, (
        proc.stderr
    )
    assert "NotADirectoryError" in proc.stderr and "/asked'" not in proc.stderr, proc.stderr
    ended = RankExit(0, 0, 0, "h", 100, 0, 0.0, record=read_error_file(str(record)))
    assert not ended.failed and ended.error() == ""
    assert format_lost_save(ended).startswith(
        f"rank 0 lost a checkpoint: its async_save of checkpoint '{blocker / 'dropped'}' failed: "
        "CheckpointException: CheckpointException ranks:dict_keys([0]) ... NotADirectoryError: "
    ), format_lost_save(ended)


def test_a_save_lost_after_the_rank_recorded_its_exception_is_named_too(tmp_path, monkeypatch):
    from disttorch._error_file import LOST_SAVE, write_error_file

    monkeypatch.setenv(ERROR_FILE_ENV, str(tmp_path / "error.json"))
    write_error_file("exception", "RuntimeError: training failed")  # the script raised, then exited
    write_error_file(LOST_SAVE, "async_save of checkpoint 'ck' failed: OSError: disk full")  # (atexit)
    ended = RankExit(0, 0, 0, "h", 100, 1, 0.0, record=read_error_file(str(tmp_path / "error.json")))
    assert ended.failed_on_its_own and ended.error() == "RuntimeError: training failed"
    assert format_lost_save(ended).startswith("rank 0 lost a checkpoint: its async_save of checkpoint 'ck'")


def test_a_failure_that_a_waiting_result_call_raised_is_not_reported_at_exit():
    from disttorch.distributed.checkpoint import state_dict_saver as saver

    future = saver._SaveFuture("ck")
    started = threading.Event()

    def fail():
        started.wait()
        raise OSError("disk full")

    thread = threading.Thread(target=saver._settle, args=(future, fail))
    thread.start()
    with pytest.raises(TimeoutError):
        future.result(timeout=0)  # asked before it failed: not seen
    assert future.failure is None
    started.set()
    with pytest.raises(OSError, match="disk full"):
        future.result()  # waiting when it failed: the exit report said nobody asked
    thread.join()
    assert future.failure[1] and future.failure in saver._failed
    saver._failed.remove(future.failure)


def test_loading_a_checkpoint_into_a_tensor_of_another_shape_raises_pytorchs_value_error(tmp_path):
    dcp.save({"w": dt.ones(2, 3), "b": dt.ones(1)}, checkpoint_id=tmp_path)
    target = {"b": dt.zeros(1), "w": dt.ones(4, 3)}
    with pytest.raises(dcp.CheckpointException) as raised:  # (as PyTorch's planner: wrapped)
        dcp.load(target, checkpoint_id=tmp_path)
    size = type(dt.ones(1).shape)
    (error, frames), *others = raised.value.failures.values()
    assert list(raised.value.failures) == [0] and not others and frames
    assert type(error) is ValueError
    assert str(error) == f"Size mismatch between saved {size([2, 3])!r} and current: {size([4, 3])!r} for w"
    assert str(raised.value).startswith("CheckpointException ranks:dict_keys([0])\nTraceback")
    assert target["b"].tolist() == [0.0]  # (planned before anything is read)


def test_a_key_the_checkpoint_lacks_raises_pytorchs_error_in_a_checkpoint_exception(tmp_path):
    dcp.save({"w": dt.ones(2)}, checkpoint_id=tmp_path)
    for target in ({"zz": dt.zeros(2)}, {"q": 3}):
        with pytest.raises(dcp.CheckpointException) as raised:
            dcp.load(target, checkpoint_id=tmp_path)
        (error, _), *_ = raised.value.failures.values()
        assert type(error) is RuntimeError
        assert str(error) == f"Missing key in checkpoint state_dict: {next(iter(target))}."
