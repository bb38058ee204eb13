"""Pooling (``max_pool1d/2d``, ``avg_pool1d/2d``, adaptive pooling and their modules):
closed-form values, indices, PyTorch's output-size rules, gradients, error messages."""

import numpy as np
import pytest
from parity_helpers import randn, run_both

import disttorch as dt
import disttorch.nn.functional as F
from disttorch.autograd import gradcheck


def test_max_pool2d_values_indices_and_gradient():
    x = dt.arange(16.0).reshape(1, 1, 4, 4).requires_grad_()
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(out.detach().numpy(), [[[[5, 7], [13, 15]]]])
    np.testing.assert_array_equal(idx.numpy(), [[[[5, 7], [13, 15]]]])
    assert idx.dtype == dt.int64
    out.sum().backward()
    expected = np.zeros((4, 4))
    expected[[1, 1, 3, 3], [1, 3, 1, 3]] = 1
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], expected)


def test_max_pool_ties_pick_the_first_element():
    _, idx = F.max_pool2d(dt.zeros(1, 1, 4, 4), 2, return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), [[[[0, 2], [8, 10]]]])


@pytest.mark.parametrize("jit", ["1", "0"])
def test_a_window_of_minus_infinity_beside_padding_picks_its_first_element_inside(monkeypatch, jit):
    """The -inf padding ties with an input of -inf, and the first maximum wins: PyTorch's
    kernel starts from the first element inside the input, which gets the index and the
    gradient (disttorch gave the padding's, a negative index, and lost the gradient)."""
    monkeypatch.setenv("DISTTORCH_JIT", jit)  # the compiled stages and the NumPy form
    x = dt.full((1, 1, 3, 3), -np.inf, requires_grad=True)
    out, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    out.sum().backward()
    np.testing.assert_array_equal(idx.numpy(), [[[[0, 1], [3, 4]]]])  # PyTorch 2.13's
    np.testing.assert_array_equal(x.grad.numpy(), [[[[1, 1, 0], [1, 1, 0], [0, 0, 0]]]])
    x = dt.full((1, 1, 4), -np.inf, requires_grad=True)
    out, idx = F.max_pool1d(x, 3, 1, 1, return_indices=True)
    out.sum().backward()
    np.testing.assert_array_equal(idx.numpy(), [[[0, 0, 1, 2]]])
    np.testing.assert_array_equal(x.grad.numpy(), [[[2, 1, 1, 0]]])


