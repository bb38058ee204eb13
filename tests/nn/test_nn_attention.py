"""Attention (``scaled_dot_product_attention``, ``nn.MultiheadAttention``): closed-form
values, masks, dropout, finite-difference gradients in float64, shapes and parameters."""

import math

import numpy as np
import pytest
from parity_helpers import copy_weights

import disttorch as dt
import disttorch.nn as nn
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck


def f64(*shape, seed=0):
    return dt.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


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
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=dt.tensor(allowed))
    np.testing.assert_allclose(out.detach().numpy(), reference(qa, ka, va, causal), atol=1e-12)
    bias = np.random.default_rng(3).standard_normal((3, 1, 4))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=dt.tensor(bias), scale=0.5)
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
    dt.manual_seed(0)
    q = dt.zeros(1, 200, 4)
    v = dt.ones(1, 8, 1)
    out = F.scaled_dot_product_attention(q, dt.zeros(1, 8, 4), v, dropout_p=0.5).numpy()
    # uniform weights 1/8; each kept weight is doubled, so the output is 2 * kept / 8
    kept = out * 4
    np.testing.assert_allclose(kept, np.round(kept), atol=1e-5)
    assert 0.35 < out.mean() < 0.65 * 2


def test_sdpa_errors():
    with pytest.raises(RuntimeError, match=r"batch2 tensor to be: \[2, 4\] but got: \[2, 3\]"):
        F.scaled_dot_product_attention(dt.randn(2, 3, 4), dt.randn(2, 5, 3), dt.randn(2, 5, 3))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(
            dt.randn(2, 3, 4),
            dt.randn(2, 3, 4),
            dt.randn(2, 3, 4),
            attn_mask=dt.ones(3, 3, dtype=dt.bool),
            is_causal=True,
        )


def test_multihead_attention_parameters_init_and_shapes():
    mha = nn.MultiheadAttention(8, 2)
    assert [n for n, _ in mha.named_parameters()] == [
        "in_proj_weight",
        "in_proj_bias",
        "out_proj.weight",
        "out_proj.bias",
    ]
    np.testing.assert_array_equal(mha.in_proj_bias.detach().numpy(), 0)
    bound = math.sqrt(6 / (8 + 24))
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= bound
    x = dt.randn(5, 3, 8)
    out, w = mha(x, x, x)
    assert out.shape == (5, 3, 8) and w.shape == (3, 5, 5)
    np.testing.assert_allclose(w.detach().numpy().sum(-1), 1, atol=1e-5)
    out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    assert w.shape == (3, 2, 5, 5)
    assert mha(x, x, x, need_weights=False)[1] is None
    out, w = mha(x[:, 0], x[:, 0], x[:, 0])  # unbatched
    assert out.shape == (5, 8) and w.shape == (5, 5)
    sep = nn.MultiheadAttention(8, 2, kdim=4, vdim=6, batch_first=True, bias=False)
    assert [n for n, _ in sep.named_parameters()] == [
        "q_proj_weight",
        "k_proj_weight",
        "v_proj_weight",
        "out_proj.weight",
    ]
    out, _ = sep(dt.randn(3, 5, 8), dt.randn(3, 7, 4), dt.randn(3, 7, 6))
    assert out.shape == (3, 5, 8)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(AssertionError, match="key's sequence and batch dims .* do not match value's"):
        sep(dt.randn(3, 5, 8), dt.randn(3, 7, 4), dt.randn(3, 6, 6))
    with pytest.raises(
        AssertionError, match=r"key shape (torch|disttorch)\.Size\(\[4, 2, 8\]\) does not match value"
    ):
        mha(x[:2], dt.randn(4, 2, 8), dt.randn(5, 2, 8))  # (PyTorch's: the whole shapes must be equal)


def test_multihead_attention_masks_hide_keys():
    mha = nn.MultiheadAttention(4, 1).double()
    x = f64(3, 1, 4)
    padding = dt.tensor([[False, False, True]])
    _, w = mha(x, x, x, key_padding_mask=padding)
    np.testing.assert_allclose(w.detach().numpy()[0, :, 2], 0)
    causal = dt.tensor(np.triu(np.ones((3, 3), dtype=bool), 1))  # True = may not attend
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
    assert gradcheck(
        lambda a, b: F.scaled_dot_product_attention(a, b, b) * 2, (f64(2, 3, 4), f64(2, 5, 4, seed=2))
    )


