"""Float32 batch norm with PyTorch's roundings in every layout its CPU kernels take: planes of
a contiguous ``(N, C, *)`` input, rows of an ``(N, C)``/``(N, C, 1)`` input and of a
channels-last one; forward, running statistics and gradients, training and evaluation
(``kernels/torch_batch_norm.py``), compiled and NumPy forms."""

import numpy as np
import pytest

import disttorch as dt

# (shape, channels-last): planes with and without a partial vector, rows of many and of few
# channels (a partial vector of 8), channels-last 2-D and 3-D
CASES = [
    ((6, 5, 4, 5), False),
    ((3, 4, 7), False),
    ((9, 3, 12), False),
    ((40, 21), False),
    ((17, 6, 1), False),
    ((4, 11, 3, 5), True),
    ((3, 8, 2, 3, 2), True),
]


def _run(lib, x, g, params, training, channels_last, affine=True):
    fmt = {4: "channels_last", 5: "channels_last_3d"}.get(x.ndim)
    xt, gt = lib.from_numpy(x.copy()), lib.from_numpy(g)
    if channels_last:
        xt, gt = (t.contiguous(memory_format=getattr(lib, fmt)) for t in (xt, gt))
    xt.requires_grad_(True)
    w, b, rm, rv = (lib.from_numpy(a.copy()) for a in params)
    wb = (w.requires_grad_(True), b.requires_grad_(True)) if affine else (None, None)
    out = lib.nn.functional.batch_norm(xt, rm, rv, *wb, training=training)
    out.backward(gt)
    grads = [t.grad.numpy() for t in (xt, *wb) if t is not None]
    return [out.detach().numpy(), rm.numpy(), rv.numpy(), *grads]


def _case(rng, shape):
    x, g = (rng.standard_normal((2, *shape)) * 3 + 1).astype(np.float32)
    w, b, rm, rv = rng.standard_normal((4, shape[1])).astype(np.float32)
    return x, g, (w, b, rm, np.abs(rv) + 0.5)


@pytest.mark.parity
@pytest.mark.parametrize("jit", ["1", "0"])
@pytest.mark.parametrize("threads", [1, 2])
def test_float32_batch_norm_bits_in_every_layout(torch, monkeypatch, jit, threads):
    if jit == "1":
        pytest.importorskip("numba")
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    rng = np.random.default_rng(threads)
    before = (dt.get_num_threads(), torch.get_num_threads())
    dt.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        for shape, channels_last in CASES:
            x, g, params = _case(rng, shape)
            for training, affine in ((True, True), (False, True), (True, False)):
                ours = _run(dt, x, g, params, training, channels_last, affine)
                theirs = _run(torch, x, g, params, training, channels_last, affine)
                for i, (a, b) in enumerate(zip(ours, theirs)):
                    assert a.dtype == b.dtype and (i or a.strides == b.strides), (shape, training, i)
                    assert np.array_equal(a, b), (shape, channels_last, training, i)
    finally:
        dt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


@pytest.mark.parametrize("jit", ["1", "0"])
def test_float32_batch_norm_grads_agree_with_float64(monkeypatch, jit):
    """The float32 kernels' gradients are the float64 op's (checked by gradcheck) to float32
    accuracy, in every layout."""
    monkeypatch.setenv("DISTTORCH_JIT", jit)
    rng = np.random.default_rng(3)
    for shape, channels_last in CASES:
        x, g, params = _case(rng, shape)
        for training in (True, False):
            ours = _run(dt, x, g, params, training, channels_last)
            wide = _run(
                dt,
                x.astype(np.float64),
                g.astype(np.float64),
                [a.astype(np.float64) for a in params],
                training,
                channels_last,
            )
            for a, b in zip(ours, wide):
                np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-4, err_msg=str((shape, training)))


@pytest.mark.parity
@pytest.mark.parametrize("threads", [1, 2])
def test_float32_batch_norm_grads_of_another_layout_have_pytorchs_bits(torch, threads):
    """An output gradient laid out otherwise than the input (channels-last against contiguous,
    transposed, expanded, a mean's) takes PyTorch's strided path: its ``sum`` over dims."""
    pytest.importorskip("numba")  # (PyTorch's order of a sum over dims is the compiled one's)
    rng = np.random.default_rng(5)
    before = (dt.get_num_threads(), torch.get_num_threads())
    dt.set_num_threads(threads)
    torch.set_num_threads(threads)
    layouts = {
        "input channels-last": lambda lib, g: g,
        "gradient channels-last": lambda lib, g: g.contiguous(memory_format=lib.channels_last),
        "transposed": lambda lib, g: g.transpose(0, 3).contiguous().transpose(0, 3),
        "expanded": lambda lib, g: g[:1].expand(*g.shape),
        "mean": None,
    }
    try:
        for name, layout in layouts.items():
            x, g, params = _case(rng, (6, 10, 3, 5))
            for training in (True, False):
                results = []
                for lib in (dt, torch):
                    xt = lib.from_numpy(x.copy())
                    if name == "input channels-last":
                        xt = xt.contiguous(memory_format=lib.channels_last)
                    xt.requires_grad_(True)
                    w, b, rm, rv = (lib.from_numpy(a.copy()) for a in params)
                    w.requires_grad_(True)
                    b.requires_grad_(True)
                    out = lib.nn.functional.batch_norm(xt, rm, rv, w, b, training=training)
                    if layout is None:
                        out.mean().backward()
                    else:
                        out.backward(layout(lib, lib.from_numpy(g)))
                    results.append([t.grad.numpy() for t in (xt, w, b)])
                for i, (a, b) in enumerate(zip(*results)):
                    assert np.array_equal(a, b), (name, training, i)
    finally:
        dt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def test_modifying_the_input_after_training_batch_norm_is_refused():
    # backward reads the input (as PyTorch's, which saves it): changed in place, it is refused
    x = dt.randn(4, 3, 5, 5, requires_grad=True)
    y = x * 1
    out = dt.nn.functional.batch_norm(y, None, None, training=True)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
