"""``linspace`` bit for bit as PyTorch's CPU kernel: the step in the output dtype, the first
half filled forward from ``start``, the second backward from ``end``, each value one fused
multiply-add (half types round every operation)."""

import numpy as np
import pytest

import disttorch as dt

# float32 bit patterns of torch.linspace(0.3, 1.7, 40) (PyTorch 2.13, CPU)
TORCH_0_3_TO_1_7 = [
    1050253722, 1051458240, 1052662758, 1053867276, 1055071794, 1056276313, 1057222719, 1057824978,
    1058427238, 1059029497, 1059631756, 1060234015, 1060836274, 1061438533, 1062040792, 1062643051,
    1063245310, 1063847569, 1064449828, 1065052087, 1065503781, 1065804910, 1066106040, 1066407170,
    1066708299, 1067009429, 1067310558, 1067611688, 1067912817, 1068213947, 1068515076, 1068816206,
    1069117335, 1069418465, 1069719594, 1070020724, 1070321853, 1070622983, 1070924112, 1071225242,
]  # fmt: skip


def test_known_float32_bits():
    assert dt.linspace(0.3, 1.7, 40).numpy().view(np.uint32).tolist() == TORCH_0_3_TO_1_7
    assert dt.linspace(0.0, 1.0, 7).numpy().view(np.uint32)[4] == 1059760810  # 2/3, PyTorch's rounding


def test_ends_are_exact_and_integer_outputs_truncate():
    x = dt.linspace(-3.7, 5.1, 101, dtype=dt.float64)
    assert x[0].item() == -3.7 and x[-1].item() == 5.1
    assert dt.linspace(0, 10, 7, dtype=dt.int64).tolist() == [0, 1, 3, 5, 6, 8, 10]
    assert dt.linspace(2.9, 7.9, 3, dtype=dt.int32).tolist() == [2, 4, 7]
    assert dt.linspace(0, 1, 0).shape == (0,) and dt.linspace(2, 3, 1).tolist() == [2.0]


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8"])
def test_linspace_bits_match_pytorch(torch, dtype):
    rng = np.random.default_rng(11)
    for _ in range(60):
        steps = int(rng.integers(0, 700))
        lo = 0.0 if dtype in ("uint8",) else -100.0
        start, end = (float(v) for v in rng.uniform(lo, 100.0, 2))
        ours = dt.linspace(start, end, steps, dtype=getattr(dt, dtype)).float().numpy()
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).float().numpy()
        assert np.array_equal(ours, theirs), (start, end, steps)
