"""``torch.distributed.launcher.api``: ``elastic_launch`` runs a function on a node's workers
with torchrun's environment (accelerate's ``notebook_launcher`` does this), returns their
results, restarts them after a failure up to ``max_restarts``, then raises ``ChildFailedError``
naming the first failure."""

import json
import os
import sys
import textwrap

import pytest

import disttorch
from disttorch.distributed.elastic.multiprocessing.errors import ChildFailedError
from disttorch.distributed.launcher.api import LaunchConfig, elastic_launch


def _all_reduce(scale):
    import disttorch.distributed as dist

    dist.init_process_group()  # everything from the environment the launch gave
    t = disttorch.tensor([float(dist.get_rank() + 1)]) * scale
    dist.all_reduce(t)
    env = {k: os.environ[k] for k in ("LOCAL_RANK", "WORLD_SIZE", "TORCHELASTIC_RESTART_COUNT")}
    dist.destroy_process_group()
    return t.item(), env


def _fails_once(marker):
    if os.environ["RANK"] == "1" and not os.path.exists(marker):
        open(marker, "w").close()
        raise ValueError("rank 1 fails the first time")
    return int(os.environ["TORCHELASTIC_RESTART_COUNT"])


def _always_fails():
    if os.environ["RANK"] == "1":
        raise ValueError("rank 1 always fails")
    return "fine"


def _config(**kwargs):
    return LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=2, start_method="fork", **kwargs)


@pytest.mark.timeout(120)
def test_workers_get_torchruns_environment_and_return_their_results():
    results = elastic_launch(_config(max_restarts=0), _all_reduce)(2.0)
    assert sorted(results) == [0, 1]
    for local, (total, env) in results.items():
        assert total == 6.0 and env == {
            "LOCAL_RANK": str(local),
            "WORLD_SIZE": "2",
            "TORCHELASTIC_RESTART_COUNT": "0",
        }


@pytest.mark.timeout(120)
def test_a_failure_restarts_the_workers_then_is_reported(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # (a failed launch keeps its error files)
    assert elastic_launch(_config(max_restarts=1), _fails_once)(str(tmp_path / "failed")) == {0: 1, 1: 1}
    with pytest.raises(ChildFailedError) as caught:
        elastic_launch(_config(max_restarts=1), _always_fails)()
    message = str(caught.value)
    assert "_always_fails FAILED" in message and "rank      : 1 (local_rank: 1)" in message
    assert "ValueError: rank 1 always fails" in message
    assert list(caught.value.failures) == [1]


@pytest.mark.timeout(120)
def test_a_programs_recorded_error_reaches_the_report(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # (a failed launch keeps its error files)
    # TORCHELASTIC_ERROR_FILE was not set: @record wrote nothing, the report had the exit code only
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            from disttorch.distributed.elastic.multiprocessing.errors import record

            @record
            def main():
                raise KeyError("bad shard 3")

            main()
            """
        )
    )
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=1, max_restarts=0)
    with pytest.raises(ChildFailedError) as caught:
        elastic_launch(config, sys.executable)(str(script))
    failure = caught.value.failures[0]
    assert "KeyError: 'bad shard 3'" in failure.message and "in main" in failure.message
    assert failure.error_file.endswith(os.path.join("attempt_0", "0", "error.json"))


def test_settings_it_cannot_honour_are_refused():
    with pytest.raises(ValueError, match="min_nodes .* must equal max_nodes"):
        LaunchConfig(min_nodes=1, max_nodes=2, nproc_per_node=2)
    with pytest.raises(ValueError, match="needs rdzv_endpoint"):
        elastic_launch(LaunchConfig(min_nodes=2, max_nodes=2, nproc_per_node=1), _always_fails)()


def test_numa_options_are_accepted_as_pytorchs():
    """accelerate's notebook_launcher builds ``NumaOptions(AffinityMode.NODE)`` for the launch
    configuration when ``LaunchConfig`` has a ``numa_options`` field."""
    from disttorch.numa.binding import AffinityMode, NumaOptions

    options = NumaOptions(AffinityMode.NODE)
    assert _config(numa_options=options).numa_options is options
    assert AffinityMode("core-complex") is AffinityMode.CORE_COMPLEX and AffinityMode.SOCKET == "socket"
    assert not options.should_fall_back_if_binding_fails and disttorch.numa.binding.NumaOptions is NumaOptions
    torch = pytest.importorskip("torch")
    if torch is disttorch:
        return
    from torch.numa import binding

    assert [(m.name, m.value) for m in binding.AffinityMode] == [(m.name, m.value) for m in AffinityMode]
    assert repr(options) == repr(binding.NumaOptions(binding.AffinityMode.NODE))
    with pytest.raises(AttributeError):
        options.affinity_mode = AffinityMode.SOCKET  # frozen, as PyTorch's


@pytest.mark.parity
def test_record_copies_a_failed_childs_error_file_as_pytorchs(tmp_path, monkeypatch):
    # a ChildFailedError was recorded as an exception of its own, the child's root cause lost
    pytest.importorskip("torch")

    def parent_file(errors) -> dict:
        child = tmp_path / "child.json"
        child.write_text(
            json.dumps({"message": {"message": "ValueError: bad", "extraInfo": {"timestamp": "1"}}})
        )
        mine = tmp_path / "mine.json"
        mine.write_text("{}")  # (replaced, as PyTorch's)
        monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(mine))
        failure = errors.ProcessFailure(local_rank=0, pid=1, exitcode=3, error_file=str(child))

        @errors.record
        def main():
            raise errors.ChildFailedError("train", {0: failure})

        with pytest.raises(errors.ChildFailedError):
            main()
        return json.loads(mine.read_text())

    from torch.distributed.elastic.multiprocessing import errors as theirs

    from disttorch.distributed.elastic.multiprocessing import errors as ours

    assert parent_file(ours) == parent_file(theirs)


def test_error_handler_is_public_and_writes_pytorchs_error_file(tmp_path, monkeypatch):
    # ErrorHandler and get_error_handler could not be imported (a program importing them failed)
    from disttorch.distributed.elastic.multiprocessing.errors import ErrorHandler, get_error_handler

    path = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(path))
    handler = get_error_handler()
    assert isinstance(handler, ErrorHandler)
    handler.initialize()
    try:
        raise ValueError("bad input")
    except ValueError as e:
        handler.record_exception(e)
    message = json.loads(path.read_text())["message"]
    assert message["message"] == "ValueError: bad input"
    assert "raise ValueError" in message["extraInfo"]["py_callstack"]
