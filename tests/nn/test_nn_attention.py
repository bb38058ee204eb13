"""Attention (``scaled_dot_product_attention``, ``nn.MultiheadAttention``): closed-form
values, masks, dropout, finite-difference gradients in float64, shapes and parameters."""
import math

import numpy as np
import pytest

import disttorch as torch
import disttorch.nn as nn
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck


def f64(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def reference(q, k, v, bias=None, scale=None):
    s = q @ np.swapaxes(k, -1, -2) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if bias is not None:
        s = s + bias
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def test_sdpa_matches_definition_with_causal_bool_and_float_masks():
    q, k, v = f64(2, 3, 4, 5), f64(2, 3, 4, 5, seed=1), f64(2, 3, 4, 6, seed=2)
    qa, ka, va = (t.detach().numpy() for t in (q, k, v))
    out = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(out.detach().numpy(), reference(qa, ka, va), atol=1e-12)
    causal = np.triu(np.full((4, 4), -np.inf), 1)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(out.detach().numpy(), reference(qa, ka, va, causal), atol=1e-12)
    allowed = np.tril(np.ones((4, 4), dtype=bool))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.tensor(allowed))
    np.testing.assert_allclose(out.detach().numpy(), reference(qa, ka, va, causal), atol=1e-12)
    bias = np.random.default_rng(3).standard_normal((3, 1, 4))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.tensor(bias), scale=0.5)
    np.testing.assert_allclose(out.detach().numpy(), reference(qa, ka, va, bias, 0.5), atol=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(is_causal=True), dict(scale=0.3)])
def test_sdpa_gradcheck(kw):
    q, k, v = f64(2, 3, 4), f64(2, 5, 4, seed=1), f64(2, 5, 3, seed=2)
    if kw.get("is_causal"):
        k, v = f64(2, 3, 4, seed=1), f64(2, 3, 3, seed=2)
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, **kw), (q, k, v))


def test_sdpa_gradcheck_float_mask_and_broadcast_key():
    q, k, v, m = f64(2, 3, 4), f64(1, 5, 4, seed=1), f64(1, 5, 3, seed=2), f64(3, 5, seed=3)
    assert gradcheck(lambda a, b, c, d: F.scaled_dot_product_attention(a, b, c, attn_mask=d), (q, k, v, m))


def test_sdpa_dropout_zeroes_weights_and_rescales():
    torch.manual_seed(0)
    q = torch.zeros(1, 200, 4)
    v = torch.ones(1, 8, 1)
    out = F.scaled_dot_product_attention(q, torch.zeros(1, 8, 4), v, dropout_p=0.5).numpy()
    # uniform weights 1/8; each kept weight is doubled, so the output is 2 * kept / 8
    kept = out * 4
    np.testing.assert_allclose(kept, np.round(kept), atol=1e-5)
    assert 0.35 < out.mean() < 0.65 * 2


def test_sdpa_errors():
    with pytest.raises(RuntimeError, match="same embedding size"):
        F.scaled_dot_product_attention(torch.randn(2, 3, 4), torch.randn(2, 5, 3), torch.randn(2, 5, 3))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 3, 4),
                                       attn_mask=torch.ones(3, 3, dtype=torch.bool), is_causal=True)


def test_multihead_attention_parameters_init_and_shapes():
    mha = nn.MultiheadAttention(8, 2)
    assert [n for n, _ in mha.named_parameters()] == ["in_proj_weight", "in_proj_bias",
                                                      "out_proj.weight", "out_proj.bias"]
    np.testing.assert_array_equal(mha.in_proj_bias.detach().numpy(), 0)
    bound = math.sqrt(6 / (8 + 24))
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= bound
    x = torch.randn(5, 3, 8)
    out, w = mha(x, x, x)
    assert out.shape == (5, 3, 8) and w.shape == (3, 5, 5)
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1, atol=1e-5)
    out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    assert w.shape == (3, 2, 5, 5)
    assert mha(x, x, x, need_weights=False)[1] is None
    out, w = mha(x[:, 0], x[:, 0], x[:, 0])  # unbatched
    assert out.shape == (5, 8) and w.shape == (5, 5)
    sep = nn.MultiheadAttention(8, 2, kdim=4, vdim=6, batch_first=True, bias=False)
    assert [n for n, _ in sep.named_parameters()] == ["q_proj_weight", "k_proj_weight",
                                                      "v_proj_weight", "out_proj.weight"]
    out, _ = sep(torch.randn(3, 5, 8), torch.randn(3, 7, 4), torch.randn(3, 7, 6))
    assert out.shape == (3, 5, 8)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)


def test_multihead_attention_masks_hide_keys():
    mha = nn.MultiheadAttention(4, 1).double()
    x = f64(3, 1, 4)
    padding = torch.tensor([[False, False, True]])
    _, w = mha(x, x, x, key_padding_mask=padding)
    np.testing.assert_allclose(w.detach().numpy()[0, :, 2], 0)
    causal = torch.tensor(np.triu(np.ones((3, 3), dtype=bool), 1))  # True = may not attend
    _, w = mha(x, x, x, attn_mask=causal)
    np.testing.assert_allclose(np.triu(w.detach().numpy()[0], 1), 0)


def test_multihead_attention_gradcheck():
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=3).double()
    q, kv = f64(2, 1, 4), f64(3, 1, 3, seed=1)
    assert gradcheck(lambda a, b: mha(a, b, b)[0], (q, kv))


def test_gradient_through_returned_attention_weights():
    mha = nn.MultiheadAttention(4, 2).double()
    q, kv = f64(2, 1, 4), f64(3, 1, 4, seed=1)
    assert gradcheck(lambda a, b: mha(a, b, b, average_attn_weights=False)[1], (q, kv))
    assert gradcheck(lambda a, b: F.scaled_dot_product_attention(a, b, b) * 2, (f64(2, 3, 4), f64(2, 5, 4, seed=2)))
