"""``torch.nn.attention``: ``flex_attention`` with score and mask functions, ``BlockMask`` /
``create_block_mask`` metadata, and ``sdpa_kernel``; compared with PyTorch's own CPU
implementation (forward only there: PyTorch's CPU build refuses backward, so gradients are
checked against finite differences)."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.nn.attention import SDPBackend, sdpa_kernel
from disttorch.nn.attention.flex_attention import (
    AuxRequest,
    BlockMask,
    create_block_mask,
    create_mask,
    flex_attention,
)


def causal(b, h, q, kv):
    return q >= kv


def sliding(b, h, q, kv):
    return (q - kv).abs() <= 3


def head_and_batch(b, h, q, kv):
    return (kv <= q + h) | (b == 1)


MASKS = ["causal", "sliding", "head_and_batch", "and", "or", "documents"]


def _documents(lib, n):
    """A document mask: tokens attend within their document (indexing a captured tensor)."""
    doc = lib.tensor([0] * (n // 3) + [1] * (n // 3) + [2] * (n - 2 * (n // 3)))
    return lambda b, h, q, kv: doc[q] == doc[kv]


def _mask(lib, name, n):
    """The mask ``name`` for ``lib`` (composed with that library's ``and_masks``/``or_masks``)."""
    fa = lib.nn.attention.flex_attention
    plain = {"causal": causal, "sliding": sliding, "head_and_batch": head_and_batch}
    if name in plain:
        return plain[name]
    if name == "and":
        return fa.and_masks(causal, sliding)
    if name == "or":
        return fa.or_masks(sliding, head_and_batch)
    return _documents(lib, n)


def _pt(torch, t):
    return None if t is None else torch.from_numpy(np.ascontiguousarray(t.detach().numpy()))


@pytest.mark.parity
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize(
    ("B", "H", "L", "S", "block"), [(2, 2, 20, 13, 4), (None, None, 9, 9, (2, 3)), (1, 3, 7, 11, 128)]
)
@pytest.mark.parametrize("separate", [True, False])
def test_block_mask_metadata_matches_pytorch(torch, mask, B, H, L, S, block, separate):
    from torch.nn.attention import flex_attention as tf

    mine = create_block_mask(
        _mask(dt, mask, max(L, S)),
        B,
        H,
        L,
        S,
        "cpu",
        block,
        separate_full_blocks=separate,
    )
    ref = tf.create_block_mask(
        _mask(torch, mask, max(L, S)),
        B,
        H,
        L,
        S,
        "cpu",
        block,
        separate_full_blocks=separate,
    )
    for name in BlockMask._TENSOR_ATTRS:
        a, b = getattr(mine, name), getattr(ref, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == dt.int32 and a.tolist() == b.tolist(), name
    assert (
        mine.shape == ref.shape and mine.BLOCK_SIZE == ref.BLOCK_SIZE and mine.seq_lengths == ref.seq_lengths
    )
    assert mine.to_dense().tolist() == ref.to_dense().tolist()
    assert mine.sparsity() == pytest.approx(ref.sparsity()) and mine.numel() == ref.numel()
    assert str(mine) == str(ref)
    assert repr(mine).replace("disttorch.", "torch.") == repr(ref)
    assert str(mine[0]) == str(ref[0]) and mine[-1, 0].kv_indices.tolist() == ref[-1, 0].kv_indices.tolist()
    adj, ref_adj = mine._adjust(L - 2, S - 1), ref._adjust(L - 2, S - 1)
    assert adj.kv_num_blocks.tolist() == ref_adj.kv_num_blocks.tolist() and adj.shape == ref_adj.shape


@pytest.mark.parity
def test_create_mask_matches_pytorch(torch):
    from torch.nn.attention import flex_attention as tf

    for name in MASKS:
        mine, ref = (
            create_mask(_mask(dt, name, 7), 2, 2, 5, 7),
            tf.create_mask(_mask(torch, name, 7), 2, 2, 5, 7, "cpu"),
        )
        assert mine.tolist() == ref.tolist()
    score = lambda s, b, h, q, kv: dt.where(q >= kv, s, -float("inf"))  # noqa: E731
    score_pt = lambda s, b, h, q, kv: torch.where(q >= kv, s, -float("inf"))  # noqa: E731
    assert create_mask(score, 1, 1, 4, 4).tolist() == tf.create_mask(score_pt, 1, 1, 4, 4, "cpu").tolist()


def _inputs(B=2, Hq=4, Hkv=2, L=9, S=11, E=8, Ev=5, dtype=dt.float64, seed=0):
    g = np.random.default_rng(seed)
    return [
        dt.tensor(g.standard_normal(s), dtype=dtype) for s in ((B, Hq, L, E), (B, Hkv, S, E), (B, Hkv, S, Ev))
    ]


def _bias(lib, bias):
    def relative(score, b, h, q, kv):
        return score * (h + 1) / 2 + bias[h, q, kv] - (q - kv).abs()

    return relative


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "case", ["plain", "score_mod", "causal", "both", "documents", "dead_rows", "gqa", "scale"]
)
def test_flex_attention_matches_pytorch(torch, dtype, case):
    from torch.nn.attention import flex_attention as tf

    q, k, v = _inputs(dtype=getattr(dt, dtype))
    if case != "gqa":
        k, v = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    bias = dt.tensor(np.random.default_rng(1).standard_normal((4, 9, 11)), dtype=getattr(dt, dtype))
    mods = (
        {"score_mod": (_bias(dt, bias), _bias(torch, _pt(torch, bias)))}
        if case in ("score_mod", "both")
        else {}
    )
    masks = {
        "causal": causal,
        "both": sliding,
        "documents": None,
        "dead_rows": lambda b, h, q, kv: (q != 2) & (kv <= q + b),
    }
    kwargs = {"enable_gqa": case == "gqa", "scale": 0.3 if case == "scale" else None}
    mine_mask = ref_mask = None
    if case in masks:
        fn = masks[case]
        mine_mask = create_block_mask(fn or _documents(dt, 11), 2, 4, 9, 11, "cpu", 4)
        ref_mask = tf.create_block_mask(fn or _documents(torch, 11), 2, 4, 9, 11, "cpu", 4)
    out, aux = flex_attention(
        q, k, v, mods.get("score_mod", (None,))[0], mine_mask, return_aux=AuxRequest(lse=True), **kwargs
    )
    ref, ref_aux = tf.flex_attention(
        _pt(torch, q), _pt(torch, k), _pt(torch, v), mods.get("score_mod", (None, None))[1], ref_mask,
        return_aux=tf.AuxRequest(lse=True), **kwargs,
    )  # fmt: skip
    tol = 1e-12 if dtype == "float64" else 2e-5
    assert out.dtype == q.dtype and tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=tol, rtol=tol)
    np.testing.assert_allclose(aux.lse.numpy(), ref_aux.lse.numpy(), atol=tol, rtol=tol)
    assert aux.max_scores is None and ref_aux.max_scores is None
    _, lse = flex_attention(q, k, v, block_mask=mine_mask, return_lse=True, **kwargs)
    assert lse.shape == out.shape[:-1]


