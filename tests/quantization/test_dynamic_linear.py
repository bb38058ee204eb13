"""Dynamic quantization of Linear layers: quantize_dynamic, DynamicQuantizedLinear's numerics
(bit for bit as PyTorch's fbgemm), repr, state_dict and errors."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq
from disttorch.ao.nn.quantized import dynamic as nnqd

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
]


def _model(lib, k=16, n=5):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(k, 8), lib.nn.ReLU(), lib.nn.Linear(8, n, bias=False))


def test_quantize_dynamic_swaps_linears_and_keeps_the_rest():
    model = _model(dt)
    q = aq.quantize_dynamic(model, {dt.nn.Linear}, dtype=dt.qint8)
    assert type(q[0]) is nnqd.Linear and type(q[1]) is dt.nn.ReLU and q[2].bias() is None
    assert type(model[0]) is dt.nn.Linear  # not in place
    assert not hasattr(q[0], "qconfig") and not q.training
    assert q[0].weight().dtype is dt.qint8 and q[0].weight().qscheme() is dt.per_tensor_affine
    assert dt.quantization.quantize_dynamic is aq.quantize_dynamic
    x = dt.randn(4, 16)
    expected = model(x).detach().numpy()
    np.testing.assert_allclose(q(x).numpy(), expected, atol=0.05)
    assert q(dt.randn(2, 3, 16)).shape == (2, 3, 5)


def test_repr_state_dict_and_load():
    q = aq.quantize_dynamic(_model(dt), {dt.nn.Linear}, dtype=dt.qint8)
    assert repr(q[0]) == (
        "DynamicQuantizedLinear(in_features=16, out_features=8, dtype=disttorch.qint8, "
        "qscheme=disttorch.per_tensor_affine)"
    )
    sd = q.state_dict()
    assert list(sd) == [
        "0.scale",
        "0.zero_point",
        "0._packed_params.dtype",
        "0._packed_params._packed_params",
        "2.scale",
        "2.zero_point",
        "2._packed_params.dtype",
        "2._packed_params._packed_params",
    ]
    assert sd["0.zero_point"].dtype is dt.int64 and sd["0._packed_params.dtype"] is dt.qint8
    fresh = aq.quantize_dynamic(_model(dt, k=16), {dt.nn.Linear}, dtype=dt.qint8)
    fresh[0].set_weight_bias(dt.quantize_per_tensor(dt.zeros(8, 16), 1.0, 0, dt.qint8), dt.zeros(8))
    fresh.load_state_dict(sd)
    x = dt.randn(3, 16)
    np.testing.assert_array_equal(fresh(x).numpy(), q(x).numpy())


def test_errors():
    q = aq.quantize_dynamic(_model(dt), {dt.nn.Linear}, dtype=dt.qint8)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        q(dt.randn(2, 15))


@pytest.mark.parity
@pytest.mark.parametrize("per_channel", [False, True])
def test_outputs_bitwise_as_pytorch(torch, per_channel):
    rng = np.random.default_rng(int(per_channel))
    for _ in range(12):
        k, n = int(rng.integers(1, 70)), int(rng.integers(1, 40))
        w = (rng.standard_normal((n, k)) * rng.uniform(0.01, 1)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        x = (
            rng.standard_normal((int(rng.integers(1, 9)), k)) * rng.uniform(0.01, 10) + rng.uniform(-1, 1)
        ).astype(np.float32)
        results = []
        for lib, qlib in ((torch, torch.ao.quantization), (dt, aq)):
            layer = lib.nn.Linear(k, n)
            layer.weight.data = lib.from_numpy(w.copy())
            layer.bias.data = lib.from_numpy(b.copy())
            spec = {lib.nn.Linear: qlib.per_channel_dynamic_qconfig} if per_channel else {lib.nn.Linear}
            q = qlib.quantize_dynamic(lib.nn.Sequential(layer), spec, dtype=lib.qint8)
            results.append((q[0].weight().int_repr().numpy(), q(lib.from_numpy(x)).detach().numpy()))
        np.testing.assert_array_equal(results[0][0], results[1][0])
        np.testing.assert_array_equal(results[0][1], results[1][1])


def _float16_run(lib) -> list:
    nn = lib.nn
    rng = np.random.default_rng(0)
    lib.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(20, 7), nn.ReLU(), nn.Linear(7, 3), nn.LSTM(3, 5, num_layers=2), nn.GRU(5, 4)
    )
    q = lib.ao.quantization.quantize_dynamic(model, dtype=lib.float16)
    x = lib.tensor(rng.standard_normal((6, 20)).astype(np.float32))
    h = q[2](q[1](q[0](x)))
    seq = q[3](h[:, None])[0]
    return [
        repr(q).replace("disttorch.", "torch."),
        list(q.state_dict()),
        q[0].weight().numpy(),
        h.detach().numpy(),
        seq.detach().numpy(),
        q[4](seq)[0].detach().numpy(),
    ]


@pytest.mark.parity
def test_float16_dynamic_as_pytorch(torch):
    ours, theirs = _float16_run(dt), _float16_run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_array_equal(ours[2], theirs[2])  # the weight rounded to float16
    for a, b in zip(ours[3:], theirs[3:]):  # float32 products: equal to their summation order
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_float16_weights_saturate_with_a_warning():
    layer = dt.nn.Linear(2, 1)
    with dt.no_grad():
        layer.weight.copy_(dt.tensor([[1e6, 1.0 + 2**-12]]))
    with pytest.warns(UserWarning, match="outside the range of fp16"):
        q = aq.quantize_dynamic(dt.nn.Sequential(layer), {dt.nn.Linear}, dtype=dt.float16)
    assert q[0].weight().tolist() == [[65504.0, 1.0]]  # clamped; rounded to float16 (ties to even)
    assert "dtype=disttorch.float16)" in repr(q[0]) and "qscheme" not in repr(q[0])
    with pytest.raises(ValueError, match="Don't know how to quantize with default settings"):
        aq.quantize_dynamic(dt.nn.Sequential(layer), dtype=dt.quint8)
