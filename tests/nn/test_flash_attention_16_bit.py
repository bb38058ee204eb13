"""PyTorch's CPU flash attention kernel on bfloat16/float16 inputs (``kernels/flash_attention``):
its fast exponential, its blocks of keys and queries, and the bits of
``scaled_dot_product_attention`` forward and backward against PyTorch's."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.kernels.flash_attention import fexp_u20, query_block
from disttorch.kernels.vec_exp import compiled_exp


def test_fexp_u20_within_a_16_bit_ulp_and_its_limits():
    x = np.linspace(-87.0, 88.0, 20001, dtype=np.float32)
    want = np.exp(x.astype(np.float64))
    assert np.all(np.abs(fexp_u20(x) / want - 1) < 2.0**-9)
    edges = np.array([-np.inf, -88.0, 89.0, np.inf], np.float32)
    np.testing.assert_array_equal(fexp_u20(edges), [0.0, 0.0, np.inf, np.inf])
    assert [query_block(n) for n in (7, 192, 768)] == [32, 64, 256]


def _attention(lib, dtype_name, queries, keys, causal, kv_heads=2):
    """Output and gradients of 4-d 16-bit attention (2 query heads), as float32 arrays."""
    g = np.random.default_rng(queries + keys)
    dtype = getattr(lib, dtype_name)
    q, k, v = (
        lib.tensor(g.standard_normal((1, h, n, 16)), dtype=lib.float32).to(dtype).requires_grad_()
        for h, n in ((2, queries), (kv_heads, keys), (kv_heads, keys))
    )
    gqa = kv_heads != 2
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    out.backward(lib.tensor(g.standard_normal(out.shape), dtype=lib.float32).to(dtype))
    return [t.detach().float().numpy() for t in (out, q.grad, k.grad, v.grad)]


# 16 or more keys take the fast exponential; 40 queries make two blocks of queries, whose
# key and value gradients add in the 16-bit dtype; 530 keys make two blocks of keys
# one key/value head for the two query heads: the kernel adds their key and value gradients in
# the 16-bit dtype, head after head
CASES = [(40, 40, False, 2), (40, 40, True, 2), (40, 530, True, 2), (24, 24, True, 1)]


@pytest.mark.parity
@pytest.mark.parametrize("queries,keys,causal,kv_heads", CASES)
def test_flash_attention_bfloat16_bits_as_pytorch(torch, queries, keys, causal, kv_heads):
    ours = _attention(dt, "bfloat16", queries, keys, causal, kv_heads)
    theirs = _attention(torch, "bfloat16", queries, keys, causal, kv_heads)
    np.testing.assert_array_equal(ours[0], theirs[0])
    for a, b in zip(ours[1:], theirs[1:]):
        if compiled_exp():  # the backward's SLEEF exp (numba); NumPy's may differ by an ulp
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=2**-7, atol=1e-6)


@pytest.mark.parity
def test_flash_attention_float16_as_pytorch(torch):
    """float16: the same steps; PyTorch's float16 products sum in another order, so about
    one element in a hundred differs by an ulp (or is a tiny number where PyTorch's is 0)."""
    ours, theirs = _attention(dt, "float16", 40, 530, False), _attention(torch, "float16", 40, 530, False)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=2**-9, atol=2**-14)
        assert np.mean(a != b) < 0.02


def _masked_attention(lib, keys):
    """bfloat16 attention with a float mask over ``keys`` keys: output and gradients."""
    g = np.random.default_rng(keys)
    bf = lib.bfloat16
    q, k, v = (
        lib.tensor(g.standard_normal((1, 2, n, 16)), dtype=lib.float32).to(bf).requires_grad_()
        for n in (24, keys, keys)
    )
    mask = lib.tensor(g.standard_normal((24, keys)), dtype=lib.float32).to(bf)
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out.backward(lib.tensor(g.standard_normal(out.shape), dtype=lib.float32).to(bf))
    return [t.detach().float().numpy() for t in (out, q.grad, k.grad, v.grad)]


@pytest.mark.parity
def test_flash_attention_bfloat16_float_mask_and_many_keys_within_the_bound(torch):
    """The README's bound for bfloat16 with a float mask or more than 512 keys: under 1% of the
    entries differ from PyTorch's, each by at most 2^-8 of the tensor's largest magnitude."""
    for a, b in zip(_masked_attention(dt, 600), _masked_attention(torch, 600)):
        assert np.mean(a != b) < 0.01
        assert np.abs(a - b).max() <= 2.0**-8 * np.abs(b).max()