# ---------------------------------------------------------------------- parity with PyTorch
@pytest.mark.parity
@pytest.mark.parametrize(
    "kw", [dict(), dict(batch_first=True), dict(kdim=4, vdim=6), dict(add_bias_kv=True, add_zero_attn=True)]
)
def test_multihead_attention_parity_with_masks(torch, kw):
    theirs = torch.nn.MultiheadAttention(8, 2, **kw)
    ours = dt.nn.MultiheadAttention(8, 2, **kw)
    copy_weights(ours, theirs)
    rng = np.random.default_rng(2)
    L, S, N = 3, 5, 2
    first = (N, L) if kw.get("batch_first") else (L, N)
    kv_first = (N, S) if kw.get("batch_first") else (S, N)
    q = rng.standard_normal((*first, 8)).astype(np.float32)
    k = rng.standard_normal((*kv_first, kw.get("kdim", 8))).astype(np.float32)
    v = rng.standard_normal((*kv_first, kw.get("vdim", 8))).astype(np.float32)
    am = rng.random((L, S)) > 0.7
    am[:, 0] = False
    kpm = rng.random((N, S)) > 0.7
    kpm[:, 0] = False
    qa, qt = dt.tensor(q, requires_grad=True), torch.tensor(q, requires_grad=True)
    oa, wa = ours(qa, dt.tensor(k), dt.tensor(v), attn_mask=dt.tensor(am), key_padding_mask=dt.tensor(kpm))
    ot, wt = theirs(
        qt, torch.tensor(k), torch.tensor(v), attn_mask=torch.tensor(am), key_padding_mask=torch.tensor(kpm)
    )
    np.testing.assert_allclose(oa.detach().numpy(), ot.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(wa.detach().numpy(), wt.detach().numpy(), rtol=1e-4, atol=1e-5)
    oa.sum().backward()
    ot.sum().backward()
    np.testing.assert_allclose(qa.grad.numpy(), qt.grad.numpy(), rtol=1e-4, atol=1e-5)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), theirs_params[name].grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=name
        )


@pytest.mark.parity
def test_sdpa_parity_causal(torch):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 4, 6, 8)).astype(np.float32) for _ in range(3))
    ours = F.scaled_dot_product_attention(*(dt.tensor(a) for a in (q, k, v)), is_causal=True)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), is_causal=True
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parity
def test_sdpa_parity_grouped_query_attention_and_bool_mask(torch):
    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 4, 5, 8)).astype(np.float32)
    k, v = (rng.standard_normal((2, 2, 6, 8)).astype(np.float32) for _ in range(2))
    mask = rng.random((5, 6)) > 0.3
    mask[:, 0] = True
    ours = F.scaled_dot_product_attention(
        *(dt.tensor(a) for a in (q, k, v)), attn_mask=dt.tensor(mask), enable_gqa=True
    )
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), attn_mask=torch.tensor(mask), enable_gqa=True
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


# rows of queries: free, partly masked, every key masked (left padding)
MASKED_ROWS = np.array([[True, True, True], [False, False, True], [False, False, False]])


@pytest.mark.parametrize("float_mask", [False, True])
def test_sdpa_row_with_every_key_masked_is_zero_not_nan(float_mask):
    rng = np.random.default_rng(3)
    q, k, v = (dt.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(3))
    mask = dt.tensor(MASKED_ROWS)
    if float_mask:
        mask = dt.zeros(3, 3, dtype=dt.float64).masked_fill(~mask, float("-inf"))
    out = dt.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert np.isfinite(out.detach().numpy()).all() and (out[:, 2].detach().numpy() == 0).all()
    out.sum().backward()
    assert all(np.isfinite(t.grad.numpy()).all() for t in (q, k, v))
    assert (q.grad[:, 2].numpy() == 0).all()


@pytest.mark.parity
def test_sdpa_fully_masked_row_matches_pytorch(torch):
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((2, 2, 3, 4)) for _ in range(3)]
    results = []
    for lib in (dt, torch):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=lib.tensor(MASKED_ROWS))
        out.sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in (q, k, v)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def _heads_last(*shape, seed=0):
    """A float64 ``(B, H, L, E)`` query stored as ``(B, L, H, E)``, as ``view(...).transpose(1, 2)``
    of a projection makes it."""
    b, h, n, e = shape
    return f64(b, n, h, e, seed=seed).transpose(1, 2)


