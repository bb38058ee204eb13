"""``make_dual`` keeps a tangent laid out as its primal and copies one that is not into the
primal's layout (PyTorch's ``forward_ad.make_dual``: "If the layout of the tangent is
different from that of the primal, the values of the tangent are copied into a new tensor
with the same metadata as the primal")."""

import pytest

import disttorch as dt
import disttorch.autograd.forward_ad as fwAD


def _layouts(L, fw):
    L.manual_seed(0)
    primal = L.randn(4, 5, dtype=L.float64)
    same = L.randn(4, 5, dtype=L.float64)
    transposed = L.randn(5, 4, dtype=L.float64).T
    sliced = L.randn(4, 6, dtype=L.float64)[:, 1:]
    out = []
    with fw.dual_level():
        for tangent in (same, transposed, sliced):
            got = fw.unpack_dual(fw.make_dual(primal, tangent)).tangent
            out.append((got is tangent, got.stride(), got.storage_offset(), bool(L.equal(got, tangent))))
        y = fw.unpack_dual(fw.make_dual(primal, transposed) * 3).tangent
        out.append(bool(L.allclose(y, 3 * transposed)))
    return out


def test_tangent_takes_the_primals_layout():
    same, transposed, sliced, jvp = _layouts(dt, fwAD)
    assert same == (True, (5, 1), 0, True)
    assert transposed == (False, (5, 1), 0, True)
    assert sliced == (False, (5, 1), 0, True)
    assert jvp


@pytest.mark.parity
def test_tangent_layout_matches_pytorch(torch):
    import torch.autograd.forward_ad as tfw

    assert _layouts(dt, fwAD) == _layouts(torch, tfw)
