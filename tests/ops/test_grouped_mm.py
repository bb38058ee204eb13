"""``torch._grouped_mm`` / ``F.grouped_mm``: the four layouts, their gradients, and PyTorch's
CPU checks (dtypes, dimensions, offsets, strides, bias, out_dtype)."""

from __future__ import annotations

import numpy as np
import pytest

import disttorch as dt
import disttorch.nn.functional as F

RNG = np.random.default_rng(0)
A2, B3 = RNG.standard_normal((7, 4)), RNG.standard_normal((3, 4, 8))
A3, B2 = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((8, 12))
G_2D3D = RNG.standard_normal((7, 8))
B33 = RNG.standard_normal((2, 4, 4))
A_K, B_K = RNG.standard_normal((3, 8)), RNG.standard_normal((8, 4))


def _cases(lib):
    """(label, a, b, offs) of each layout (with an empty group where one can be); ``offs`` None
    for the batched one. The groups cover the cut dimension: PyTorch leaves the rest unwritten."""
    f32 = lambda x: lib.tensor(x, dtype=lib.float32, requires_grad=True)  # noqa: E731
    i32 = lambda *v: lib.tensor(v, dtype=lib.int32)  # noqa: E731
    yield "2d x 3d", f32(A2), f32(B3), i32(2, 2, 7)
    yield "3d x 3d", f32(A3), f32(B33), None
    yield "2d x 2d", f32(A_K), f32(B_K), i32(4, 4, 8)
    yield "3d x 2d", f32(A3), f32(B2[:4]), i32(4, 12)


def test_groups_multiply_their_slices():
    a, b = dt.tensor(A2, dtype=dt.float32), dt.tensor(B3, dtype=dt.float32)
    out = dt._grouped_mm(a, b, offs=dt.tensor([2, 2, 5], dtype=dt.int32))
    expected = np.concatenate([A2[:2] @ B3[0], A2[2:5] @ B3[2], np.zeros((2, 8))])
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    a2, b2 = dt.tensor(A_K, dtype=dt.float32), dt.tensor(B_K, dtype=dt.float32)
    out = F.grouped_mm(a2, b2, offs=dt.tensor([4, 6], dtype=dt.int32))
    np.testing.assert_allclose(out[1].numpy(), A_K[:, 4:6] @ B_K[4:6], rtol=1e-5, atol=1e-5)


def test_gradient_flows_to_each_group():
    a, b = (
        dt.tensor(A2, dtype=dt.float32, requires_grad=True),
        dt.tensor(B3, dtype=dt.float32, requires_grad=True),
    )
    dt._grouped_mm(a, b, offs=dt.tensor([2, 2, 5], dtype=dt.int32)).backward(
        dt.tensor(G_2D3D, dtype=dt.float32)
    )
    np.testing.assert_allclose(a.grad.numpy()[2:5], G_2D3D[2:5] @ B3[2].T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.grad.numpy()[0], A2[:2].T @ G_2D3D[:2], rtol=1e-5, atol=1e-5)
    assert not b.grad[1].any() and not a.grad[5:].any()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda i: dt._grouped_mm(dt.ones(7, 4, dtype=dt.float64), dt.ones(3, 4, 4), i), "got Double"),
        (lambda i: dt._grouped_mm(dt.ones(4), dt.ones(3, 4, 4), i), "mat_a has to be 2 or 3d"),
        (lambda i: dt._grouped_mm(dt.ones(7, 4), dt.ones(3, 8, 4), i), "contraction dimension"),
        (lambda i: dt._grouped_mm(dt.ones(7, 4), dt.ones(3, 4, 4)), "Have to provide offsets"),
        (lambda i: dt._grouped_mm(dt.ones(7, 4), dt.ones(3, 4, 4), i.long()), "Offsets have to be int32"),
        (lambda i: dt._grouped_mm(dt.ones(7, 3), dt.ones(3, 3, 4), i), "multiple of 16 bytes"),
        (lambda i: dt._grouped_mm(dt.ones(7, 4), dt.ones(3, 4, 4), i, bias=dt.ones(4)), "Bias not supported"),
        (lambda i: dt._grouped_mm(dt.ones(7, 4), dt.ones(3, 4, 4), i, out_dtype=dt.bfloat16), "output dtype"),
        (lambda i: dt._grouped_mm(dt.ones(7, 4), dt.ones(3, 4, 4), i[:2]), "batch sizes have to match"),
        (lambda i: dt._grouped_mm(dt.ones(2, 3, 4), dt.ones(3, 4, 4)), "batched dimension has to match"),
        (lambda i: dt._grouped_mm(dt.ones(7, 4), dt.ones(3, 4, 4), i.flip(0)), "non-decreasing"),
    ],
)
def test_bad_operands_are_refused(call, message):
    with pytest.raises(RuntimeError, match=message):
        call(dt.tensor([2, 2, 5], dtype=dt.int32))


@pytest.mark.parity
def test_layouts_and_gradients_as_pytorch(torch):
    for (label, a, b, offs), (_, ta, tb, toffs) in zip(_cases(dt), _cases(torch)):
        out, ref = dt._grouped_mm(a, b, offs=offs), torch.nn.functional.grouped_mm(ta, tb, offs=toffs)
        np.testing.assert_allclose(
            out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5, err_msg=label
        )
        grad = RNG.standard_normal(tuple(ref.shape))
        out.backward(dt.tensor(grad, dtype=dt.float32))
        ref.backward(torch.tensor(grad, dtype=torch.float32))
        for ours, theirs in ((a, ta), (b, tb)):
            np.testing.assert_allclose(
                ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-5, err_msg=label
            )
    with pytest.raises(RuntimeError, match="multiple of 16 bytes"):
        torch._grouped_mm(torch.ones(7, 3), torch.ones(3, 3, 4), torch.tensor([2, 2, 5], dtype=torch.int32))
