"""softmax and log_softmax at the top level and as methods (disttorch/ops/softmax.py): values
against NumPy, stability, the dtype argument, errors, float64 gradient checks, and parity with
PyTorch when it is installed."""

import numpy as np
import pytest
from parity_helpers import PARITY_RNG, assert_values_and_gradients_match

import disttorch as dt
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck, gradgradcheck
from disttorch.kernels.vec_exp import compiled_exp

RNG = np.random.default_rng(7)


def leaf(arr):
    return dt.tensor(np.asarray(arr, dtype=np.float64), requires_grad=True)


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_values_top_level_and_method(dim):
    x = RNG.normal(size=(3, 4)) * 10
    t = dt.tensor(x)
    ref = _np_softmax(x, dim)
    for out in (dt.softmax(t, dim), t.softmax(dim), t.softmax(dim=dim)):
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    for out in (dt.log_softmax(t, dim), t.log_softmax(dim)):
        np.testing.assert_allclose(out.numpy(), np.log(ref), rtol=1e-12, atol=1e-12)


def test_softmax_reuses_the_nn_functional_implementation():
    x = leaf(RNG.normal(size=(2, 3)))
    assert dt.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert x.log_softmax(1).grad_fn.name() == "LogSoftmaxBackward0"
    np.testing.assert_array_equal(dt.softmax(x, 0).detach().numpy(), F.softmax(x, 0).detach().numpy())


def test_softmax_stable_for_large_inputs_and_0_dim():
    t = dt.tensor([1000.0, 1000.0, -1000.0])
    np.testing.assert_allclose(dt.softmax(t, 0).numpy(), [0.5, 0.5, 0.0])
    assert np.isfinite(dt.log_softmax(t, 0).numpy()).all()
    assert dt.softmax(dt.tensor(2.0), 0).item() == 1.0


def test_softmax_dtype_argument():
    t = dt.tensor([[1, 2, 3]])
    assert dt.softmax(t, 1, dt.float64).dtype == dt.float64
    assert dt.softmax(t, -1, dtype=dt.float32).dtype == dt.float32
    assert t.log_softmax(1, dt.float64).dtype == dt.float64
    assert dt.softmax(dt.ones(2, 3), -1).dtype == dt.float32


def test_softmax_errors():
    t = dt.ones(2, 3)
    with pytest.raises(TypeError):
        dt.softmax(t)  # dim is required at the top level, as in PyTorch
    with pytest.raises(TypeError, match="must be int, not NoneType"):
        dt.softmax(t, None)
    with pytest.raises(IndexError, match="Dimension out of range"):
        dt.softmax(t, 2)
    with pytest.raises(RuntimeError):
        dt.softmax(dt.tensor([1, 2]), 0)  # integer input without dtype


@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_gradcheck(dim):
    x = leaf(RNG.normal(size=(3, 4)))
    assert gradcheck(lambda v: dt.softmax(v, dim), (x,))
    assert gradcheck(lambda v: v.log_softmax(dim), (x,))
    assert gradgradcheck(lambda v: dt.log_softmax(v, dim), (x,))


# ---------------------------------------------------------------------- parity with PyTorch
PARITY_GRAD = {  # name: (fn(lib, *float64 leaves), inputs)
    "softmax": (lambda L, a: L.softmax(a, 1), [PARITY_RNG.normal(size=(3, 4))]),
    "log_softmax": (lambda L, a: a.log_softmax(0), [PARITY_RNG.normal(size=(3, 4))]),
    "softmax_dtype": (lambda L, a: L.softmax(a, -1, dtype=L.float32), [PARITY_RNG.normal(size=(3, 4))]),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(PARITY_GRAD))
def test_values_and_gradients_match_torch(name):
    assert_values_and_gradients_match(*PARITY_GRAD[name], rtol=1e-6, atol=1e-9)  # one case is float32


