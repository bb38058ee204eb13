"""``functorch.experimental.control_flow``'s ``cond`` and ``map`` (the torch.export tutorial
imports ``cond`` from there), eager, with gradients, as PyTorch's outside a compiler."""

import numpy as np
import pytest

import disttorch as dt
from disttorch._functorch.experimental.control_flow import cond
from disttorch._functorch.experimental.control_flow import map as cf_map


def _run(L, cond, cf_map):
    x = L.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=L.float64, requires_grad=True)
    pos = cond(x.sum() > -1, lambda t: t.sin(), lambda t: t.cos(), [x])
    neg = cond(x.sum() > 1, lambda t: t.sin(), lambda t: t.cos(), [x])

    def body(row, w):
        return cond(row.sum() > 0, lambda r: r * w, lambda r: r - w, [row])

    w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64)
    mapped = cf_map(body, x, w)
    pair = cf_map(lambda p: (p[0] + p[1], p[0] * p[1]), (x, x * 2))
    g = L.autograd.grad((mapped.sum() + pos.sum() + pair[1].sum()), x)[0]
    return [t.detach().numpy() for t in (pos, neg, mapped, pair[0], pair[1], g)]


def test_cond_and_map():
    pos, neg, mapped, s, p, g = _run(dt, cond, cf_map)
    x = np.linspace(-1, 1, 12).reshape(4, 3)
    np.testing.assert_allclose(pos, np.sin(x))
    np.testing.assert_allclose(neg, np.cos(x))
    w = np.array([1.0, 2.0, 3.0])
    want = np.stack([r * w if r.sum() > 0 else r - w for r in x])
    np.testing.assert_allclose(mapped, want)
    np.testing.assert_allclose(s, 3 * x)
    np.testing.assert_allclose(p, 2 * x * x)
    want_g = np.cos(x) + np.stack([w if r.sum() > 0 else np.ones(3) for r in x]) + 4 * x
    np.testing.assert_allclose(g, want_g)


def test_map_refuses_empty_and_ragged():
    with pytest.raises(RuntimeError, match="cannot be 0"):
        cf_map(lambda t: t, dt.zeros(0, 2))
    with pytest.raises(RuntimeError, match="consistent"):
        cf_map(lambda p: p[0], (dt.zeros(2, 2), dt.zeros(3, 2)))


@pytest.mark.parity
def test_cond_and_map_match_pytorch(torch):
    from functorch.experimental.control_flow import cond as tcond
    from functorch.experimental.control_flow import map as tmap

    for a, b in zip(_run(dt, cond, cf_map), _run(torch, tcond, tmap)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
