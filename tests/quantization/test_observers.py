"""Observers: calculate_qparams equals PyTorch's exactly (scales bit for bit)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")

CASES = [
    ("MinMaxObserver", {"dtype": "quint8", "qscheme": "per_tensor_affine"}),
    ("MinMaxObserver", {"dtype": "quint8", "qscheme": "per_tensor_affine", "reduce_range": True}),
    ("MinMaxObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"dtype": "quint8", "qscheme": "per_tensor_symmetric"}),
    (
        "MinMaxObserver",
        {"dtype": "qint8", "qscheme": "per_tensor_affine", "quant_min": -20, "quant_max": 100},
    ),
    ("PerChannelMinMaxObserver", {"dtype": "qint8", "qscheme": "per_channel_symmetric"}),
    ("PerChannelMinMaxObserver", {"dtype": "quint8", "qscheme": "per_channel_affine", "ch_axis": 1}),
]


def _kwargs(lib, kwargs):
    return {k: getattr(lib, v) if isinstance(v, str) else v for k, v in kwargs.items()}


def test_min_max_observer_by_hand():
    obs = aq.MinMaxObserver(dtype=dt.quint8)
    obs(dt.tensor([-1.0, 0.5]))
    obs(dt.tensor([2.0]))
    scale, zero_point = obs.calculate_qparams()
    assert scale.dtype is dt.float32 and zero_point.dtype is dt.int32
    assert scale.tolist() == [np.float32(3.0) / np.float32(255)] and zero_point.tolist() == [85]
    sym = aq.MinMaxObserver(dtype=dt.qint8, qscheme=dt.per_tensor_symmetric)
    sym(dt.tensor([-1.0, 0.5]))
    assert sym.calculate_qparams()[1].tolist() == [0]


def test_observer_errors():
    with pytest.raises(NotImplementedError, match="MinMaxObserver's qscheme only support"):
        aq.MinMaxObserver(qscheme=dt.per_channel_affine)
    with pytest.raises(AssertionError, match="must include 0"):
        aq.MinMaxObserver(quant_min=1, quant_max=100)
    with pytest.warns(UserWarning, match="must run observer before calling calculate_qparams"):
        assert aq.MinMaxObserver().calculate_qparams()[0].tolist() == [1.0]


@pytest.mark.parity
@pytest.mark.parametrize("name, kwargs", CASES)
def test_qparams_as_pytorch(torch, name, kwargs):
    rng = np.random.default_rng(len(str(kwargs)))
    ours = getattr(aq, name)(**_kwargs(dt, kwargs))
    theirs = getattr(torch.ao.quantization, name)(**_kwargs(torch, kwargs))
    for _ in range(3):
        x = (rng.standard_normal((6, 5)) * rng.uniform(0.001, 10) + rng.uniform(-2, 2)).astype(np.float32)
        ours(dt.from_numpy(x))
        theirs(torch.from_numpy(x))
    for a, b in zip(ours.calculate_qparams(), theirs.calculate_qparams(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.numpy().dtype == b.numpy().dtype


def test_with_args_factories_build_new_observers_and_take_callable_args():
    factory = aq.MinMaxObserver.with_args(quant_min=0).with_args(quant_max=3)
    first, second = factory(), factory()
    assert first is not second and (first.quant_min, first.quant_max) == (0, 3)
    assert repr(factory).endswith("quant_max=3){}")
    counter = iter(range(5, 10))
    made = aq.MinMaxObserver.with_args(quant_min=0).with_callable_args(quant_max=lambda: next(counter))
    assert [made().quant_max, made().quant_max, made(quant_max=9).quant_max] == [5, 6, 9]
