"""``torch.ops.aten.<name>``: an operator disttorch implements runs on its first call, whatever
was imported before (an op family's function, an ATen step registered by a module not loaded
yet, a function of ``torch`` or ``torch.nn.functional``)."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt

A, B = np.arange(48.0).reshape(6, 8) / 48, np.arange(64.0).reshape(2, 8, 4) / 64


def _calls(lib):
    """What four ATen operators of different homes compute."""
    a, b = lib.tensor(A, dtype=lib.float32), lib.tensor(B, dtype=lib.float32)
    offs = lib.tensor([2, 6], dtype=lib.int32)
    aten = lib.ops.aten
    x = lib.tensor([[1.0, -2.0, 3.0]])
    return [
        aten._grouped_mm(a, b, offs=offs).numpy().round(5).tolist(),
        aten._softmax.default(x, 1, False).numpy().round(5).tolist(),
        aten.gelu.default(x).numpy().round(5).tolist(),
        aten.conv2d.default(lib.ones(1, 1, 3, 3), lib.ones(1, 1, 2, 2)).numpy().tolist(),
    ]


def test_aten_operators_run_on_first_use():
    out = _calls(dt)
    np.testing.assert_allclose(out[0][:2], A[:2] @ B[0], atol=1e-5)
    assert out[3] == [[[[4.0, 4.0], [4.0, 4.0]]]]


def test_an_operator_nothing_implements_is_named_but_refused():
    with pytest.raises(NotImplementedError, match="aten::_sparse_addmm has no disttorch implementation"):
        dt.ops.aten._sparse_addmm(dt.ones(2, 2), dt.ones(2, 2), dt.ones(2, 2))


@pytest.mark.parity
def test_aten_operators_as_pytorch(torch):
    assert _calls(dt) == _calls(torch)
