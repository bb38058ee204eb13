"""Dynamically quantized LSTM and GRU: swapped in by quantize_dynamic, reprs, state_dict keys,
outputs within float32 rounding of PyTorch's (the weights bit for bit)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq
from disttorch.ao.nn.quantized import dynamic as nnqd

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
]

CONFIGS = [{}, {"num_layers": 2}, {"bidirectional": True, "batch_first": True}]


def _quantized(lib, qlib, kind, **kwargs):
    lib.manual_seed(0)
    float_rnn = getattr(lib.nn, kind)(8, 16, **kwargs)
    holder = lib.nn.ModuleList([float_rnn])
    return float_rnn, qlib.quantize_dynamic(holder, {getattr(lib.nn, kind)}, dtype=lib.qint8)[0]


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_swapped_and_close_to_float(kind):
    float_rnn, q = _quantized(dt, aq, kind, num_layers=2)
    assert type(q) is getattr(nnqd, kind)
    assert repr(q) == f"DynamicQuantized{kind}(8, 16, num_layers=2)"
    assert list(q.state_dict()) == ["_all_weight_values.0.param", "_all_weight_values.1.param"]
    x = dt.randn(5, 3, 8)
    out, state = q(x)
    expected, _ = float_rnn(x)
    assert out.shape == (5, 3, 16)
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), atol=0.02)
    unbatched, _ = q(x[:, 0])
    np.testing.assert_allclose(unbatched.numpy(), q(x[:, :1])[0].numpy()[:, 0], atol=1e-6)


def test_errors():
    lstm = dt.nn.LSTM(8, 16, bias=False)
    with pytest.raises(AssertionError, match="mod.bias must be True"):
        aq.quantize_dynamic(dt.nn.ModuleList([lstm]), {dt.nn.LSTM}, dtype=dt.qint8)
    _, q = _quantized(dt, aq, "GRU")
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        q(dt.randn(5, 3, 7))


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_outputs_as_pytorch(torch, kind, kwargs):
    torch_float, torch_q = _quantized(torch, torch.ao.quantization, kind, **kwargs)
    ours_float = getattr(dt.nn, kind)(8, 16, **kwargs)
    for name, p in torch_float.named_parameters():
        getattr(ours_float, name).data = dt.from_numpy(p.detach().numpy().copy())
    ours_q = aq.quantize_dynamic(dt.nn.ModuleList([ours_float]), {getattr(dt.nn, kind)}, dtype=dt.qint8)[0]
    assert repr(ours_q) == repr(torch_q)
    x = np.random.default_rng(1).standard_normal((5, 3, 8)).astype(np.float32)
    theirs, ours = torch_q(torch.from_numpy(x)), ours_q(dt.from_numpy(x))
    # float32 rounding of sigmoid/tanh only: about half the elements are bit for bit equal
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].detach().numpy(), rtol=0, atol=5e-7)
    h_theirs = theirs[1] if kind == "GRU" else theirs[1][0]
    h_ours = ours[1] if kind == "GRU" else ours[1][0]
    np.testing.assert_allclose(h_ours.numpy(), h_theirs.detach().numpy(), rtol=0, atol=5e-7)


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("kwargs", CONFIGS, ids=["one", "two_layers", "bidirectional"])
def test_the_random_stream_after_quantize_dynamic_is_pytorchs(torch, kind, kwargs):
    """PyTorch's quantized layer draws placeholder weights with ``randn`` in its constructor:
    a program's next random numbers are the same here."""
    import torch.ao.quantization as tq

    _quantized(dt, aq, kind, **kwargs)
    ours = dt.randn(3).tolist()
    _quantized(torch, tq, kind, **kwargs)
    assert ours == torch.randn(3).tolist()


def _warnings_of(lib, qlib):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qlib.quantize_dynamic(lib.nn.Sequential(lib.nn.Linear(2, 2)), {lib.nn.Linear}, dtype=lib.qint8)
    return [(w.category.__name__, str(w.message)) for w in caught if w.category is DeprecationWarning]


@pytest.mark.parity
def test_quantize_dynamic_warns_pytorchs_deprecation(torch):
    import torch.ao.quantization as tq

    ours = _warnings_of(dt, aq)
    assert ours and ours[0][1].startswith("torch.ao.quantization is deprecated")
    assert ours == _warnings_of(torch, tq)
