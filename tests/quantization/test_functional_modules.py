"""FloatFunctional / QFunctional: observed float ops before convert, requantized quantized ops
after (add, add_relu, mul, cat bit for bit as PyTorch's quantized ops)."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq
from disttorch.ao.nn import quantized as nnq

pytestmark = [
    pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor"),
    pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated"),
]


class _Residual(dt.nn.Module):
    def __init__(self):
        super().__init__()
        self.quant, self.dequant = aq.QuantStub(), aq.DeQuantStub()
        self.fc = dt.nn.Linear(8, 8)
        self.skip = nnq.FloatFunctional()

    def forward(self, x):
        x = self.quant(x)
        return self.dequant(self.skip.add(self.fc(x), x))


def test_prepare_observes_and_convert_requantizes():
    dt.manual_seed(0)
    model = _Residual().eval()
    model.qconfig = aq.default_qconfig
    prepared = aq.prepare(model)
    assert isinstance(prepared.skip.activation_post_process, aq.MinMaxObserver)
    for _ in range(3):
        prepared(dt.randn(16, 8))
    q = aq.convert(prepared)
    assert type(q.skip) is nnq.QFunctional and repr(q.skip).startswith("QFunctional(\n  scale=")
    x = dt.randn(2, 8) * 0.5  # inside the calibrated range: no clamping
    np.testing.assert_allclose(q(x).numpy(), model(x).detach().numpy(), atol=0.1)
    with pytest.raises(RuntimeError, match="is not intended to use the 'forward'"):
        q.skip(x)


@pytest.mark.parity
@pytest.mark.parametrize("op", ["add", "add_relu", "mul", "cat"])
def test_quantized_ops_as_pytorch(torch, op):
    rng = np.random.default_rng(len(op))
    outs = []
    a = rng.standard_normal((6, 5)).astype(np.float32) * 2
    b = rng.standard_normal((6, 5)).astype(np.float32) * 2
    for lib, qnn in ((torch, torch.ao.nn.quantized), (dt, nnq)):
        f = qnn.QFunctional()
        f.scale, f.zero_point = 0.037, 61
        qa = lib.quantize_per_tensor(lib.from_numpy(a), 0.021, 131, lib.quint8)
        qb = lib.quantize_per_tensor(lib.from_numpy(b), 0.033, 97, lib.quint8)
        out = f.cat([qa, qb], 1) if op == "cat" else getattr(f, op)(qa, qb)
        outs.append((out.int_repr().numpy(), out.q_scale(), out.q_zero_point()))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert outs[0][1:] == outs[1][1:]