def test_sdpa_output_laid_out_like_a_head_transposed_query_as_the_cpu_flash_kernel():
    q, k, v = _heads_last(2, 3, 5, 4), _heads_last(2, 3, 5, 4, seed=1), f64(2, 3, 5, 4, seed=2)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.stride() == (60, 4, 12, 1)
    merged = out.transpose(1, 2).view(2, 5, 12)  # PyTorch programs rely on this view
    qa, ka, va = (t.detach().numpy() for t in (q, k, v))
    np.testing.assert_allclose(
        merged.detach().numpy(),
        reference(qa, ka, va, np.triu(np.full((5, 5), -np.inf), 1)).swapaxes(1, 2).reshape(2, 5, 12),
        atol=1e-12,
    )

    def merged_heads(a, b, c):  # a, b stored (B, L, H, E)
        return (
            F.scaled_dot_product_attention(a.transpose(1, 2), b.transpose(1, 2), c)
            .transpose(1, 2)
            .view(2, 5, 12)
        )

    assert gradcheck(merged_heads, (f64(2, 5, 3, 4), f64(2, 5, 3, 4, seed=1), v))
    # the math kernel (dropout, 3-d inputs, another value size, broadcast batch) gives contiguous
    for args, kw in [
        ((q, k, v), dict(dropout_p=0.5)),
        ((q, k, f64(2, 3, 5, 6)), {}),
        ((q, k[:1], v[:1]), {}),
    ]:
        assert F.scaled_dot_product_attention(*args, **kw).is_contiguous()


def test_sdpa_kernel_switches_refuse_what_the_cpu_build_cannot_run():
    from disttorch.nn.attention import SDPBackend, sdpa_kernel

    q = f64(2, 3, 5, 4)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert F.scaled_dot_product_attention(q, q, q).shape == (2, 3, 5, 4)
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q[0], q[0], q[0])
    for backend in (SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        with sdpa_kernel(backend), pytest.raises(RuntimeError, match="No viable backend"):
            F.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        assert F.scaled_dot_product_attention(q, q, q, dropout_p=0.1).shape == (2, 3, 5, 4)


@pytest.mark.parity
def test_sdpa_output_strides_and_kernel_errors_match_pytorch(torch):
    from disttorch.nn.attention import SDPBackend as DB
    from disttorch.nn.attention import sdpa_kernel as dk

    def cases(lib):
        def t(b, n, h, e):  # (B, H, L, E) stored heads-last
            return lib.zeros(b, n, h, e).transpose(1, 2)

        c = lib.zeros
        return [
            (t(2, 5, 3, 4), c(2, 3, 5, 4), c(2, 3, 5, 4)),
            (c(2, 3, 5, 4), t(2, 5, 3, 4), t(2, 5, 3, 4)),
            (t(2, 5, 3, 4), t(2, 7, 3, 4), t(2, 7, 3, 6)),
            (lib.zeros(3, 2, 5, 4).transpose(0, 1), c(2, 3, 5, 4), c(2, 3, 5, 4)),
            (lib.zeros(2, 5, 6, 4).transpose(1, 2)[:, :3], c(2, 3, 5, 4), c(2, 3, 5, 4)),
            (t(2, 5, 3, 4), t(1, 5, 3, 4), t(1, 5, 3, 4)),
        ]

    for (q, k, v), (tq, tk, tv) in zip(cases(dt), cases(torch)):
        for kw in ({}, {"dropout_p": 0.3}, {"is_causal": True}):
            assert (
                F.scaled_dot_product_attention(q, k, v, **kw).stride()
                == torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, **kw).stride()
            )
    for backend in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION"):
        for kw in ({}, {"dropout_p": 0.3}):
            q, tq = dt.zeros(2, 3, 5, 4), torch.zeros(2, 3, 5, 4)
            with dk(getattr(DB, backend)):
                try:
                    F.scaled_dot_product_attention(q, q, q, **kw)
                    ours = None
                except RuntimeError as e:
                    ours = str(e)
            with torch.nn.attention.sdpa_kernel(getattr(torch.nn.attention.SDPBackend, backend)):
                try:
                    torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, **kw)
                    theirs = None
                except RuntimeError as e:
                    theirs = str(e)
            assert ours == theirs, (backend, kw)


