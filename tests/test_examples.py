"""The examples, each run briefly with 2 ranks through the real launcher (and plain python as one rank)."""

import re
import subprocess
import sys

import pytest

from launcher_scripts.harness import ROOT, launch, launcher_env

pytest.importorskip("zmq")
EXAMPLES = ROOT / "examples"


def run_ok(*args, timeout=90, env=None):
    """Run the launcher; assert it succeeded; return rank 0's output lines without their prefix."""
    result = launch(*args, timeout=timeout, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def rank0(text):
    return "\n".join(line[len("[rank0]: ") :] for line in text.splitlines() if line.startswith("[rank0]: "))


@pytest.mark.timeout(60)
def test_allreduce_by_hand_prints_each_step_and_agrees_with_all_reduce():
    out = rank0(run_ok("--nproc", 2, EXAMPLES / "allreduce_by_hand.py").stdout)
    assert "rank 1 starts with [   10    20 |   30    40 ]" in out
    # 2 ranks: one reduce-scatter step and one all-gather step
    assert (
        "reduce-scatter step 0: rank 0 sends chunk 1 to rank 1, adds   chunk 0 from rank 1 -> "
        "[   11    22 |    3     4 ]" in out
    )
    assert (
        "reduce-scatter step 0: rank 1 sends chunk 0 to rank 0, adds   chunk 1 from rank 0 -> "
        "[   10    20 |   33    44 ]" in out
    )
    assert (
        "all-gather     step 0: rank 0 sends chunk 0 to rank 1, copies chunk 1 from rank 1 -> "
        "[   11    22 |   33    44 ]" in out
    )
    assert "reduce-scatter step 1" not in out
    assert "by hand         : [   11    22 |   33    44 ]" in out
    assert "dist.all_reduce : [   11    22 |   33    44 ]" in out
    assert "every rank agrees with dist.all_reduce: True" in out


@pytest.mark.timeout(60)
def test_allreduce_by_hand_runs_with_plain_python_as_one_rank():
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "allreduce_by_hand.py"), "--chunk", "3"],
        cwd=ROOT,
        env=launcher_env(),
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert result.returncode == 0, result.stderr
    assert "by hand         : [    1     2     3 ]" in result.stdout
    assert "every rank agrees with dist.all_reduce: True" in result.stdout


@pytest.mark.timeout(60)
def test_ddp_from_scratch_gives_identical_parameters():
    out = rank0(run_ok("--nproc", 2, EXAMPLES / "ddp_from_scratch.py", "--steps", 3).stdout)
    by_ddp = float(re.search(r"max \|by hand - DDP\| *= (\S+)", out).group(1))
    single = float(re.search(r"max \|by hand - one process on the batch of 16\| *= (\S+)", out).group(1))
    assert by_ddp <= 1e-6, out
    assert single <= 1e-5, out
    assert "parameters identical on every rank: True" in out
    assert "2 rank(s) x batch 8, 3 steps" in out


@pytest.mark.timeout(90)
def test_fsdp_by_hand_matches_fully_shard_and_one_process():
    out = rank0(run_ok("--nproc", 2, EXAMPLES / "fsdp_by_hand.py", "--steps", 3).stdout)
    assert "all-gather weight (16, 10) x 2 ranks -> (32, 10)" in out, out
    assert "reduce-scatter grad (32, 10) -> rank 0 keeps rows 0..15" in out, out
    by_hand = float(re.search(r"max \|by hand - fully_shard\| *= (\S+)", out).group(1))
    single = float(re.search(r"max \|fully_shard - one process on the batch of 16\| *= (\S+)", out).group(1))
    ddp, fsdp = map(int, re.search(r"DDP (\d+), FSDP (\d+)", out).groups())
    assert by_hand <= 1e-6 and single <= 1e-5, out
    assert fsdp < 0.6 * ddp, out


