"""disttorch.viz: the text progress bar, per-rank metrics logs and the two pictures."""

import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from disttorch.viz import MetricsLog, ProgressBar, read_metrics
from disttorch.viz.__main__ import main as plot_main
from disttorch.viz.loss_plot import moving_average
from disttorch.viz.trace_plot import last_steps, load_trace

PNG = b"\x89PNG\r\n\x1a\n"


def test_progress_bar_shows_progress_loss_and_throughput():
    out = io.StringIO()
    bar = ProgressBar(4, desc="epoch 1/2", width=8, file=out, min_interval=0.0)
    bar.update(1, loss=2.0, samples=32)
    bar.update(1, loss=1.0, samples=32)
    bar.update(2, samples=64)  # the last step: drawn by close()
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("epoch 1/2 |##......| 1/4  loss 2.0000  ")
    assert lines[1].startswith("epoch 1/2 |####....| 2/4  loss 1.9000  ")  # running mean 0.9 * 2 + 0.1 * 1
    assert lines[2].startswith("epoch 1/2 |########| 4/4  loss 1.9000  ")
    assert "samples/s" in lines[2] and lines[2].endswith("0:00")


def test_progress_bar_in_a_log_waits_min_interval_between_lines():
    out = io.StringIO()
    bar = ProgressBar(100, file=out, min_interval=1e9)
    for _ in range(100):
        bar.update(1, loss=1.0)
    bar.close()
    assert out.getvalue().count("\n") == 1 and "100/100" in out.getvalue()


def test_progress_bar_in_a_log_writes_a_line_per_tenth_and_none_just_before_the_end():
    out = io.StringIO()
    bar = ProgressBar(59, file=out, min_interval=0.0)
    for _ in range(59):
        bar.update(1)
    bar.close()
    done = [line.split("| ")[1].split()[0] for line in out.getvalue().splitlines()]
    assert done == ["6/59", "12/59", "18/59", "24/59", "30/59", "36/59", "42/59", "48/59", "59/59"]


def test_disabled_progress_bar_writes_nothing():
    out = io.StringIO()
    bar = ProgressBar(2, file=out, disable=True)
    bar.update(2, loss=1.0)
    bar.close()
    assert out.getvalue() == ""


def test_metrics_log_round_trip(tmp_path):
    for rank in (0, 1):
        log = MetricsLog(tmp_path, rank=rank)
        log.write(step=1, loss=2.5 + rank)
        log.write(step=2, loss=1.5)
        log.close()
    runs = read_metrics(tmp_path)
    assert runs[1] == [{"rank": 1, "step": 1, "loss": 3.5}, {"rank": 1, "step": 2, "loss": 1.5}]
    resumed = MetricsLog(tmp_path, rank=0, append=True)
    resumed.write(step=3, loss=1.0)
    resumed.close()
    assert [r["step"] for r in read_metrics(tmp_path)[0]] == [1, 2, 3]
    with pytest.raises(FileNotFoundError, match="no rank<k>.jsonl metrics files"):
        read_metrics(tmp_path / "..")


def test_moving_average():
    assert moving_average(__import__("numpy").array([1.0, 3.0, 5.0, 7.0]), 2).tolist() == [1.0, 2.0, 4.0, 6.0]


def write_trace(path, steps=4, ranks=2):
    events = []
    for r in range(ranks):
        events.append({"name": "process_name", "ph": "M", "pid": r, "tid": 0, "args": {"name": f"rank {r}"}})
        events.append({"name": "thread_name", "ph": "M", "pid": r, "tid": 1, "args": {"name": "MainThread"}})
        events.append(
            {"name": "thread_name", "ph": "M", "pid": r, "tid": 2, "args": {"name": f"disttorch-pg0-rank{r}"}}
        )
        for s in range(steps):
            t = 1_000_000 + s * 10_000 + r * 300
            events += [
                {"name": "forward", "cat": "step", "ph": "X", "ts": t, "dur": 2000, "pid": r, "tid": 1},
                {
                    "name": "backward",
                    "cat": "step",
                    "ph": "X",
                    "ts": t + 2000,
                    "dur": 5000,
                    "pid": r,
                    "tid": 1,
                },
                {
                    "name": "bucket 0 ready",
                    "cat": "ddp",
                    "ph": "i",
                    "s": "t",
                    "ts": t + 4000,
                    "pid": r,
                    "tid": 1,
                },
                {
                    "name": "all_reduce bucket 0",
                    "cat": "comm",
                    "ph": "X",
                    "ts": t + 4000,
                    "dur": 2500,
                    "pid": r,
                    "tid": 2,
                },
                {
                    "name": "optimizer.step",
                    "cat": "step",
                    "ph": "X",
                    "ts": t + 7000,
                    "dur": 500,
                    "pid": r,
                    "tid": 1,
                },
            ]
            if s == steps - 1:  # a last bucket reduced by the training thread itself
                events.append(
                    {
                        "name": "all_reduce bucket 1",
                        "cat": "comm",
                        "ph": "X",
                        "ts": t + 6500,
                        "dur": 300,
                        "pid": r,
                        "tid": 1,
                    }
                )
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_load_trace_and_last_steps(tmp_path):
    spans = load_trace(write_trace(tmp_path / "trace.json"))
    assert len(spans) == 2 * 4 * 5 + 2
    assert min(s.start for s in spans) == 0.0
    reduce = [s for s in spans if s.name.startswith("all_reduce bucket 0")]
    assert all(s.comm for s in reduce) and not any(s.comm for s in spans if s.name == "forward")
    inline = [s for s in spans if s.name == "all_reduce bucket 1"]
    assert len(inline) == 2 and not any(s.comm for s in inline)  # drawn on the training lane
    assert reduce[0].duration == 2.5  # milliseconds
    kept = last_steps(spans, 2)
    assert sum(s.name == "forward" for s in kept) == 4  # 2 steps x 2 ranks
    assert load_trace(tmp_path) == spans  # a trace directory works too