@pytest.mark.parametrize("jit", ["1", "0"])
@pytest.mark.parametrize(
    "shape, kwargs",
    [
        ((2, 3, 9, 9), dict(kernel_size=3, stride=2, padding=1)),
        ((2, 3, 8, 10), dict(kernel_size=2)),
        ((2, 3, 11), dict(kernel_size=3, stride=1, padding=1)),
        ((2, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 2))),
        ((2, 3, 10, 9), dict(kernel_size=(2, 3), dilation=2, ceil_mode=True)),
    ],
)
def test_max_pool_indices_and_gradient_of_nan_and_minus_infinity_match_pytorch(
    monkeypatch, torch, jit, shape, kwargs
):
    """PyTorch's kernel takes an element that is greater than the maximum so far, or NaN:
    a window's last NaN gets the index and the gradient."""
    monkeypatch.setenv("DISTTORCH_JIT", jit)  # the compiled stages and the NumPy form
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, flat.size // 8, replace=False)] = np.nan
    flat[rng.choice(flat.size, flat.size // 10, replace=False)] = -np.inf
    results = []
    for lib in (dt, torch):
        pool = getattr(lib.nn.functional, f"max_pool{len(shape) - 2}d")
        a = lib.tensor(x, requires_grad=True)
        out, idx = pool(a, return_indices=True, **kwargs)
        out.sum().backward()
        results.append([out.detach().numpy(), idx.numpy(), a.grad.numpy()])
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)  # (NaN equals NaN here)


@pytest.mark.parametrize("shape", [(2, 2, 6, 9), (2, 2, 7, 10)])
def test_max_pool_gradcheck_tiled_and_with_leftover_rows(shape):
    """Windows that tile the input exactly (every element written by backward) and windows
    that leave the last row and column out (those must get zero gradient)."""
    x = dt.randn(*shape, dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda a: F.max_pool2d(a, (2, 3)), (x,))
    F.max_pool2d(x, (2, 3)).sum().backward()
    assert x.grad.sum().item() == 2 * 2 * (shape[2] // 2) * (shape[3] // 3)
    if shape[2] % 2:
        assert not x.grad.numpy()[:, :, -1, :].any() and not x.grad.numpy()[:, :, :, -1].any()


def test_overlapping_max_pool_accumulates_gradient():
    x = dt.tensor([[[0.0, 5.0, 1.0, 2.0]]], requires_grad=True)
    F.max_pool1d(x, 2, stride=1).sum().backward()  # windows (0,5) (5,1) (1,2)
    np.testing.assert_array_equal(x.grad.numpy(), [[[0, 2, 0, 1]]])


@pytest.mark.parametrize(
    "kw,shape",
    [
        (dict(kernel_size=2, ceil_mode=True), (1, 2, 3, 3)),
        (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), (1, 2, 3, 3)),
        (dict(kernel_size=3, stride=2, padding=1), (1, 2, 3, 3)),
        (dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1)), (1, 2, 3, 2)),
    ],
)
def test_pool_output_sizes(kw, shape):
    x = dt.randn(1, 2, 5, 5)
    assert F.max_pool2d(x, **kw).shape == shape
    if "dilation" not in kw:
        assert F.avg_pool2d(x, **kw).shape == shape