def test_causal_bias_masks_upper_left_and_lower_right():
    from disttorch.nn.attention.bias import CausalBias, CausalVariant, causal_lower_right, causal_upper_left

    upper, lower = causal_upper_left(2, 4), causal_lower_right(2, 4)
    assert type(upper) is CausalBias and isinstance(lower, dt.Tensor)
    assert upper.variant == CausalVariant.UPPER_LEFT and (lower.seq_len_q, lower.seq_len_kv) == (2, 4)
    np.testing.assert_array_equal(upper.numpy(), [[1, 0, 0, 0], [1, 1, 0, 0]])
    np.testing.assert_array_equal(lower._materialize().numpy(), [[1, 1, 1, 0], [1, 1, 1, 1]])
    q, k, v = f64(1, 2, 2, 3), f64(1, 2, 4, 3, seed=1), f64(1, 2, 4, 3, seed=2)
    same = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(
        F.scaled_dot_product_attention(q, k, v, upper).detach().numpy(), same.detach().numpy()
    )
    qa, ka, va = (t.detach().numpy() for t in (q, k, v))
    bias = np.where(lower.numpy(), 0.0, -np.inf)
    got = F.scaled_dot_product_attention(q, k, v, lower).detach().numpy()
    np.testing.assert_allclose(got, reference(qa, ka, va, bias), atol=1e-12)
    with pytest.raises(AssertionError, match="2D"):
        causal_upper_left(1, 2, 3)


@pytest.mark.parity
def test_causal_bias_matches_pytorch(torch):
    import torch.nn.attention.bias  # noqa: F401  (a submodule PyTorch does not import itself)

    from disttorch.nn.attention.bias import causal_lower_right, causal_upper_left

    for make, theirs in (
        (causal_upper_left, "causal_upper_left"),
        (causal_lower_right, "causal_lower_right"),
    ):
        for size in ((3, 5), (5, 3), (4, 4)):
            t = getattr(torch.nn.attention.bias, theirs)(*size)
            np.testing.assert_array_equal(make(*size).numpy(), t._materialize().numpy())
            assert repr(make(*size)) == repr(t)


#: (key shape, value shape, enable_gqa) against a query (2, 4, 3, 8)
_HEAD_CASES = [
    ((2, 2, 5, 8), (2, 2, 5, 8), False),
    ((2, 3, 5, 8), (2, 3, 5, 8), True),
    ((3, 4, 5, 8), (3, 4, 5, 8), False),
    ((2, 4, 5, 8), (2, 2, 5, 8), False),
    ((2, 4, 5, 8), (2, 2, 5, 8), True),
    ((2, 2, 5, 8), (2, 4, 5, 8), True),
    ((4, 5, 8), (2, 2, 5, 8), False),
    ((2, 4, 5, 7), (2, 4, 5, 8), False),
    ((5, 8), (5, 8), False),
    ((2, 1, 5, 8), (2, 1, 5, 8), True),
]


def _sdpa_heads(lib) -> list:
    gen = np.random.default_rng(0)
    q = lib.tensor(gen.standard_normal((2, 4, 3, 8)), dtype=lib.float32)
    got = []
    for k_shape, v_shape, gqa in _HEAD_CASES:
        k = lib.tensor(gen.standard_normal(k_shape), dtype=lib.float32)
        v = lib.tensor(gen.standard_normal(v_shape), dtype=lib.float32)
        try:
            out = lib.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
            got.append(np.round(out.numpy(), 4).tolist())
        except RuntimeError as e:
            got.append(str(e))
    return got


def test_sdpa_batch_and_head_errors():
    got = _sdpa_heads(dt)
    assert (
        got[0] == "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 1"
    )
    assert got[1] == "Number of heads in key and value must divide the number of heads in "
    assert (
        got[2] == "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
    )
    assert got[3] == got[6] == got[0]
    assert got[7] == "Expected size for first two dimensions of batch2 tensor to be: [8, 8] but got: [8, 7]."
    assert all(isinstance(g, list) for g in (got[4], got[5], got[8], got[9]))


@pytest.mark.parity
def test_sdpa_batch_and_head_errors_as_pytorch(torch):
    ours, theirs = _sdpa_heads(dt), _sdpa_heads(torch)
    for a, b in zip(ours, theirs):
        if isinstance(b, str):
            assert a == b
        else:
            np.testing.assert_allclose(np.array(a), np.array(b), atol=2e-4)


