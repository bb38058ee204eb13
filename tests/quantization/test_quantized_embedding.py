"""Weight-only quantized embeddings (``float_qparams_weight_only_qconfig``): per-row quint8
with float scales and zero points (``per_channel_affine_float_qparams``), ``Embedding`` and
``EmbeddingBag`` through ``quantize_dynamic``; weights, reprs, state-dict keys and outputs
bit for bit as PyTorch's."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.ao import quantization as aq

pytestmark = pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")


def _run(lib) -> list:
    nn, qlib = lib.nn, lib.ao.quantization
    rng = np.random.default_rng(0)
    lib.manual_seed(0)
    model = nn.Sequential(nn.Embedding(30, 8), nn.EmbeddingBag(30, 8, mode="mean"), nn.Linear(8, 3))
    model.append(nn.EmbeddingBag(30, 8, include_last_offset=True))
    spec = {
        nn.Embedding: qlib.float_qparams_weight_only_qconfig,
        nn.EmbeddingBag: qlib.float_qparams_weight_only_qconfig,
    }
    q = qlib.quantize_dynamic(model, {**spec, nn.Linear: qlib.default_dynamic_qconfig})
    idx = lib.tensor(rng.integers(0, 30, 17))
    w = lib.tensor(rng.standard_normal(17).astype(np.float32))
    weight = q[0].weight()
    x = lib.tensor(rng.standard_normal((5, 7)).astype(np.float32)) * 3
    observer = qlib.default_float_qparams_observer()
    observer(x)
    scales, zero_points = observer.calculate_qparams()
    qx = lib.quantize_per_channel(x, scales, zero_points, 0, lib.quint8)
    return [
        repr(q).replace("disttorch.", "torch."),
        list(q.state_dict()),
        q[0](idx).numpy(),
        q[0](idx.reshape(1, 17)).numpy(),
        q[1](idx, lib.tensor([0, 3, 3, 9, 12])).numpy(),  # PyTorch's quantized bags sum, whatever the mode
        q[1](idx[:16].reshape(4, 4)).numpy(),
        q[3](idx, lib.tensor([0, 3, 9, 17]), per_sample_weights=w).numpy(),
        weight.int_repr().numpy(),
        np.array(weight.q_per_channel_scales().tolist(), np.float32),
        np.array(weight.q_per_channel_zero_points().tolist(), np.float32),
        weight.dequantize().numpy(),
        qx.int_repr().numpy(),
        qx.dequantize().numpy(),
        str(qx.qscheme()).replace("disttorch.", "torch."),
    ]


@pytest.mark.parity
def test_as_pytorch(torch):
    ours, theirs = _run(dt), _run(torch)
    assert ours[:2] == theirs[:2] and ours[-1] == theirs[-1]
    for a, b in zip(ours[2:-1], theirs[2:-1], strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_embedding_needs_the_float_qparams_qconfig():
    emb = dt.nn.Embedding(4, 3)
    emb.qconfig = aq.default_dynamic_qconfig
    with pytest.raises(AssertionError, match="only supported with float_qparams_weight_only_qconfig"):
        dt.ao.nn.quantized.Embedding.from_float(emb)
    q = aq.quantize_dynamic(dt.nn.Sequential(dt.nn.Embedding(4, 3), dt.nn.Linear(3, 2)))
    assert type(q[0]) is dt.nn.Embedding  # not quantized by default, as in PyTorch
    emb.qconfig = aq.float_qparams_weight_only_qconfig
    qemb = dt.ao.nn.quantized.Embedding.from_float(emb)
    with pytest.raises(IndexError, match="index out of range"):
        qemb(dt.tensor([4]))
    np.testing.assert_allclose(
        qemb(dt.tensor([1, 2])).numpy(), emb.weight[[1, 2]].detach().numpy(), atol=0.01
    )


def _float_qparams_tensor(lib):
    observer = lib.ao.quantization.default_float_qparams_observer()
    x = lib.tensor(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32))
    observer(x)
    return lib.quantize_per_channel(x, *observer.calculate_qparams(), 0, lib.quint8)


@pytest.mark.parity
def test_saved_and_loaded_both_ways(torch):
    import io

    for src, dst in ((torch, dt), (dt, torch)):
        buf = io.BytesIO()
        src.save(_float_qparams_tensor(src), buf)
        buf.seek(0)
        loaded = dst.load(buf)
        assert str(loaded.qscheme()).endswith("per_channel_affine_float_qparams")
        np.testing.assert_array_equal(
            loaded.dequantize().numpy(), _float_qparams_tensor(dst).dequantize().numpy()
        )
