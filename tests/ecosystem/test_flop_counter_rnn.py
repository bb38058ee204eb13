"""``FlopCounterMode`` counts the matrix products of the recurrent layers and cells as
PyTorch's CPU build runs them: the input projection of a layer as one product (an ``mm``
when a ``batch_first`` input makes it strided), one product of the hidden state per step,
an LSTM's projection, and nothing for the fused float32 LSTM (oneDNN)."""

from __future__ import annotations

import importlib

import pytest

import disttorch as dt

IN, H, B, T = 3, 5, 2, 4


def _padded(torch, dtype, batch_first=False):
    return torch.randn(B, T, IN, dtype=dtype) if batch_first else torch.randn(T, B, IN, dtype=dtype)


def _packed(torch, dtype, lengths=(4, 3, 1)):
    x = torch.randn(T, len(lengths), IN, dtype=dtype)
    return torch.nn.utils.rnn.pack_padded_sequence(x, list(lengths))


#: (module, its keyword arguments, the input's kind, dtype name) -> {op: flops} (Global and
#: the module alike), as PyTorch 2.13's CPU build reports them
CASES = [
    ("RNN", {}, "padded", "float32", {"aten.addmm": 640}),
    ("RNN", {"num_layers": 2}, "padded", "float64", {"aten.addmm": 1440}),
    ("RNN", {"bidirectional": True}, "padded", "float32", {"aten.addmm": 1280}),
    ("RNN", {"batch_first": True}, "padded", "float64", {"aten.mm": 240, "aten.addmm": 400}),
    ("RNN", {"bias": False}, "padded", "float32", {"aten.mm": 640}),
    ("RNN", {"nonlinearity": "relu"}, "packed", "float32", {"aten.addmm": 640}),
    ("RNN", {}, "unbatched", "float64", {"aten.addmm": 320}),
    ("GRU", {}, "padded", "float32", {"aten.addmm": 1920}),
    ("GRU", {"num_layers": 2, "bidirectional": True}, "packed", "float64", {"aten.addmm": 11040}),
    ("GRU", {"batch_first": True}, "padded", "float32", {"aten.mm": 720, "aten.addmm": 1200}),
    (
        "GRU",
        {"num_layers": 2, "bidirectional": True, "batch_first": True},
        "padded",
        "float32",
        {"aten.mm": 1440, "aten.addmm": 9600},
    ),
    ("GRU", {"bias": False}, "padded", "float64", {"aten.mm": 1920}),
    ("LSTM", {}, "padded", "float32", {}),  # the fused oneDNN layer
    ("LSTM", {"num_layers": 2, "bidirectional": True}, "padded", "float32", {}),
    ("LSTM", {}, "unbatched", "float32", {}),
    ("LSTM", {}, "packed", "float32", {"aten.addmm": 2560}),
    ("LSTM", {"proj_size": 2}, "padded", "float32", {"aten.addmm": 1600, "aten.mm": 160}),
    ("LSTM", {}, "padded", "float64", {"aten.addmm": 2560}),
    ("LSTM", {"num_layers": 2}, "padded", "float64", {"aten.addmm": 5760}),
    ("LSTM", {"batch_first": True}, "padded", "float64", {"aten.mm": 960, "aten.addmm": 1600}),
    (
        "LSTM",
        {"proj_size": 2, "batch_first": True},
        "padded",
        "float64",
        {"aten.mm": 1120, "aten.addmm": 640},
    ),
    (
        "LSTM",
        {"proj_size": 2, "num_layers": 2, "bidirectional": True, "bias": False},
        "padded",
        "float64",
        {"aten.mm": 7680},
    ),
    ("LSTM", {}, "unbatched", "float64", {"aten.addmm": 1280}),
    ("RNNCell", {}, "cell", "float32", {"aten.addmm": 160}),
    ("RNNCell", {"bias": False}, "cell", "float64", {"aten.mm": 160}),
    ("GRUCell", {}, "cell", "float32", {"aten.addmm": 480}),
    ("GRUCell", {}, "unbatched_cell", "float64", {"aten.addmm": 240}),
    ("LSTMCell", {}, "cell", "float32", {"aten.addmm": 640}),
    ("LSTMCell", {"bias": False}, "cell", "float64", {"aten.mm": 640}),
]


def _counts(torch, name, kwargs, kind, dtype_name) -> dict:
    FlopCounterMode = importlib.import_module(f"{torch.__name__}.utils.flop_counter").FlopCounterMode
    torch.manual_seed(0)
    dtype = getattr(torch, dtype_name)
    module = getattr(torch.nn, name)(IN, H, **kwargs).to(dtype)
    x = {
        "padded": lambda: _padded(torch, dtype, kwargs.get("batch_first", False)),
        "packed": lambda: _packed(torch, dtype),
        "unbatched": lambda: torch.randn(T, IN, dtype=dtype),
        "cell": lambda: torch.randn(B, IN, dtype=dtype),
        "unbatched_cell": lambda: torch.randn(IN, dtype=dtype),
    }[kind]()
    with FlopCounterMode(display=False) as counter:
        module(x)
    return {mod: {str(op): n for op, n in ops.items()} for mod, ops in counter.get_flop_counts().items()}


def _ids(case) -> str:
    return f"{case[0]}-{'-'.join(f'{k}={v}' for k, v in case[1].items())}-{case[2]}-{case[3]}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_counts_recurrent_products(case):
    name, kwargs, kind, dtype_name, expected = case
    counts = _counts(dt, name, kwargs, kind, dtype_name)
    assert counts == ({"Global": expected, name: expected} if expected else {})


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_same_recurrent_counts_as_pytorch(torch, case):
    name, kwargs, kind, dtype_name, _ = case
    assert _counts(dt, name, kwargs, kind, dtype_name) == _counts(torch, name, kwargs, kind, dtype_name)


def test_functional_forms_and_the_onednn_switch():
    from disttorch.utils.flop_counter import FlopCounterMode

    lstm = dt.nn.LSTM(IN, H)
    h = (dt.zeros(1, B, H), dt.zeros(1, B, H))
    x = dt.randn(T, B, IN)
    with FlopCounterMode(display=False) as counter:
        dt.lstm(x, h, lstm._flat_weights, True, 1, 0.0, False, False, False)
    assert counter.get_total_flops() == 0  # float32: the fused layer
    with dt.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as counter:
        out = lstm(x)[0]
    assert counter.get_flop_counts()["Global"] == {dt.ops.aten.addmm: 2560}
    assert out.grad_fn.name() == "StackBackward0"
    with FlopCounterMode(display=False) as counter:
        dt.gru_cell(dt.randn(B, IN), dt.randn(B, H), dt.randn(3 * H, IN), dt.randn(3 * H, H))
    assert counter.get_flop_counts()["Global"] == {dt.ops.aten.mm: 480}


def test_unknown_kernel_is_refused():
    from disttorch.nn.functional._recurrent import recurrent_layer

    x, h = dt.randn(B, IN), dt.zeros(B, H)
    with pytest.raises(ValueError, match="Unknown recurrent kernel 'fast'"):
        recurrent_layer(
            "GRU", x, h, None, dt.randn(3 * H, IN), dt.randn(3 * H, H), None, None, None, (B,), kernel="fast"
        )