@pytest.mark.timeout(90)
def test_train_digits_checkpoints_resumes_and_traces(tmp_path):
    ckpt, traces, metrics = tmp_path / "ckpt", tmp_path / "traces", tmp_path / "metrics"
    short = ("--epochs", 2, "--max-steps", 3, "--checkpoint-dir", ckpt)
    first = run_ok(
        "--nproc",
        2,
        "--trace-dir",
        traces,
        EXAMPLES / "train_digits.py",
        *short,
        "--log-metrics",
        metrics,
        "--bucket-cap-mb",
        0.1,
    )
    out = rank0(first.stdout)
    assert "2 rank(s), 3823 training images, 3 steps of 2 x 32 images per epoch" in out
    assert f"saved {ckpt / 'step-000000002.pt'}" in out
    accuracy = re.search(r"test accuracy: (\d+\.\d\d)% \(1797 test images\)", out).group(1)
    assert "epoch 2/2 |" in rank0(first.stderr) and "samples/s" in first.stderr  # the progress bar
    assert (ckpt / "latest").read_text() == "step-000000002.pt"
    assert [len((metrics / f"rank{r}.jsonl").read_text().splitlines()) for r in (0, 1)] == [6, 6]

    # --resume restores the model of the last epoch: nothing left to train, the same accuracy
    again = rank0(run_ok("--nproc", 2, EXAMPLES / "train_digits.py", *short, "--resume").stdout)
    assert (
        f"{ckpt / 'step-000000002.pt'} is the end of a finished run (2 of 2 epochs): nothing to train"
        in again
    )
    assert "resuming from" not in again and "trained 0 epoch(s)" not in again
    assert f"test accuracy: {accuracy}%" in again

    # the merged trace of the first run renders to a PNG
    from disttorch.viz.__main__ import main as plot

    pytest.importorskip("matplotlib")
    assert plot([str(traces / "trace.json"), "--out", str(tmp_path / "trace.png")]) == 0
    assert (tmp_path / "trace.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.timeout(90)
def test_train_digits_refuses_a_checkpoint_folder_another_run_holds(tmp_path):
    import fcntl

    with open(tmp_path / ".lock", "w") as held:  # another run's rank 0 holds the folder
        held.write("pid 4242 on elsewhere\n")
        held.flush()
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = launch(
            "--nproc",
            2,
            EXAMPLES / "train_digits.py",
            "--epochs",
            1,
            "--max-steps",
            1,
            "--checkpoint-dir",
            tmp_path,
        )
    assert result.returncode == 1
    assert f"checkpoint folder '{tmp_path}' is in use by another run (pid 4242 on elsewhere)" in result.stderr
    assert "rank 0 was the first to fail: RuntimeError" in result.stderr
    assert not list(tmp_path.glob("step-*.pt"))


@pytest.mark.timeout(90)
def test_train_digits_continues_after_a_killed_rank_is_restarted(tmp_path):
    # rank 1 is killed during epoch 2 or 3 (its 14th collective); the restarted job resumes from the checkpoint
    result = run_ok(
        "--nproc",
        2,
        "--max-restarts",
        1,
        "--inject-fault",
        "kill:rank=1:at=collective:14",
        "--stop-delay",
        0,
        EXAMPLES / "train_digits.py",
        "--epochs",
        4,
        "--max-steps",
        3,
        "--checkpoint-dir",
        tmp_path,
    )
    out = rank0(result.stdout)
    resumed = re.search(r"resuming from \S+step-00000000(\d)\.pt at epoch (\d)", out)
    assert resumed and int(resumed.group(2)) == int(resumed.group(1)) + 1 >= 2, out
    assert "test accuracy:" in out
    assert (tmp_path / "latest").read_text() == "step-000000004.pt"


@pytest.mark.timeout(90)
def test_train_gpt_trains_and_prints_a_sample():
    out = rank0(
        run_ok(
            "--nproc",
            2,
            EXAMPLES / "train_gpt.py",
            "--steps",
            4,
            "--eval-every",
            4,
            "--layers",
            1,
            "--embd",
            32,
            "--block-size",
            16,
            "--batch-size",
            4,
            "--sample-chars",
            40,
        ).stdout
    )
    assert "2 rank(s); 1,115,394 characters, vocabulary of 65" in out
    before = float(re.search(r"held-out loss before training: (\d+\.\d+)", out).group(1))
    after = float(re.search(r"step 4: held-out loss (\d+\.\d+)", out).group(1))
    assert after < before
    sample = out[out.index("sample at temperature 0.8:\n") + len("sample at temperature 0.8:\n") :]
    assert sample.startswith("ROMEO:\n") and len(sample.split("\ntrained")[0]) >= 40
    done = re.search(r"trained 4 steps in [\d.]+ s: ([\d,.]+) windows/s \(([\d,]+) characters/s\)", out)
    assert done, out
    windows, characters = (float(g.replace(",", "")) for g in done.groups())
    assert abs(characters - 16 * windows) <= 16  # a window is 16 characters: samples count windows
