"""Normalisation layers on float16/bfloat16 inputs with float32 parameters (what
``autocast`` produces: a bfloat16 convolution feeding a float32 ``BatchNorm2d``): PyTorch's
CPU build computes in float32 and returns the input's dtype."""

import numpy as np
import pytest

import disttorch
from disttorch import nn

LAYERS = [
    ("BatchNorm2d", (3,), (2, 3, 4, 4)),
    ("LayerNorm", (4,), (2, 3, 4)),
    ("GroupNorm", (1, 3), (2, 3, 5)),
    ("InstanceNorm2d", (3,), (2, 3, 4, 4)),
]


@pytest.mark.parametrize("name,args,shape", LAYERS)
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_low_precision_input_float32_parameters(name, args, shape, low):
    kw = {"affine": True, "track_running_stats": True} if name == "InstanceNorm2d" else {}
    m = getattr(nn, name)(*args, **kw)
    dt = getattr(disttorch, low)
    x = disttorch.randn(*shape).to(dt).requires_grad_()
    y = m(x)
    assert y.dtype == dt
    y.float().sum().backward()
    assert x.grad.dtype == dt and m.weight.grad.dtype == disttorch.float32
    ref = getattr(nn, name)(*args, **kw)
    ref.load_state_dict(m.state_dict())
    expected = ref(x.detach().float())
    np.testing.assert_allclose(y.float().detach().numpy(), expected.detach().numpy(), atol=0.05)
    m.eval()
    assert m(x).dtype == dt


def test_float64_input_with_float32_weight_still_raises():
    with pytest.raises(RuntimeError, match="expected scalar type"):
        nn.LayerNorm(4)(disttorch.randn(2, 4, dtype=disttorch.float64))


def test_autocast_conv_into_batchnorm():
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    with disttorch.autocast("cpu", dtype=disttorch.bfloat16):
        out = net(disttorch.randn(2, 1, 6, 6))
    assert out.dtype == disttorch.bfloat16
    out.float().sum().backward()
    assert net[1].weight.grad.dtype == disttorch.float32 and net[1].running_mean.dtype == disttorch.float32


@pytest.mark.parity
@pytest.mark.parametrize("name,args,shape", LAYERS)
def test_matches_torch(name, args, shape):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    outs = []
    for lib in (disttorch, torch):
        m = getattr(lib.nn, name)(*args)
        y = m(lib.tensor(x).to(lib.bfloat16))
        outs.append((str(y.dtype).split(".")[-1], y.float().detach().numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[0][1], outs[1][1], atol=0.02)
