"""HistogramObserver (histogram, rebinned on range growth, the L2 range search) and
get_default_qconfig: qparams and histograms equal to PyTorch's."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq

pytestmark = [pytest.mark.filterwarnings("ignore:Please use quant_min")]

CASES = [{}, {"reduce_range": True}, {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}]


def _batches(seed):
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(1, 5))):
        n = int(rng.integers(10, 3000))
        kind = int(rng.integers(0, 3))
        x = [
            rng.standard_normal(n) * rng.uniform(0.1, 5) + rng.uniform(-2, 2),
            rng.exponential(2.0, n),
            rng.uniform(-1, 3, n),
        ]
        yield x[kind].astype(np.float32)


def test_uniform_values_give_their_range():
    obs = aq.HistogramObserver()
    obs(dt.linspace(0, 1, 10000))
    obs(dt.linspace(0, 2, 10000))  # the range grows: the first histogram is rebinned
    scale, zero_point = obs.calculate_qparams()
    assert abs(scale.item() - 2 / 255) < 0.05 * 2 / 255 and zero_point.tolist() == [0]
    assert obs.histogram.shape == (2048,) and obs.histogram.sum().item() == pytest.approx(20000)


def test_get_default_qconfig():
    qconfig = aq.get_default_qconfig("x86")
    assert isinstance(qconfig.activation(), aq.HistogramObserver) and qconfig.activation().quant_max == 127
    assert qconfig.weight().qscheme is dt.per_channel_symmetric
    assert aq.get_default_qconfig("qnnpack").weight().qscheme is dt.per_tensor_symmetric
    with pytest.raises(AssertionError, match="backend: cuda not supported"):
        aq.get_default_qconfig("cuda")


@pytest.mark.parity
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kwargs", CASES)
def test_as_pytorch(torch, seed, kwargs):
    theirs = torch.ao.quantization.HistogramObserver(
        **{k: getattr(torch, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    )
    ours = aq.HistogramObserver(**{k: getattr(dt, v) if isinstance(v, str) else v for k, v in kwargs.items()})
    for x in _batches(seed):
        theirs(torch.from_numpy(x))
        ours(dt.from_numpy(x))
        np.testing.assert_array_equal(ours.histogram.numpy(), theirs.histogram.numpy())
    for a, b in zip(ours.calculate_qparams(), theirs.calculate_qparams(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
