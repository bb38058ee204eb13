"""PyTorch's older homes of the quantized and fused modules: ``torch.nn.quantized``,
``torch.nn.qat``, ``torch.nn.intrinsic`` (and their submodules) are ``torch.ao.nn``'s, both as
attributes and as imports through the alias."""

from __future__ import annotations

import subprocess
import sys

import pytest

import disttorch as dt
from disttorch.as_torch._finder import _real_name


def test_the_alias_imports_the_moved_modules_from_their_new_home():
    assert _real_name("torch.nn.quantized") == "disttorch.ao.nn.quantized"
    assert _real_name("torch.nn.quantized.dynamic") == "disttorch.ao.nn.quantized.dynamic"
    assert _real_name("torch.nn.intrinsic.qat") == "disttorch.ao.nn.intrinsic.qat"
    assert _real_name("torch.nn.quantizedx") == "disttorch.nn.quantizedx"


def test_attributes_of_nn_are_the_same_modules():
    from disttorch.ao import nn as ao_nn

    assert (
        dt.nn.quantized is ao_nn.quantized and dt.nn.qat is ao_nn.qat and dt.nn.intrinsic is ao_nn.intrinsic
    )
    assert dt.nn.quantized.FloatFunctional is ao_nn.quantized.FloatFunctional


@pytest.mark.timeout(60)
def test_an_old_quantization_script_imports_under_the_alias():
    code = (
        "import torch.nn.quantized.dynamic as d\n"
        "from torch.nn.intrinsic import ConvBnReLU2d\n"
        "import torch\n"
        "print(d.Linear is torch.ao.nn.quantized.dynamic.Linear, ConvBnReLU2d is torch.ao.nn.intrinsic.ConvBnReLU2d)\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "disttorch.as_torch", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "True True", out.stderr
