"""Modules training scripts and libraries import by PyTorch's names: the elastic agent's
``@record``, ``distributed_c10d``, ``utils.model_zoo``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import disttorch.distributed as dist
from disttorch.distributed import distributed_c10d as c10d
from disttorch.distributed.elastic.multiprocessing.errors import record


def test_record_passes_results_and_errors_through_and_a_clean_exit_returns(tmp_path, monkeypatch):
    @record
    def main(a, b=1):
        """Doc."""
        return a + b

    @record
    def fails():
        raise KeyError("lost")

    @record
    def exits(code):
        sys.exit(code)

    assert main(1, b=2) == 3 and main.__doc__ == "Doc." and main.__name__ == "main"
    with pytest.raises(KeyError, match="lost"):
        fails()
    assert exits(0) is None
    with pytest.raises(SystemExit) as stop:
        exits(3)
    assert stop.value.code == 3
    # the error file torchrun (and disttorch-launch) names gets PyTorch's record; it got none
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(tmp_path / "error.json"))
    with pytest.raises(KeyError):
        fails()
    message = json.loads((tmp_path / "error.json").read_text())["message"]
    assert message["message"] == "KeyError: 'lost'" and "in fails" in message["extraInfo"]["py_callstack"]
    assert message["extraInfo"]["timestamp"].isdigit()


@pytest.mark.timeout(120)
def test_a_recorded_worker_failure_reaches_the_launchers_report(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            from disttorch.distributed.elastic.multiprocessing.errors import record

            @record
            def main():
                raise RuntimeError("bad batch 7")

            main()
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "disttorch.launcher", "--nproc", "1", str(script)],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode != 0
    assert "bad batch 7" in done.stderr and "train.py" in done.stderr


def test_distributed_c10d_has_the_api_and_the_helpers_libraries_import():
    assert set(dist.__all__) <= set(dir(c10d)) and c10d.all_reduce is dist.all_reduce
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        c10d._get_default_group()
    assert c10d._get_global_rank is dist.get_global_rank
    assert not c10d._rank_not_in_group(None) and c10d._rank_not_in_group(dist.GroupMember.NON_GROUP_MEMBER)
    assert c10d.supports_complex(dist.ReduceOp.SUM) and not c10d.supports_complex(dist.ReduceOp.MAX)


@pytest.mark.parity
def test_supports_complex_answers_as_pytorch(torch):
    from torch.distributed import distributed_c10d as theirs

    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        ours, pytorch = getattr(dist.ReduceOp, name), getattr(theirs.ReduceOp, name)
        assert c10d.supports_complex(ours) == theirs.supports_complex(pytorch), name


def test_model_zoo_load_url_is_hubs_loader():
    from disttorch import hub
    from disttorch.utils import model_zoo

    assert model_zoo.load_url is hub.load_state_dict_from_url