def test_flex_attention_gradcheck_through_q_k_v_and_a_captured_bias():
    q, k, v = (t.requires_grad_() for t in _inputs(B=1, Hq=2, Hkv=1, L=4, S=5, E=3, Ev=2))
    bias = dt.randn(2, 4, 5, dtype=dt.float64, requires_grad=True)
    mask = create_block_mask(lambda b, h, qi, ki: (ki <= qi + 1) & (qi != 0), 1, 2, 4, 5, "cpu", 2)

    def f(q, k, v, bias):
        return flex_attention(q, k, v, _bias(dt, bias), mask, enable_gqa=True)

    assert gradcheck(f, (q, k, v, bias))
    out = f(q, k, v, bias)
    out.sum().backward()
    assert q.grad[0, :, 0].abs().sum().item() == 0  # a fully masked row gives zeros and no gradient


def test_flex_attention_errors_say_what_was_wrong():
    q, k, v = _inputs()
    with pytest.raises(ValueError, match="same number of heads but got Hq=4 and Hkv=2"):
        flex_attention(q, k, v)
    mask = create_block_mask(causal, None, None, 8, 11)
    with pytest.raises(ValueError, match="created for a smaller length"):
        flex_attention(q, k, v, block_mask=mask, enable_gqa=True)
    with pytest.raises(RuntimeError, match="sliced BlockMask"):
        flex_attention(q, k, v, block_mask=create_block_mask(causal, 2, 4, 9, 11)[0], enable_gqa=True)
    with pytest.raises(NotImplementedError, match="max scores is not supported on CPU"):
        flex_attention(q, q, q, return_aux=AuxRequest(lse=True, max_scores=True))
    with pytest.raises(AssertionError, match="requires a mask_mod"):
        create_block_mask(lambda s, b, h, q, kv: s, 1, 1, 4, 4)
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        create_block_mask(causal, 1, 1, 4, 4, device="cuda")


@pytest.mark.parity
def test_sdpa_kernel_sets_and_restores_the_switches(torch):
    from torch.nn.attention import SDPBackend as PtBackend

    assert [(b.name, int(b)) for b in SDPBackend] == [(b, int(v)) for b, v in PtBackend.__members__.items()]
    for lib, backend in ((dt, SDPBackend), (torch, PtBackend)):
        cuda = lib.backends.cuda
        with sdpa_kernel(backend.MATH) if lib is dt else torch.nn.attention.sdpa_kernel(backend.MATH):
            assert (cuda.math_sdp_enabled(), cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled()) == (
                True,
                False,
                False,
            )
        assert cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
    with pytest.raises(AssertionError, match="instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass
