"""The recurrent loops' per-step product (kernels/step_product.py): every form (one product, or
column blocks of 16, 32 or 64) gives ``h @ w`` for any number of rows up to the batch, the
choice is measured once per shape, and the layers built on any form agree."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn
from disttorch.kernels import step_product as S


@pytest.fixture
def force(monkeypatch):
    """Make every StepProduct use the given form (a block width, 0 for one product)."""

    def use(width):
        class Always(dict):
            def __contains__(self, key):
                return True

            def __getitem__(self, key):
                return width

        monkeypatch.setattr(S, "_fastest", Always())

    return use


@pytest.mark.parametrize("width", [0, 16, 32, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_form_computes_h_times_w(force, width, dtype):
    force(width)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((40, 128)).astype(dtype)
    product = S.StepProduct(w, rows=6, steps=20)
    assert (product.blocks is None) == (width == 0)
    if width:
        assert product.blocks.shape == (128 // width, 40, width)
    for rows in (6, 3, 1):  # a packed sequence's batch shrinks
        h = rng.standard_normal((rows, 40)).astype(dtype)
        out = np.full((rows, 128), np.nan, dtype=dtype)
        product(h, out)
        np.testing.assert_allclose(out, h @ w, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_shapes_without_blocks_use_one_product():
    w = np.ones((8, 48), np.float32)  # 48 columns: only 16-column blocks divide them
    assert S.StepProduct(np.ones((8, 40), np.float32), 4, 20).blocks is None  # no width divides 40
    assert S.StepProduct(np.asfortranarray(w), 4, 20).blocks is None  # not C-contiguous
    assert S.StepProduct(w, 1, 20).blocks is None  # one row: nothing to gain
    assert S.StepProduct(w, 4, S.MIN_STEPS - 1).blocks is None  # a cell's few steps: no blocked copy
    with pytest.raises(ValueError, match="C-contiguous"):
        S._blocked_view(np.ones((4, 48), np.float32).T.copy().T, 16)


def test_the_choice_is_measured_once_per_shape(monkeypatch):
    calls = []
    monkeypatch.setattr(S, "_fastest", {})
    real = S._measure

    def counting(w, rows, widths):
        calls.append((rows, w.shape, tuple(widths)))
        return real(w, rows, widths)

    monkeypatch.setattr(S, "_measure", counting)
    w = np.ones((32, 96), np.float32)
    choice = S.StepProduct(w, 8, 20).blocks
    S.StepProduct(w * 2, 8, 20)
    S.StepProduct(w, 4, 20)
    assert calls == [(8, (32, 96), (16, 32)), (4, (32, 96), (16, 32))]
    assert S._fastest[(8, 32, 96, w.dtype.str)] in (0, 16, 32)
    assert choice is None or choice.shape[0] * choice.shape[2] == 96


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_layers_give_the_same_numbers_with_every_form(force, cls):
    results = []
    for width in (0, 16, 32):
        force(width)
        dt.manual_seed(0)
        model = getattr(nn, cls)(8, 32, num_layers=2, bidirectional=True)
        x = dt.randn(12, 3, 8, requires_grad=True)
        out = model(x)[0]
        (out * out).sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
