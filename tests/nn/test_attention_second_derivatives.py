"""Second derivatives through attention where PyTorch's CPU build gives them: a mask that
requires grad sends ``scaled_dot_product_attention`` down the math path (flash has no mask
gradient), and ``nn.MultiheadAttention``'s returned weights may carry a gradient of their own."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradgradcheck

rng = np.random.default_rng(5)
Q, K, V = (rng.standard_normal((1, 1, 2, 3)) for _ in range(3))
MASK = rng.standard_normal((2, 2))
X = rng.standard_normal((3, 1, 4))


def test_a_mask_that_requires_grad_takes_the_math_path():
    q, k, v = (dt.tensor(a, requires_grad=True) for a in (Q, K, V))
    mask = dt.tensor(MASK, requires_grad=True)
    f = dt.nn.functional.scaled_dot_product_attention
    assert f(q, k, v, attn_mask=mask).grad_fn.name() == "UnsafeViewBackward0"
    assert (
        f(q, k, v, attn_mask=mask.detach()).grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    )
    assert gradgradcheck(lambda *a: f(*a[:3], attn_mask=a[3]), (q, k, v, mask))


def _mha(T, x):
    T.manual_seed(0)
    m = T.nn.MultiheadAttention(4, 2, dtype=T.float64)
    return m(x, x, x)


def test_multihead_attention_weights_differentiable_twice():
    x = dt.tensor(X, requires_grad=True)
    assert gradgradcheck(lambda a: _mha(dt, a)[1], (x,))
    assert gradgradcheck(lambda a: tuple(_mha(dt, a)), (x,))


def _second_derivatives(T) -> list:
    out = []
    f = T.nn.functional.scaled_dot_product_attention
    q, k, v, mask = (T.tensor(a, requires_grad=True) for a in (Q, K, V, MASK))
    g = T.autograd.grad(f(q, k, v, attn_mask=mask).pow(2).sum(), (q, k, v, mask), create_graph=True)
    out += T.autograd.grad(sum((t * t).sum() for t in g), (q, k, v, mask))
    for use_output in (True, False):
        x = T.tensor(X, requires_grad=True)
        o, w = _mha(T, x)
        loss = (w * w).sum() + ((o * o).sum() if use_output else 0)
        (g,) = T.autograd.grad(loss, x, create_graph=True)
        out += list(T.autograd.grad((g * g).sum(), x))
    return [t.numpy() for t in out]


@pytest.mark.parity
def test_attention_second_derivatives_as_pytorch(torch):
    for ours, theirs in zip(_second_derivatives(dt), _second_derivatives(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
