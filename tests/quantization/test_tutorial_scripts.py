"""The quantization tutorials' scripts (examples/quantization) run unmodified under the
``import torch`` alias, and print what PyTorch prints: the dynamic ones everything (model,
losses, logits; sizes within 1%); the static/QAT one its losses and accuracies, its model
but for the calibrated scales' last digits (float training rounds differently), sizes within
10%. Its quantization-aware training is chaotic (a fake-quantized value one rounding step
apart changes the next step): the QAT loss is left out and the QAT accuracy compared to two
of its 256 test images."""

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "quantization"
SCRIPTS = ["dynamic_lstm_lm.py", "dynamic_bert.py", "static_cnn.py"]
_TIMED = re.compile(r"elapsed|\d s, quantized|^Size")
_SCALES = re.compile(r"scale=[0-9.e-]+")
_TOLERANCE = {"static_cnn.py": 0.1}
_QAT_ACCURACY = "qat quantized accuracy"
_NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")


def _same_line(ours: str, theirs: str) -> bool:
    """The same text, and numbers equal to 1e-4 relative (a float path's last printed digit
    moves with the CPU's kernels: PyTorch's SLEEF on AVX-512, for one)."""
    a, b = _NUMBER.findall(ours), _NUMBER.findall(theirs)
    return (
        _NUMBER.sub("#", ours) == _NUMBER.sub("#", theirs)
        and len(a) == len(b)
        and all(abs(float(x) - float(y)) <= 1e-4 * abs(float(y)) + 2e-6 for x, y in zip(a, b))
    )


@functools.cache  # each script runs once per library, for both tests
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
    assert "QuantizedLinear(in_features=" in out
    float_size, quantized_size = _sizes(out)[:2]
    assert quantized_size < 0.7 * float_size


@pytest.mark.parity
@pytest.mark.timeout(400)
@pytest.mark.parametrize("script", SCRIPTS)
def test_prints_what_pytorch_prints(torch, script):
    ours, theirs = _run(script, "-m", "disttorch.as_torch"), _run(script)

    def strip(out: str) -> list:
        lines = [line for line in out.splitlines() if not _TIMED.search(line)]
        if script in _TOLERANCE:
            lines = [_SCALES.sub("scale=", line) for line in lines if not line.startswith("qat loss")]
        return lines

    mine, pytorch = strip(ours), strip(theirs)
    assert len(mine) == len(pytorch), (mine, pytorch)
    for i, (a, b) in enumerate(zip(mine, pytorch)):
        if a.startswith(_QAT_ACCURACY) and b.startswith(_QAT_ACCURACY):
            assert abs(float(a.split()[-1]) - float(b.split()[-1])) <= 2 / 256 + 1e-9, (a, b)
            mine[i] = pytorch[i]
    assert all(_same_line(a, b) for a, b in zip(mine, pytorch)), [
        (a, b) for a, b in zip(mine, pytorch) if a != b
    ]
    for a, b in zip(_sizes(ours), _sizes(theirs), strict=True):
        assert abs(a - b) < _TOLERANCE.get(script, 0.01) * b


@pytest.mark.timeout(120)
def test_qat_mobilenet_runs_under_the_alias():
    """The MobileNetV2 QAT script (its numbers are compared with PyTorch's in test_qat_mobilenet)."""
    out = _run("qat_mobilenet.py", "-m", "disttorch.as_torch")
    assert "(0): ConvBnReLU2d(" in out and "FusedMovingAvgObsFakeQuantize(" in out
    assert out.count(": loss ") == 6 and "epoch 2: quantized accuracy" in out
    assert "QuantizedConvReLU2d(" in out and "(skip_add): QFunctional(" in out
    assert "output integers [[" in out
