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


def test_other_dtype_mixes_raise_pytorchs_messages():
    """The first parameter given decides: unlike the input's dtype, the call is "mixed" and
    takes only float32 parameters with a float16/bfloat16 input; like it, every parameter must
    share the input's dtype."""
    f = disttorch.nn.functional
    x32, x64 = disttorch.randn(2, 4), disttorch.randn(2, 4, dtype=disttorch.float64)
    w32, w64 = disttorch.ones(4), disttorch.ones(4, dtype=disttorch.float64)
    with pytest.raises(RuntimeError, match=r"^mixed dtype \(CPU\): all inputs must share same datatype\.$"):
        nn.LayerNorm(4)(x64)
    with pytest.raises(RuntimeError, match=r"^mixed dtype \(CPU\): all inputs must share same datatype\.$"):
        f.group_norm(x64, 2, w32, w32)
    for call in (
        lambda: f.layer_norm(x32, (4,), w64, w64),
        lambda: f.layer_norm(x32, (4,), None, w64),
        lambda: f.group_norm(x32.half(), 2, w64, w64),
        lambda: f.batch_norm(x64, w64 * 0, w64, w32, w32),  # float64 running statistics
    ):
        with pytest.raises(
            RuntimeError, match=r"^mixed dtype \(CPU\): expect parameter to have scalar type of Float$"
        ):
            call()
    with pytest.raises(RuntimeError, match="^expected scalar type Float but found Double"):
        f.batch_norm(x32, None, None, w32, w64, training=True)


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


def _layer_norm_16_bit(lib, low: str, threads: int, mixed: bool = False) -> list:
    """LayerNorm with 16-bit input and parameters (float32 ones when ``mixed``): output and
    the three gradients."""
    before = lib.get_num_threads()
    lib.set_num_threads(threads)
    try:
        g = np.random.default_rng(1)
        dt = getattr(lib, low)
        x = lib.tensor(g.standard_normal((16, 6, 8)).astype(np.float32)).to(dt).requires_grad_()
        m = lib.nn.LayerNorm(8) if mixed else lib.nn.LayerNorm(8).to(dt)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(g.standard_normal(8).astype(np.float32)))
            m.bias.copy_(lib.tensor(g.standard_normal(8).astype(np.float32)))
        y = m(x)
        y.backward(lib.tensor(g.standard_normal((16, 6, 8)).astype(np.float32)).to(dt))
        return [t.detach().float().numpy() for t in (y, x.grad, m.weight.grad, m.bias.grad)]
    finally:
        lib.set_num_threads(before)


def test_16_bit_layer_norm_sums_parameter_grads_in_a_16_bit_buffer_per_thread():
    """PyTorch's CPU kernel adds each row's bias gradient into a bfloat16 buffer (rounded
    after every row), one buffer per thread's share of the rows, then adds the buffers."""
    g = _layer_norm_16_bit(disttorch, "bfloat16", 2)
    dy = np.random.default_rng(1)
    dy.standard_normal((16, 6, 8)), dy.standard_normal(16)
    rows = disttorch.tensor(dy.standard_normal((16, 6, 8)).astype(np.float32)).bfloat16().float().numpy()
    rows = rows.reshape(96, 8)
    shares = []
    for share in (rows[:48], rows[48:]):
        acc = disttorch.zeros(8, dtype=disttorch.bfloat16)
        for r in share:
            acc = (acc.float() + disttorch.tensor(r)).bfloat16()
        shares.append(acc.float())
    np.testing.assert_array_equal(g[3], (shares[0] + shares[1]).bfloat16().float().numpy())
    assert not np.array_equal(g[3], disttorch.tensor(rows.sum(0)).bfloat16().float().numpy())


def test_16_bit_layer_norm_with_float32_parameters_sums_their_grads_in_a_16_bit_buffer():
    # the float32 parameters' gradients were exact float32 sums over the rows (the layer ran
    # on a float32 copy of the input); PyTorch's kernel adds each row into a bfloat16 buffer
    g = _layer_norm_16_bit(disttorch, "bfloat16", 1, mixed=True)
    dy = np.random.default_rng(1)
    dy.standard_normal((16, 6, 8)), dy.standard_normal(8), dy.standard_normal(8)
    rows = (
        disttorch.tensor(dy.standard_normal((16, 6, 8)).astype(np.float32)).bfloat16().float().reshape(96, 8)
    )
    acc = disttorch.zeros(8, dtype=disttorch.bfloat16)
    for r in rows:
        acc = (acc.float() + r).bfloat16()
    np.testing.assert_array_equal(g[3], acc.float().numpy())
    assert not np.array_equal(g[3], rows.sum(0).numpy())


@pytest.mark.parity
@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("threads", [1, 2])
def test_16_bit_layer_norm_gradients_match_torch(low, threads, mixed):
    torch = pytest.importorskip("torch")
    ours = _layer_norm_16_bit(disttorch, low, threads, mixed)
    theirs = _layer_norm_16_bit(torch, low, threads, mixed)
    for a, b in zip(ours[2:], theirs[2:]):  # weight, bias: bit for bit (a float16 ulp here and there)
        np.testing.assert_allclose(a, b, rtol=2e-3 if low == "float16" else 0, atol=0)
    for a, b in zip(ours[:2], theirs[:2]):  # output, input gradient: an ulp on a few entries
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-3)