def _mask_and_causal(lib) -> list:
    gen = np.random.default_rng(1)
    got = []
    for shape in ((2, 4, 3, 8), (2, 3, 8)):
        q = lib.tensor(gen.standard_normal(shape), dtype=lib.float32)
        k = lib.tensor(gen.standard_normal((*shape[:-2], 5, 8)), dtype=lib.float32)
        mask = lib.tensor(gen.random((shape[-2], 5)) > 0.3)
        try:
            out = lib.nn.functional.scaled_dot_product_attention(q, k, k, attn_mask=mask, is_causal=True)
            both = mask & lib.ones(shape[-2], 5, dtype=lib.bool).tril()
            ref = lib.nn.functional.scaled_dot_product_attention(q, k, k, attn_mask=both)
            got.append(bool(lib.allclose(out, ref, equal_nan=True)))
        except RuntimeError as e:
            got.append(str(e))
    return got


def test_sdpa_mask_with_causal_where_the_flash_kernel_runs():
    assert _mask_and_causal(dt) == [
        True,
        "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
    ]


@pytest.mark.parity
def test_sdpa_mask_with_causal_as_pytorch(torch):
    assert _mask_and_causal(dt) == _mask_and_causal(torch)


def _flash_16_bit(lib, dtype_name):
    """4-d bfloat16/float16 attention (PyTorch's CPU flash kernel), with a float mask, a
    fully masked row, a scale and grouped heads; float32 values for comparing."""
    g = np.random.default_rng(5)
    dtype = getattr(lib, dtype_name)
    q, k, v = (lib.tensor(g.standard_normal((2, 4, n, 16)), dtype=lib.float32).to(dtype) for n in (7, 9, 9))
    mask = lib.tensor(g.standard_normal((7, 9)), dtype=lib.float32).to(dtype)
    mask[2] = float("-inf")
    for t in (q, k, v):
        t.requires_grad_()
    f = lib.nn.functional.scaled_dot_product_attention
    outs = [f(q, k, v), f(q, k, v, attn_mask=mask, scale=0.3), f(q, k[:, :2], v[:, :2], enable_gqa=True)]
    outs[1].backward(lib.tensor(g.standard_normal((2, 4, 7, 16)), dtype=lib.float32).to(dtype))
    return [o.detach().float().numpy() for o in outs + [q.grad, k.grad, v.grad]]


def test_sdpa_16_bit_rounds_the_weights_as_the_cpu_flash_kernel():
    """The flash kernel keeps exp(s - max) and its row sums in float32 and rounds only the
    exponentials (to the inputs' dtype) before the product with V: a 5-token bfloat16 case
    whose value differs from a float32 softmax rounded once at the end."""
    g = np.random.default_rng(0)
    q, k, v = (dt.tensor(g.standard_normal((1, 1, 5, 8)), dtype=dt.float32).bfloat16() for _ in range(3))
    s = (q.float() @ k.float().mT) / math.sqrt(8)
    e = (s - s.amax(-1, keepdim=True)).exp()
    want = ((e.bfloat16().float() @ v.float()) / e.sum(-1, keepdim=True)).bfloat16()
    got = F.scaled_dot_product_attention(q, k, v)
    assert got.dtype == dt.bfloat16 and dt.equal(got, want)
    out = _flash_16_bit(dt, "bfloat16")
    assert np.all(out[1][:, :, 2] == 0)  # the fully masked row


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_sdpa_16_bit_as_pytorch(torch, dtype_name):
    ours, theirs = _flash_16_bit(dt, dtype_name), _flash_16_bit(torch, dtype_name)
    for a, b in zip(ours[:3], theirs[:3]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(ours[3:], theirs[3:]):  # gradients: an ulp on a rare entry
        np.testing.assert_allclose(a, b, rtol=8e-3, atol=1e-5)


def _mha_16_bit(lib):
    """An evaluation-mode bfloat16 ``MultiheadAttention`` without weights (PyTorch runs its
    4-d attention: the CPU flash kernel) with a key padding mask: output and gradients."""
    lib.manual_seed(0)
    m = lib.nn.MultiheadAttention(8, 2, batch_first=True).bfloat16().eval()
    g = np.random.default_rng(2)
    x = lib.tensor(g.standard_normal((3, 5, 8)), dtype=lib.float32).bfloat16().requires_grad_()
    pad = lib.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    out, w = m(x, x, x, key_padding_mask=pad, need_weights=False)
    out.float().pow(2).sum().backward()
    return [t.detach().float().numpy() for t in (out, x.grad, m.in_proj_weight.grad)]


@pytest.mark.parity
def test_mha_without_weights_runs_4d_attention_as_pytorch(torch):
    for ours, theirs in zip(_mha_16_bit(dt), _mha_16_bit(torch)):
        np.testing.assert_array_equal(ours, theirs)


def _mha_fast_path(lib, dtype_name):
    """Batch-first self-attention in evaluation mode without gradients (PyTorch's
    ``_native_multi_head_attention``): output and head-averaged weights."""
    lib.manual_seed(0)
    m = lib.nn.MultiheadAttention(32, 4, batch_first=True).to(getattr(lib, dtype_name)).eval()
    x = lib.tensor(np.random.default_rng(1).standard_normal((2, 40, 32)), dtype=lib.float32)
    x = x.to(getattr(lib, dtype_name))
    with lib.no_grad():
        out, w = m(x, x, x)
    return [t.float().numpy() for t in (out, w)]


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_mha_inference_fast_path_as_pytorch(torch, dtype_name):
    """The bias added and the queries scaled in one rounding, then Q Kᵀ, softmax and the
    product with V each rounded to the dtype (float16: its products sum in another order)."""
    ours, theirs = _mha_fast_path(dt, dtype_name), _mha_fast_path(torch, dtype_name)
    for a, b in zip(ours, theirs):
        if dtype_name == "bfloat16":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=2**-9, atol=2**-14)


