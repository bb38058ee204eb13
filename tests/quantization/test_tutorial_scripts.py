"""The dynamic quantization tutorials' scripts (examples/quantization) run unmodified under the
``import torch`` alias, and print what PyTorch prints (model, losses, logits; sizes within 1%)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "quantization"
SCRIPTS = ["dynamic_lstm_lm.py", "dynamic_bert.py"]
_TIMED = re.compile(r"elapsed|\d s, quantized|^Size")


def _run(script: str, *python_args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-W", "ignore", *python_args, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _sizes(out: str) -> list:
    return [float(line.split()[-1]) for line in out.splitlines() if line.startswith("Size (MB):")]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("script", SCRIPTS)
def test_runs_under_the_alias_and_shrinks_the_model(script):
    out = _run(script, "-m", "disttorch.as_torch")
    assert "DynamicQuantizedLinear(in_features=" in out
    float_size, quantized_size = _sizes(out)
    assert quantized_size < 0.7 * float_size


@pytest.mark.parity
@pytest.mark.timeout(400)
@pytest.mark.parametrize("script", SCRIPTS)
def test_prints_what_pytorch_prints(torch, script):
    ours, theirs = _run(script, "-m", "disttorch.as_torch"), _run(script)
    strip = lambda out: [line for line in out.splitlines() if not _TIMED.search(line)]  # noqa: E731
    assert strip(ours) == strip(theirs)
    for a, b in zip(_sizes(ours), _sizes(theirs), strict=True):
        assert abs(a - b) < 0.01 * b
