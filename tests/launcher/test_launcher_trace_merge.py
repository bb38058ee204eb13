"""disttorch.launcher.trace_merge: per-rank Chrome traces merged into one file with a row per rank."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from disttorch.launcher.trace_merge import merge_traces

from launcher_scripts.harness import SCRIPTS, launch


def test_merge_hand_made_files(tmp_path):
    (tmp_path / "rank0.json").write_text(
        json.dumps(
            [
                {"name": "forward", "ph": "X", "ts": 1, "dur": 2, "pid": 999, "tid": 1},
                {"name": "process_name", "ph": "M", "pid": 999, "args": {"name": "python"}},
            ]
        )
    )
    (tmp_path / "rank10.json").write_text(
        json.dumps(
            {
                "traceEvents": [
                    {"name": "allreduce", "ph": "B", "ts": 5, "pid": 7, "tid": "comm"},
                    {"name": "allreduce", "ph": "E", "ts": 9, "pid": 7, "tid": "comm"},
                ]
            }
        )
    )
    # rank 2 was killed while writing: an array cut off in the middle of its second event
    (tmp_path / "rank2.json").write_text(
        '[{"name": "backward", "ph": "X", "ts": 3, "dur": 1, "tid": 1},\n{"name": "step", "ph": "X", "ts": 4'
    )
    (tmp_path / "notes.json").write_text("[]")  # not a rank file: ignored
    out = merge_traces(str(tmp_path))
    assert out == str(tmp_path / "trace.json")
    events = json.loads(Path(out).read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {0: "rank 0", 2: "rank 2", 10: "rank 10"}
    work = [(e["pid"], e["name"], e["ph"]) for e in events if e["ph"] != "M"]
    assert work == [(0, "forward", "X"), (2, "backward", "X"), (10, "allreduce", "B"), (10, "allreduce", "E")]
    sort = {e["pid"]: e["args"]["sort_index"] for e in events if e["name"] == "process_sort_index"}
    assert sort == {0: 0, 2: 2, 10: 10}
    threads = [(e["pid"], e["tid"], e["args"]["name"]) for e in events if e["name"] == "thread_name"]
    assert len(threads) == 1 and threads[0][2] == "comm"  # a named thread gets a number
    assert {e["tid"] for e in events if e["name"] == "allreduce"} == {threads[0][1]}
    assert all(isinstance(e["tid"], int) for e in events)


def test_nothing_to_merge_and_bad_content(tmp_path):
    assert merge_traces(str(tmp_path)) is None
    assert merge_traces(str(tmp_path / "missing")) is None
    (tmp_path / "rank0.json").write_text('{"traceEvents": 5}')
    with pytest.raises(ValueError, match="expected a JSON array of trace events"):
        merge_traces(str(tmp_path))


@pytest.mark.timeout(60)
def test_launcher_sets_trace_dir_and_merges(tmp_path):
    (tmp_path / "rank7.json").write_text("[]")  # left by an earlier run with more ranks: removed
    result = launch("--nproc", 3, "--trace-dir", tmp_path, SCRIPTS / "trace_writer.py")
    assert result.returncode == 0, result.stderr
    assert f"merged traces into {tmp_path / 'trace.json'}" in result.stderr
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert sorted({e["pid"] for e in events}) == [0, 1, 2]
    assert sum(e["name"] == "allreduce" for e in events) == 3


@pytest.mark.timeout(60)
def test_launcher_creates_the_trace_dir(tmp_path):
    trace_dir = tmp_path / "new" / "traces"
    result = launch("--nproc", 1, SCRIPTS / "trace_writer.py", env={"DISTTORCH_TRACE_DIR": str(trace_dir)})
    assert result.returncode == 0, result.stderr
    assert (trace_dir / "rank0.json").exists() and (trace_dir / "trace.json").exists()


def test_command_line(tmp_path):
    (tmp_path / "rank1.json").write_text('[{"name": "step", "ph": "X", "ts": 0, "dur": 1, "tid": 0}]')
    done = subprocess.run(
        [sys.executable, "-m", "disttorch.launcher.trace_merge", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0 and done.stdout.strip() == str(tmp_path / "trace.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "disttorch.launcher.trace_merge", str(empty)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 1 and "no rank<k>.json files in" in done.stderr