def _mha_boolean_masks(lib, dtype_name):
    """bfloat16/float16 ``MultiheadAttention`` with a boolean attention mask and key padding
    mask: training mode returning the weights (with the input's gradient), and the
    inference fast path (PyTorch's masked softmax)."""
    d = getattr(lib, dtype_name)
    g = np.random.default_rng(3)
    lib.manual_seed(0)
    m = lib.nn.MultiheadAttention(16, 2, batch_first=True).to(d)
    x = lib.tensor(g.standard_normal((2, 6, 16)), dtype=lib.float32).to(d).requires_grad_()
    am = lib.tensor(g.random((6, 6)) > 0.7)
    am[:, 0] = False  # (every query keeps a key)
    kpm = lib.tensor([[False] * 5 + [True], [False] * 6])
    out, w = m(x, x, x, attn_mask=am, key_padding_mask=kpm)
    (grad,) = lib.autograd.grad(out, x, lib.tensor(g.standard_normal(out.shape), dtype=lib.float32).to(d))
    m.eval()
    with lib.no_grad():
        fast = m(x.detach(), x.detach(), x.detach(), attn_mask=am, key_padding_mask=kpm, need_weights=False)[
            0
        ]
    return [t.detach().float().numpy() for t in (out, w, grad, fast)]


@pytest.mark.parity
@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_mha_boolean_masks_16_bit_as_pytorch(torch, dtype_name):
    # the weights path ran the fused attention (rounded once), the fast path a softmax of the
    # masked scores: both a few ulps off PyTorch's steps
    for ours, theirs in zip(_mha_boolean_masks(dt, dtype_name), _mha_boolean_masks(torch, dtype_name)):
        np.testing.assert_array_equal(ours, theirs)


def _attention_pool(lib, need_weights):
    """CLIP's AttentionPool2d: separate q/k/v weights, one query, an output projection to
    another width (16 -> 6)."""
    g = np.random.default_rng(3)
    x, wq, wk, wv = (lib.tensor(g.standard_normal(s)) for s in ((5, 2, 16), (16, 16), (16, 16), (16, 16)))
    b_in, w_out, b_out = (lib.tensor(g.standard_normal(s)) for s in ((48,), (6, 16), (6,)))
    w_out.requires_grad_()
    out, _ = lib.nn.functional.multi_head_attention_forward(
        x[:1], x, x, 16, 4, None, b_in, None, None, False, 0.0, w_out, b_out,
        need_weights=need_weights, use_separate_proj_weight=True,
        q_proj_weight=wq, k_proj_weight=wk, v_proj_weight=wv,
    )  # fmt: skip
    out.pow(2).sum().backward()
    return out.detach().numpy(), w_out.grad.numpy()


@pytest.mark.parity
@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_forward_projects_out_to_another_width_as_pytorch(torch, need_weights):
    ours, theirs = _attention_pool(dt, need_weights), _attention_pool(torch, need_weights)
    assert ours[0].shape == (1, 2, 6)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