def test_softmax_backward_data_is_softmaxs_gradient():
    """``torch._softmax_backward_data``, which custom softmax Functions call in backward."""
    x = dt.tensor(PARITY_RNG.normal(size=(3, 4)), requires_grad=True)
    g = dt.tensor(PARITY_RNG.normal(size=(3, 4)), requires_grad=True)
    y = F.softmax(x, 1)
    (expected,) = dt.autograd.grad(y, x, g, retain_graph=True)
    got = dt._softmax_backward_data(g, y, -1, dt.float64)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert gradcheck(
        lambda a, b: dt._softmax_backward_data(a, b, 0, dt.float64), (g, y.detach().requires_grad_())
    )
    half = dt._softmax_backward_data(g.float(), y.float(), 1, dt.float16)
    assert half.dtype == dt.float16


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_16_bit_log_softmax_and_softmax_gradient_as_pytorch(torch, low, dim):
    """Along the last dim log-softmax rounds its row sum and log to 16 bits, along another
    dim only its result (PyTorch's two kernels); softmax's backward computes in float32 and
    rounds once. Bit for bit PyTorch's (softmax's forward along another dim rounds part of
    a row otherwise: see kernels/softmax.py)."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 7, 5, 4)).astype(np.float32) * 3
    g = rng.standard_normal(a.shape).astype(np.float32)
    for fn in ("log_softmax", "softmax"):
        grads, outs = [], []
        for L in (dt, torch):
            x = L.tensor(a).to(getattr(L, low)).requires_grad_()
            out = getattr(L, fn)(x, dim)
            out.backward(L.tensor(g).to(getattr(L, low)))
            outs.append(out.detach().float().numpy())
            grads.append(x.grad.float().numpy())
        if fn == "log_softmax":
            np.testing.assert_array_equal(outs[0], outs[1])
        if fn == "softmax" and dim != -1:  # (its forward is not replayed bit for bit there)
            np.testing.assert_allclose(grads[0], grads[1], rtol=2e-2, atol=1e-3)
        else:
            np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.skipif(not compiled_exp(), reason="needs numba (the fast extra)")
def test_float32_last_dim_softmax_gives_pytorch_bits(torch):
    """PyTorch's AVX-512 kernel: SLEEF's expf, the row sum in reduce_all's lane order, times
    the reciprocal (softmax) or minus SLEEF's logf of the sum (log_softmax)."""
    rng = np.random.default_rng(0)
    for shape, scale in [((40, 10), 3), ((6, 65), 2), ((2, 3, 1000), 5), ((3,), 1), ((4, 16), 1)]:
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        for name in ("softmax", "log_softmax"):
            ours = getattr(dt.nn.functional, name)(dt.from_numpy(x), dim=-1).numpy()
            theirs = getattr(torch.nn.functional, name)(torch.from_numpy(x), dim=-1).numpy()
            np.testing.assert_array_equal(ours, theirs, err_msg=f"{name} {shape}")


@pytest.mark.skipif(not compiled_exp(), reason="needs numba (the fast extra)")
@pytest.mark.parametrize("threads", [1, 2])
def test_float32_log_softmax_and_its_gradient_give_pytorch_bits_along_every_dim(torch, threads):
    """The last dim: the output gradient's row sum in reduce_all's lane order, minus SLEEF's
    expf of the output times it, fused. Another dim: PyTorch's column kernel (chunks of
    columns, sums along the dim in order, SLEEF's expf on whole 16-column vectors and the C
    library's after them, SLEEF's logf). Transposed and sliced inputs too."""
    rng = np.random.default_rng(threads)
    before = (dt.get_num_threads(), torch.get_num_threads())
    dt.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        for shape in [(40, 10), (6, 65), (2, 3, 100), (3,), (4, 16), (5, 7), (3, 70, 21), (2, 5000, 20)]:
            x, g = (rng.standard_normal((2, *shape)) * 3).astype(np.float32)
            for dim in range(len(shape)):
                for view in (lambda t: t, lambda t: t.transpose(0, -1), lambda t: t[..., ::2]):
                    results = []
                    for lib in (dt, torch):
                        xt = view(lib.from_numpy(x.copy())).requires_grad_(True)
                        out = lib.nn.functional.log_softmax(xt, dim=dim)
                        out.backward(lib.from_numpy(g.reshape(-1)[: out.numel()].reshape(tuple(out.shape))))
                        results.append((out.detach().numpy(), xt.grad.numpy()))
                    for ours, theirs in zip(*results):
                        np.testing.assert_array_equal(ours, theirs, err_msg=f"{shape} dim {dim}")
    finally:
        dt.set_num_threads(before[0])
        torch.set_num_threads(before[1])


def test_float32_log_softmax_of_a_row_with_nan_or_inf_is_nan():
    # PyTorch's: the row's sum is NaN (exp(inf - inf), or a NaN element), so every element is
    # (SLEEF's logf of a NaN sum once gave 88.4 and left finite or -inf elements)
    rows = dt.tensor([[1.0, np.nan, 2.0], [1.0, np.inf, 2.0], [np.inf, -np.inf, 0.0]])
    for x in (rows, rows.repeat(1, 7), rows.t().contiguous().t()):  # short and 16-lane rows
        assert np.isnan(dt.log_softmax(x, -1).numpy()).all()
        assert np.isnan(dt.softmax(x, -1).numpy()).all()
