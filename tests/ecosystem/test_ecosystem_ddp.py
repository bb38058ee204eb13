"""Lightning's and accelerate's data-parallel strategies under ``disttorch-launch --as-torch
--nproc 2`` give the output PyTorch gives under torchrun (``examples/ecosystem/reference/``,
made with PyTorch 2.13 CPU, lightning 2.6.6 and accelerate 1.15): DDP, and FSDP as far as
each library offers it on CPU (Lightning refuses ``strategy="fsdp"`` there with the same
error, and shards through ``ModelParallelStrategy`` + ``fully_shard``; accelerate falls back
to DDP). Each test skips when its library is not installed."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ecosystem"
NUMBER = re.compile(r"-?\d+\.\d+")


def _matches(got: list[str], want: list[str]) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if NUMBER.sub("#", g) != NUMBER.sub("#", w):
            return False
        for a, b in zip(NUMBER.findall(g), NUMBER.findall(w)):
            if abs(float(a) - float(b)) > 1e-5 + 1e-4 * abs(float(b)):
                return False
    return True


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("script", "library"),
    [
        ("lightning_ddp.py", "lightning"),
        ("accelerate_ddp.py", "accelerate"),
        ("lightning_fsdp.py", "lightning"),
        ("accelerate_fsdp.py", "accelerate"),
    ],
)
def test_two_ranks_train_to_pytorchs_losses(tmp_path, script, library):
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed")
    if library == "accelerate" and importlib.util.find_spec("disttorch.distributed.tensor") is None:
        pytest.skip(
            "accelerate's prepare() imports torch.distributed.tensor.DTensor (the FSDP work provides it)"
        )
    env = {k: v for k, v in os.environ.items() if k != "DISTTORCH_AS_TORCH"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "disttorch.launcher", "--as-torch", "--nproc", "2", str(EXAMPLES / script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    got = [line.split("]: ", 1)[1] for line in done.stdout.splitlines() if line.startswith("[rank0]: ")]
    got = [line for line in got if line and not line.startswith(("-", "`"))]
    want = (EXAMPLES / "reference" / script.replace(".py", ".txt")).read_text().splitlines()
    assert _matches(got, want), f"got:\n{chr(10).join(got)}\nPyTorch:\n{chr(10).join(want)}"
