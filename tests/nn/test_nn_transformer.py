"""Transformer family and the MultiheadAttention it is built on: gradients against finite
differences, state-dict layout, masks, and outputs/gradients against PyTorch with copied
weights."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.autograd import gradcheck


def _np(t):
    return t.detach().numpy()


def _t(rng, *shape):
    return dt.tensor(rng.standard_normal(shape), dtype=dt.float64, requires_grad=True)


def test_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype == dt.float32
    np.testing.assert_array_equal(m.numpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=dt.float64).dtype == dt.float64


def test_state_dict_names():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = nn.Transformer(
            d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16
        )
    keys = list(model.state_dict())
    assert keys[:4] == [
        "encoder.layers.0.self_attn.in_proj_weight",
        "encoder.layers.0.self_attn.in_proj_bias",
        "encoder.layers.0.self_attn.out_proj.weight",
        "encoder.layers.0.self_attn.out_proj.bias",
    ]
    assert "encoder.norm.weight" in keys and "decoder.norm.bias" in keys
    assert "decoder.layers.0.multihead_attn.in_proj_weight" in keys
    assert "decoder.layers.0.norm3.weight" in keys and "encoder.layers.0.linear2.bias" in keys
    assert len(keys) == 12 + 2 + 18 + 2
    # xavier-uniform on every matrix: the bound of a (16, 8) linear1 is sqrt(6 / 24)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= np.sqrt(6 / 24) + 1e-7


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_gradcheck(norm_first):
    dt.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        4, 2, dim_feedforward=6, dropout=0.0, norm_first=norm_first, activation="gelu"
    ).double()
    rng = np.random.default_rng(0)
    src = _t(rng, 3, 2, 4)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=dt.float64)
    kpm = dt.tensor([[False, False, True], [False, False, False]])
    assert gradcheck(lambda s: layer(s, src_mask=mask, src_key_padding_mask=kpm), (src,))


def test_decoder_layer_gradcheck():
    dt.manual_seed(0)
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, batch_first=True).double()
    rng = np.random.default_rng(1)
    tgt, mem = _t(rng, 2, 3, 4), _t(rng, 2, 5, 4)
    assert gradcheck(
        lambda t, m: layer(
            t,
            m,
            tgt_is_causal=True,
            tgt_mask=nn.Transformer.generate_square_subsequent_mask(3, dtype=dt.float64),
        ),
        (tgt, mem),
    )


def test_full_transformer_gradcheck():
    dt.manual_seed(0)
    model = nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, norm_first=True).double()
    rng = np.random.default_rng(2)
    src, tgt = _t(rng, 3, 1, 4), _t(rng, 2, 1, 4)
    mask = nn.Transformer.generate_square_subsequent_mask(2, dtype=dt.float64)
    assert gradcheck(lambda s, t: model(s, t, tgt_mask=mask), (src, tgt))


def test_bool_and_float_masks_agree_and_causal_detection():
    dt.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2)
    src = dt.randn(5, 3, 8)
    causal_float = nn.Transformer.generate_square_subsequent_mask(5)
    causal_bool = dt.tensor(np.triu(np.ones((5, 5), bool), 1))
    kpm_bool = dt.tensor(np.array([[0, 0, 0, 1, 1], [0] * 5, [0, 0, 0, 0, 1]], bool))
    kpm_float = dt.tensor(np.where(kpm_bool.numpy(), -np.inf, 0).astype(np.float32))
    a = enc(src, mask=causal_float, src_key_padding_mask=kpm_float)
    b = enc(src, mask=causal_bool, src_key_padding_mask=kpm_bool)
    c = enc(src, mask=causal_float, src_key_padding_mask=kpm_float, is_causal=True)
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)
    np.testing.assert_allclose(_np(a), _np(c), rtol=1e-6)
    # a causal mask really hides the future: changing the last step leaves earlier outputs
    src2 = src.clone()
    src2[4] = src2[4] + 1.0
    d = enc(src2, mask=causal_float)
    e = enc(src, mask=causal_float)
    np.testing.assert_allclose(_np(d)[:4], _np(e)[:4], rtol=1e-5, atol=1e-6)


def test_activation_forms_and_errors():
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, activation=nn.GELU())
    assert layer.activation_relu_or_gelu == 2
    custom = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, activation=lambda x: x * 2)
    assert custom.activation_relu_or_gelu == 0
    assert custom(dt.randn(3, 4)).shape == (3, 4)  # unbatched
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(dt.randn(4, 2, 8), dt.randn(3, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(dt.randn(4, 2, 8), dt.randn(3, 2, 6))
    with pytest.raises(AssertionError, match="only bool and floating types of src_key_padding_mask"):
        model.encoder(dt.randn(4, 2, 8), src_key_padding_mask=dt.zeros(2, 4, dtype=dt.int64))


def test_nested_tensor_flag_warns_as_pytorch():
    with pytest.warns(UserWarning, match="self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2), 2)
    assert enc.use_nested_tensor is False and enc.enable_nested_tensor is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, batch_first=True), 2)
        assert enc.use_nested_tensor is True
        nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2), 2, enable_nested_tensor=False)


def test_subclass_like_word_language_model():
    class TransformerModel(nn.Transformer):
        def __init__(self):
            super().__init__(d_model=8, nhead=2, dim_feedforward=16, num_encoder_layers=2)
            self.decoder = nn.Linear(8, 5)

        def forward(self, src):
            mask = nn.Transformer.generate_square_subsequent_mask(len(src))
            return self.decoder(self.encoder(src, mask=mask))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = TransformerModel()(dt.randn(6, 2, 8))
    assert tuple(out.shape) == (6, 2, 5)


# ------------------------------------------------------------------ parity with PyTorch
def _copy(tm, dm):
    assert list(tm.state_dict()) == list(dm.state_dict())
    dm.load_state_dict({k: dt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


@pytest.mark.parity
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_every_mask_parity(norm_first, batch_first):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    kw = {
        "d_model": 8,
        "nhead": 2,
        "num_encoder_layers": 2,
        "num_decoder_layers": 2,
        "dim_feedforward": 16,
        "dropout": 0.0,
        "norm_first": norm_first,
        "batch_first": batch_first,
        "activation": "gelu",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, dm = torch.nn.Transformer(**kw).double(), nn.Transformer(**kw).double()
    _copy(tm, dm)
    rng = np.random.default_rng(0)
    s_len, t_len, n = 5, 4, 3
    src = rng.standard_normal((n, s_len, 8) if batch_first else (s_len, n, 8))
    tgt = rng.standard_normal((n, t_len, 8) if batch_first else (t_len, n, 8))
    src_kpm = np.zeros((n, s_len), bool)
    src_kpm[0, -2:] = True
    tgt_kpm = np.zeros((n, t_len), bool)
    tgt_kpm[1, -1] = True
    src_mask = rng.standard_normal((s_len, s_len))
    mem_mask = np.zeros((t_len, s_len), bool)
    mem_mask[0, 1] = True
    results = []
    for lib, model in ((torch, tm), (dt, dm)):
        s = lib.tensor(src, requires_grad=True)
        t = lib.tensor(tgt, requires_grad=True)
        out = model(
            s,
            t,
            src_mask=lib.tensor(src_mask),
            tgt_mask=model.generate_square_subsequent_mask(t_len, dtype=lib.float64),
            memory_mask=lib.tensor(mem_mask),
            src_key_padding_mask=lib.tensor(src_kpm),
            tgt_key_padding_mask=lib.tensor(tgt_kpm),
            memory_key_padding_mask=lib.tensor(src_kpm),
            tgt_is_causal=True,
        )
        weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        (out * weights).sum().backward()
        results.append(
            (
                out.detach().numpy(),
                s.grad.numpy(),
                t.grad.numpy(),
                [p.grad.numpy() for p in model.parameters()],
            )
        )
    for a, b in zip(results[0][:3], results[1][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
    for a, b in zip(results[0][3], results[1][3]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


@pytest.mark.parity
def test_encoder_float32_parity_with_relu_and_eval_mode():
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.TransformerEncoder(
            torch.nn.TransformerEncoderLayer(16, 4, 32), 2, norm=torch.nn.LayerNorm(16)
        )
        dm = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32), 2, norm=nn.LayerNorm(16))
    _copy(tm, dm)
    tm.eval()
    dm.eval()
    x = np.random.default_rng(1).standard_normal((7, 2, 16)).astype(np.float32)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(7)
    with torch.no_grad():
        a = tm(torch.tensor(x), mask=mask).numpy()
    b = _np(dm(dt.tensor(x), mask=nn.Transformer.generate_square_subsequent_mask(7)))
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parity
@pytest.mark.parametrize(
    "kw,call",
    [
        ({"kdim": 3, "vdim": 5}, {"average_attn_weights": False}),
        ({"batch_first": True, "add_bias_kv": True}, {}),
        ({"add_zero_attn": True, "bias": False}, {"average_attn_weights": True}),
    ],
)
def test_multihead_attention_parity(kw, call):
    torch = pytest.importorskip("torch")
    torch.manual_seed(2)
    tm, dm = torch.nn.MultiheadAttention(8, 2, **kw).double(), nn.MultiheadAttention(8, 2, **kw).double()
    _copy(tm, dm)
    rng = np.random.default_rng(2)
    bf = kw.get("batch_first", False)
    q = rng.standard_normal((3, 4, 8) if bf else (4, 3, 8))
    k = rng.standard_normal((3, 6, kw.get("kdim", 8)) if bf else (6, 3, kw.get("kdim", 8)))
    v = rng.standard_normal((3, 6, kw.get("vdim", 8)) if bf else (6, 3, kw.get("vdim", 8)))
    kpm = np.zeros((3, 6), bool)
    kpm[2, :2] = True
    attn_mask = rng.standard_normal((4, 6))
    results = []
    for lib, model in ((torch, tm), (dt, dm)):
        qt, kt, vt = (lib.tensor(a, requires_grad=True) for a in (q, k, v))
        out, w = model(qt, kt, vt, key_padding_mask=lib.tensor(kpm), attn_mask=lib.tensor(attn_mask), **call)
        (out.sum() + (w * w).sum()).backward()
        results.append(
            [out.detach().numpy(), w.detach().numpy(), qt.grad.numpy(), kt.grad.numpy(), vt.grad.numpy()]
            + [p.grad.numpy() for p in model.parameters()]
        )
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def _encoder_warnings(lib):
    """An evaluation-mode encoder given a padding mask runs PyTorch's nested-tensor path,
    which warns once per process that nested tensors are a prototype."""
    lib.manual_seed(0)
    enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True), 2)
    x, pad = lib.randn(2, 4, 8), lib.tensor([[False] * 4, [False, False, True, True]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.no_grad():
            enc.eval()(x, src_key_padding_mask=pad)
            enc.eval()(x, src_key_padding_mask=pad)
    return [str(w.message) for w in caught if "nested tensors" in str(w.message)]


def test_the_encoders_nested_path_warns_once():
    from disttorch import _native_warnings

    _native_warnings._warned_once.discard(_native_warnings.NESTED_PROTOTYPE)
    assert _encoder_warnings(dt) == [_native_warnings.NESTED_PROTOTYPE]
    assert _encoder_warnings(dt) == []


@pytest.mark.parity
def test_the_encoders_nested_path_warns_as_pytorchs(torch):
    from disttorch import _native_warnings

    _native_warnings._warned_once.discard(_native_warnings.NESTED_PROTOTYPE)
    theirs = _encoder_warnings(torch)  # empty when this process's PyTorch warned already
    assert _encoder_warnings(dt)[: len(theirs)] == theirs
