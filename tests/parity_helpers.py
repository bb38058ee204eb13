"""Helpers of the parity tests (``@pytest.mark.parity``): run one case in disttorch and in the
installed PyTorch and compare values, dtypes, shapes and gradients.

Importable without PyTorch: each helper asks for it only when called (the test is then skipped
when it is missing). Test files take the real PyTorch from the ``torch`` fixture of
``conftest.py`` and name disttorch ``dt``.
"""

import zlib

import numpy as np
import pytest

import disttorch as dt

PARITY_RNG = np.random.default_rng(4)
IDX = np.array([[0, 2, 1], [2, 2, 0]])
MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
INTS = np.random.default_rng(5).integers(-3, 4, size=(3, 4))  # input of the no-grad cases


def _torch():
    return pytest.importorskip("torch")


def name_recorder(lib=dt):
    """A ``TorchFunctionMode`` of ``lib`` (disttorch or PyTorch) that lists the names of the
    functions called inside it (``.names``) and runs them."""
    base = (
        dt.overrides.TorchFunctionMode
        if lib is dt
        else __import__("torch.overrides").overrides.TorchFunctionMode
    )

    class Recorder(base):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__)
            return func(*args, **(kwargs or {}))

    return Recorder()


def pos(shape) -> np.ndarray:
    """Random float64 values in [0.3, 2): the domain of log, sqrt, ..."""
    return PARITY_RNG.uniform(0.3, 2.0, shape)


def any_(shape) -> np.ndarray:
    """Random float64 values in [-2, 2)."""
    return PARITY_RNG.uniform(-2.0, 2.0, shape)


def with_zeros(shape) -> np.ndarray:
    """Standard-normal float64 values with about 30% exact zeros (cumprod's hard case)."""
    x = PARITY_RNG.normal(size=shape)
    x[PARITY_RNG.random(shape) < 0.3] = 0.0
    return x


def _values_and_grads(lib, fn, arrays, grad_out_seed):
    ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    g = np.random.default_rng(grad_out_seed).normal(size=tuple(out.shape))
    out.backward(lib.tensor(g, dtype=out.dtype))
    grads = [t.grad.detach().numpy() if t.grad is not None else None for t in ts]
    return out.detach().numpy(), grads


def assert_values_and_gradients_match(fn, arrays, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """``fn(lib, *float64 leaves)`` agrees in dtype, value and every input's gradient (random
    upstream gradient) between disttorch and PyTorch; gradients within ``10 * rtol``."""
    ours, our_grads = _values_and_grads(dt, fn, arrays, 7)
    theirs, their_grads = _values_and_grads(_torch(), fn, arrays, 7)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    for i, (g1, g2) in enumerate(zip(our_grads, their_grads)):
        assert (g1 is None) == (g2 is None), f"input {i}"
        if g1 is not None:
            np.testing.assert_allclose(g1, g2, rtol=10 * rtol, atol=atol, err_msg=f"grad of input {i}")


def assert_no_grad_op_matches(fn, a: np.ndarray) -> None:
    """``fn(lib, tensor(a))`` gives the same values and dtypes (one or several outputs)."""
    torch = _torch()
    with np.errstate(all="ignore"):
        ours = _as_tuple(fn(dt, dt.tensor(a)))
    theirs = _as_tuple(fn(torch, torch.tensor(a)))
    for o, t in zip(ours, theirs):
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (o.dtype, t.dtype)
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def assert_case_matches(name: str, fn, shapes) -> None:
    """``fn(lib, *leaves of the given shapes)``: same shape, dtype, values and gradients."""
    torch = _torch()
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # the same inputs in every run
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [dt.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_d, out_t = fn(dt, *ours), fn(torch, *theirs)
    assert tuple(out_d.shape) == tuple(out_t.shape)
    assert str(out_d.dtype).split(".")[-1] == str(out_t.dtype).split(".")[-1]
    np.testing.assert_allclose(out_d.detach().numpy(), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    upstream = rng.standard_normal(tuple(out_t.shape))
    out_d.backward(dt.tensor(upstream))
    out_t.backward(torch.tensor(upstream))
    for i, (d, t) in enumerate(zip(ours, theirs)):
        if t.grad is None:
            assert d.grad is None or not d.grad.numpy().any(), f"input {i}"
        else:
            np.testing.assert_allclose(
                d.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"gradient of input {i}"
            )


def setitem(t, index, value):
    """``t[index] = value`` as an expression; returns ``t``."""
    t[index] = value
    return t


def copy_weights(ours, theirs) -> None:
    """Load a PyTorch module's state into the disttorch module ``ours``."""
    ours.load_state_dict({k: dt.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})


def run_both(ours, theirs, x: np.ndarray, steps: int = 1) -> None:
    """Forward/backward ``steps`` times with the same input and a fixed output gradient;
    compare outputs, input gradients and parameter gradients."""
    torch = _torch()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        xa = dt.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        ya, yt = ours(xa), theirs(xt)
        ya, yt = (ya[0], yt[0]) if isinstance(ya, tuple) else (ya, yt)
        np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
        g = rng.standard_normal(yt.shape).astype(x.dtype)
        ya.backward(dt.tensor(g))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    theirs_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), theirs_params[name].grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=name
        )


def randn(*shape) -> np.ndarray:
    """Standard-normal float32 values, the same on every call."""
    return np.random.default_rng(1).standard_normal(shape).astype(np.float32)


def both(shape, seed=0, low=None, dtype=np.float64):
    """The same random values as a disttorch leaf and as a PyTorch leaf."""
    torch = _torch()
    rng = np.random.default_rng(seed)
    arr = rng.uniform(low, 1.0, shape) if low is not None else rng.normal(size=shape)
    arr = arr.astype(dtype)
    return dt.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


def check(d_out, t_out, d_inputs, t_inputs, rtol=1e-6, atol=1e-8) -> None:
    """Outputs agree, and after one backward with the same random gradient, so do the inputs'."""
    torch = _torch()
    np.testing.assert_allclose(d_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol)
    rng = np.random.default_rng(42)
    g = rng.normal(size=tuple(t_out.shape)).astype(t_out.detach().numpy().dtype)
    d_out.backward(dt.tensor(g))
    t_out.backward(torch.tensor(g))
    for d, t in zip(d_inputs, t_inputs):
        if t.grad is None:
            assert d.grad is None
            continue
        np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


def raised(calls: list, errors: tuple = (RuntimeError,)) -> list:
    """``(class name, message)`` of the error each call raises (each must raise one of
    ``errors``): run on both libraries to compare their words."""
    seen = []
    for call in calls:
        with pytest.raises(errors) as e:
            call()
        seen.append((type(e.value).__name__, str(e.value)))
    return seen