def test_empty_trace_says_what_is_missing(tmp_path):
    (tmp_path / "trace.json").write_text(json.dumps({"traceEvents": []}))
    with pytest.raises(ValueError, match="no timed trace events"):
        load_trace(tmp_path / "trace.json")


@pytest.mark.timeout(60)
def test_plot_command_draws_traces_and_loss_curves(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    write_trace(tmp_path / "trace.json")
    assert plot_main([str(tmp_path / "trace.json"), "--out", str(tmp_path / "t.png"), "--steps", "2"]) == 0
    assert (tmp_path / "t.png").read_bytes()[:8] == PNG
    metrics = tmp_path / "metrics"
    log = MetricsLog(metrics, rank=0)
    for step in range(1, 30):
        log.write(step=step, loss=2.0 / step)
    log.close()
    assert plot_main([str(metrics), "--out", str(tmp_path / "loss.png")]) == 0
    assert (tmp_path / "loss.png").read_bytes()[:8] == PNG
    assert f"wrote {tmp_path / 'loss.png'}" in capsys.readouterr().out
    assert plot_main([str(metrics), "--out", str(tmp_path / "x.png"), "--key", "accuracy"]) == 1
    assert "has both 'step' and 'accuracy'" in capsys.readouterr().err
    assert plot_main([str(tmp_path / "missing.json"), "--out", str(tmp_path / "x.png")]) == 1
    assert "No such file" in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_a_trace_of_the_whole_run_is_not_a_black_band_and_titles_are_singular(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib import figure, image

    write_trace(tmp_path / "trace.json", steps=400)
    assert plot_main([str(tmp_path), "--out", str(tmp_path / "all.png"), "--steps", "0"]) == 0
    pixels = image.imread(tmp_path / "all.png")[..., :3]
    black = (pixels.max(axis=-1) < 0.15).mean()
    assert black < 0.02, f"{black:.1%} of the picture is black"
    titles = []
    monkeypatch.setattr(figure.Figure, "suptitle", lambda self, text, **kw: titles.append(text))
    assert plot_main([str(tmp_path), "--out", str(tmp_path / "one.png"), "--steps", "1"]) == 0
    assert titles and titles[-1].endswith("last step"), titles
    with pytest.raises(SystemExit):
        plot_main([str(tmp_path), "--out", str(tmp_path / "x.png"), "--steps", "-1"])


def test_metrics_of_a_rank_stopped_mid_line_keep_the_whole_lines(tmp_path):
    (tmp_path / "rank0.jsonl").write_text('{"rank": 0, "step": 1, "loss": 2.0}\n{"rank": 0, "st')
    assert read_metrics(tmp_path) == {0: [{"rank": 0, "step": 1, "loss": 2.0}]}


def test_what_the_readme_picture_commands_write_is_ignored_by_git():
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    readme = (root / "README.md").read_text()
    block = readme[readme.index("## Pictures: traces and loss curves") :].split("```bash")[1].split("```")[0]
    written = re.findall(r"--(?:trace-dir|log-metrics|out) (\S+)", block)
    assert sorted(written) == ["loss.png", "metrics", "trace.png", "traces"], written
    for name in written:
        check = subprocess.run(["git", "check-ignore", "-q", name], cwd=root, check=False)
        assert check.returncode == 0, (
            f"{name} (written by the README's picture commands) is not in .gitignore"
        )
