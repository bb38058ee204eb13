"""``float()``/``complex()`` of a tensor that requires grad warns once per process, as PyTorch
2.13 does; ``int()``, ``item()``, formatting, detached tensors and reads under ``no_grad`` do not."""

import subprocess
import sys

import pytest

SCRIPT = """
import warnings
import {lib} as torch
x = torch.ones(2, requires_grad=True)
l = (x * 2).sum()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    int(l), l.item(), "{{:.2f}}".format(l), float(l.detach()), complex(torch.ones(()))
    with torch.no_grad():
        float(l)  # (LBFGS reads its loss so: quietly)
    print(len(caught))
    float(l)
    float(l)
    complex(l)
    print([str(w.message).splitlines()[0] for w in caught], [w.lineno for w in caught])
"""


def _run(lib: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(lib=lib)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_first_float_of_a_tensor_in_a_graph_warns_once():
    assert _run("disttorch") == (
        "0\n['Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.'] [12]\n"
    )


@pytest.mark.parity
def test_as_pytorch_warns(torch):
    assert _run("disttorch") == _run("torch")