@pytest.mark.parametrize(
    "fn,kw",
    [
        (F.max_pool2d, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
        (F.max_pool2d, dict(kernel_size=(2, 3), stride=1, dilation=(1, 2))),
        (F.max_pool2d, dict(kernel_size=(1, 3), stride=(1, 2))),
        (F.max_pool2d, dict(kernel_size=2)),
        (F.avg_pool2d, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
        (F.avg_pool2d, dict(kernel_size=2, padding=1, count_include_pad=False)),
        (F.avg_pool2d, dict(kernel_size=2, divisor_override=3)),
        (F.max_pool1d, dict(kernel_size=3, stride=2, padding=1)),
        (F.avg_pool1d, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ],
)
def test_pool_gradcheck(fn, kw):
    rng = np.random.default_rng(1)
    shape = (2, 2, 5, 6) if fn in (F.max_pool2d, F.avg_pool2d) else (2, 2, 7)
    x = dt.tensor(rng.permutation(np.prod(shape)).reshape(shape) / 7.0, requires_grad=True)
    assert gradcheck(lambda a: fn(a, **kw), (x,))


def test_avg_pool_divisors_follow_pytorch():
    ones = dt.ones(1, 1, 5, 5)
    out = F.avg_pool2d(ones, 3, stride=2, padding=1, ceil_mode=True).numpy()[0, 0]
    np.testing.assert_allclose(out, [[4 / 9, 2 / 3, 4 / 9], [2 / 3, 1, 2 / 3], [4 / 9, 2 / 3, 4 / 9]])
    out = F.avg_pool2d(ones, 2, stride=2, padding=1, ceil_mode=True).numpy()[0, 0]
    np.testing.assert_allclose(out, [[0.25, 0.5, 0.5], [0.5, 1, 1], [0.5, 1, 1]])
    out = F.avg_pool2d(ones, 3, stride=2, padding=1, count_include_pad=False).numpy()
    np.testing.assert_allclose(out, np.ones((1, 1, 3, 3)))


def test_adaptive_avg_pool_windows_and_gradcheck():
    x = dt.arange(7.0).reshape(1, 1, 7)
    np.testing.assert_allclose(
        F.adaptive_avg_pool1d(x, 3).numpy()[0, 0],
        [np.mean([0, 1, 2]), np.mean([2, 3, 4]), np.mean([4, 5, 6])],
    )
    x2 = dt.randn(2, 3, 5, 4, dtype=dt.float64, requires_grad=True)
    assert F.adaptive_avg_pool2d(x2, 1).shape == (2, 3, 1, 1)
    np.testing.assert_allclose(
        F.adaptive_avg_pool2d(x2, 1).detach().numpy()[..., 0, 0], x2.detach().numpy().mean(axis=(2, 3))
    )
    assert F.adaptive_avg_pool2d(x2, (None, 3)).shape == (2, 3, 5, 3)
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, (3, 3)), (x2,))


def test_adaptive_max_pool_values_indices_gradcheck():
    x = dt.tensor([[[1.0, 9.0, 2.0, 3.0, 8.0]]])
    out, idx = F.adaptive_max_pool1d(x, 3, return_indices=True)  # windows [0,2) [1,4) [3,5)
    np.testing.assert_array_equal(out.numpy(), [[[9, 9, 8]]])
    np.testing.assert_array_equal(idx.numpy(), [[[1, 1, 4]]])
    rng = np.random.default_rng(2)
    x2 = dt.tensor(rng.permutation(60).reshape(1, 3, 5, 4) / 3.0, requires_grad=True)
    assert gradcheck(lambda a: F.adaptive_max_pool2d(a, (3, 3)), (x2,))


def test_unbatched_pooling():
    x = dt.randn(3, 6, 6, requires_grad=True)
    assert F.max_pool2d(x, 2).shape == (3, 3, 3)
    assert F.avg_pool2d(x, 2).shape == (3, 3, 3)
    assert F.adaptive_avg_pool2d(x, 2).shape == (3, 2, 2)
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.shape == (3, 6, 6)


@pytest.mark.parametrize(
    "call,message",
    [
        (
            lambda: F.max_pool2d(dt.randn(1, 3, 4, 4), 3, padding=2),
            "pad should be at most half of effective kernel size, but got pad=2, kernel_size=3 and dilation=1",
        ),
        (
            lambda: F.max_pool2d(dt.randn(1, 3, 1, 1), 2),
            "Given input size: (3x1x1). Calculated output size: (3x0x0). Output size is too small",
        ),
        (
            lambda: F.max_pool2d(dt.randn(2, 3), 2),
            "non-empty 3D or 4D (batch mode) tensor expected for input",
        ),
        (lambda: F.max_pool2d(dt.randn(1, 3, 5, 5), 2, stride=0), "stride should not be zero"),
        (lambda: F.adaptive_avg_pool2d(dt.randn(3), 2), "Expected 3D or 4D tensor, but got [3]"),
    ],
)
def test_pooling_errors(call, message):
    with pytest.raises(RuntimeError) as info:
        call()
    assert message in str(info.value)


def test_pool_modules_and_reprs():
    x = dt.randn(2, 3, 8, 8)
    assert dt.nn.MaxPool2d(2)(x).shape == (2, 3, 4, 4)
    out, idx = dt.nn.MaxPool2d(2, return_indices=True)(x)
    assert idx.shape == (2, 3, 4, 4)
    assert dt.nn.AvgPool2d(3, stride=1, padding=1)(x).shape == (2, 3, 8, 8)
    assert dt.nn.AdaptiveAvgPool2d((1, 1))(x).shape == (2, 3, 1, 1)
    assert dt.nn.AdaptiveMaxPool2d(3)(x).shape == (2, 3, 3, 3)
    assert dt.nn.MaxPool1d(2)(x[:, :, 0]).shape == (2, 3, 4)
    assert dt.nn.AvgPool1d(2)(x[:, :, 0]).shape == (2, 3, 4)
    assert dt.nn.AdaptiveAvgPool1d(2)(x[:, :, 0]).shape == (2, 3, 2)
    assert (
        repr(dt.nn.MaxPool2d(2))
        == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )
    assert repr(dt.nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(dt.nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"
    assert repr(dt.nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"


# ---------------------------------------------------------------------- parity with PyTorch
@pytest.mark.parity
@pytest.mark.parametrize(
    "make",
    [
        lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
        lambda nn: nn.MaxPool2d((2, 3), stride=1, dilation=(2, 1)),
        lambda nn: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        lambda nn: nn.AvgPool2d(2),
        lambda nn: nn.AdaptiveAvgPool2d((3, 2)),
        lambda nn: nn.AdaptiveMaxPool2d((3, 2)),
    ],
)
def test_pool2d_parity(torch, make):
    run_both(make(dt.nn), make(torch.nn), randn(2, 3, 7, 6))


@pytest.mark.parity
@pytest.mark.parametrize(
    "make",
    [lambda nn: nn.MaxPool1d(3, 2, 1), lambda nn: nn.AvgPool1d(3, 2, 1), lambda nn: nn.AdaptiveAvgPool1d(4)],
)
def test_pool1d_parity(torch, make):
    run_both(make(dt.nn), make(torch.nn), randn(2, 3, 9))


def _oversized_windows(lib):
    """One window larger than the padded input (ceil_mode), as EfficientNet's head pools a
    1x1 map of 2560 channels with a 2560 kernel: values, gradients and indices."""
    g = lib.Generator().manual_seed(0)
    z = lib.randn(1, 3, 2, 3, generator=g, dtype=lib.float64).requires_grad_()
    outs = [
        lib.nn.functional.avg_pool2d(z, 7, ceil_mode=True, padding=2),
        lib.nn.functional.avg_pool2d(z, 9, ceil_mode=True, padding=1, count_include_pad=False),
        lib.nn.functional.max_pool2d(z, 8, ceil_mode=True, padding=1),
    ]
    grads = lib.autograd.grad(sum(o.sum() for o in outs), z)[0]
    _, idx = lib.nn.functional.max_pool2d(z, 8, ceil_mode=True, padding=3, return_indices=True)
    big = lib.nn.AvgPool2d(2560, ceil_mode=True)(lib.ones(1, 2560, 1, 1))
    return [o.tolist() for o in outs], grads.tolist(), idx.tolist(), tuple(big.shape), float(big.sum())


def test_a_window_larger_than_the_input_pools_the_padded_input():
    outs, grads, idx, big_shape, big_sum = _oversized_windows(dt)
    assert big_shape == (1, 2560, 1, 1) and big_sum == 2560.0 and len(outs) == 3


@pytest.mark.parity
def test_oversized_windows_match_pytorch(torch):
    assert _oversized_windows(dt) == _oversized_windows(torch)


def _integer_average_pools(lib) -> list:
    F = lib.nn.functional
    x = lib.tensor([[[[-5, 0, 7], [0, 0, 1]]]])
    out = [F.avg_pool2d(x, 2, ceil_mode=True).tolist(), F.avg_pool2d(x, 2, padding=1).tolist()]
    out += [F.avg_pool1d(lib.tensor([[5, 6, 7]]), 2).tolist(), F.avg_pool2d(x, 2, divisor_override=3).dtype]
    for dtype in (lib.int32, lib.uint8):
        with pytest.raises(NotImplementedError) as e:
            F.avg_pool2d(lib.ones(1, 1, 2, 2, dtype=dtype), 2)
        out.append(str(e.value))
    return out


def test_average_pools_of_int64_divide_toward_zero():
    got = _integer_average_pools(dt)
    assert got[0] == [[[[-1, 4]]]] and got[2] == [[5]] and got[3] == dt.int64
    assert got[4] == "\"avg_pool2d\" not implemented for 'Int'"


@pytest.mark.parity
def test_integer_average_pools_match_pytorch(torch):
    ours = _integer_average_pools(dt)
    theirs = _integer_average_pools(torch)
    assert ours[:3] + ours[4:] == theirs[:3] + theirs[4:]
