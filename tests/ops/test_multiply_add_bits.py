"""``add``/``sub`` with ``alpha``, ``addcmul``, ``addcdiv`` (and their in-place forms) and
the optimizer steps built on them give PyTorch's CPU bits: its kernels fuse ``a + alpha * b``
and ``a + (value * t1) * t2`` into one multiply-add, and compute ``a + (value * t1) / t2``
unfused. Both the compiled and the NumPy forms are checked. (The steps that take a square
root need MKL's, as PyTorch's: without the ``mkl`` wheel they are skipped.)"""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck
from disttorch.kernels.fma import fma
from disttorch.kernels.vml import mkl_runtime

SIZES = (1, 7, 33, 1000)


@pytest.fixture(params=["1", "0"], ids=["compiled", "numpy"])
def jit(request, monkeypatch):
    monkeypatch.setenv("DISTTORCH_JIT", request.param)


def _ops(lib, x, y, z):
    """Each op on fresh copies of x, y, z (z > 0)."""
    a, b, c = (lib.from_numpy(v.copy()) for v in (x, y, z))
    return [
        a.add(b, alpha=0.3),
        a.sub(b, alpha=0.3),
        lib.addcmul(a, b, c, value=0.3),
        lib.addcdiv(a, b, c, value=-0.3),
        a.clone().add_(b, alpha=-0.01),
        a.clone().sub_(b, alpha=0.7),
        a.clone().addcmul_(b, c, value=1e-3),
        a.clone().addcdiv_(b, c, value=-1e-3),
        lib._foreach_add([a], [b], alpha=0.3)[0],
        lib._foreach_addcmul([a], [b], [c], value=0.3)[0],
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_bits_as_pytorch(torch, jit, dtype):
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    for n in SIZES:
        x, y, z = (rng.standard_normal(n).astype(dtype) for _ in range(3))
        z = np.abs(z) + dtype(0.1)
        for got, want in zip(_ops(dt, x, y, z), _ops(torch, x, y, z)):
            assert np.array_equal(got.numpy(), want.numpy())


def test_multiply_add_rounds_once(jit):
    """Without PyTorch: against float64 arithmetic (the float32 product is exact there)."""
    x, y = np.float32([1.0, 3.0]), np.float32([1 + 2**-23, 1 - 2**-23])
    want = (np.float64(0.1) * 0 + np.float64(np.float32(0.3)) * y + x).astype(np.float32)
    assert np.array_equal(dt.from_numpy(x).add(dt.from_numpy(y), alpha=0.3).numpy(), want)
    assert np.array_equal(fma(np.float32(0.3), y, x), want)
    assert np.array_equal(fma(y, x, 1.0), (y.astype(np.float64) * x + 1).astype(np.float32))


def test_gradients():
    rng = np.random.default_rng(1)
    a, b, c = (dt.tensor(rng.standard_normal((2, 3)), requires_grad=True) for _ in range(3))
    row = dt.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda a, b, r: (a.sub(b, alpha=0.3), a.add(r, alpha=-1.7)), (a, b, row))
    assert gradcheck(lambda a, b, c, r: dt.addcmul(a, b, c, value=0.5) + dt.addcmul(r, b, c), (a, b, c, row))
    assert gradcheck(lambda a, b, c: dt.addcdiv(a, b, c.abs() + 1, value=0.5), (a, b, c))
    assert a.add(b, alpha=2).grad_fn.name() == "AddBackward0"
    assert dt.addcmul(a, b, c).grad_fn.name() == "AddcmulBackward0"


STEPS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=1e-2)),
    ("Adam", dict(lr=1e-3, amsgrad=True, weight_decay=1e-2)),
    ("AdamW", dict(lr=1e-3, weight_decay=1e-2)),
    ("RMSprop", dict(lr=1e-2)),
    ("RMSprop", dict(lr=1e-2, centered=True, momentum=0.9, weight_decay=1e-2)),
    ("Adagrad", dict(lr=1e-2, weight_decay=1e-2, lr_decay=1e-3)),
]


@pytest.mark.parametrize("name, kwargs", STEPS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_optimizer_steps_same_bits(torch, jit, name, kwargs, dtype):
    """20 steps on random gradients, parameters of sizes 1, 7, 33, 1000 and (64, 128)."""
    if name != "SGD" and mkl_runtime() is None:
        pytest.skip("PyTorch's square root is MKL's: needs the mkl wheel")
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    shapes = [(1,), (7,), (33,), (1000,), (64, 128)]
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(20)]
    results = []
    for lib in (torch, dt):
        params = [lib.nn.Parameter(lib.from_numpy(p.copy())) for p in init]
        opt = getattr(lib.optim, name)(params, **kwargs)
        for step in grads:
            for p, g in zip(params, step):
                p.grad = lib.from_numpy(g.copy())
            opt.step()
        results.append([p.detach().numpy() for p in params])
    for got, want in zip(results[1], results[0]):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(momentum=0.9),
        dict(momentum=0.9, nesterov=True, weight_decay=1e-2),
        dict(momentum=0.8, dampening=0.1),
    ],
)
def test_sgd_momentum_in_one_pass_gives_the_passes_bits(monkeypatch, dtype, kwargs):
    """The compiled one-pass momentum step (kernels/sgd_loops.py) against the compiled
    passes it replaces (``buf *= m`` and the multiply-adds), on contiguous and strided
    parameters (a transposed one takes the passes)."""
    from disttorch.kernels.jit import compiled
    from disttorch.optim import sgd

    if compiled(sgd._load_loops) is None:
        pytest.skip("needs numba (the fast extra)")
    rng = np.random.default_rng(2)
    init = [rng.standard_normal(s).astype(dtype) for s in ((33,), (64, 128), (128, 64))]
    grads = [[rng.standard_normal(p.shape).astype(dtype) for p in init] for _ in range(4)]
    results = []
    for one_pass in (True, False):
        if not one_pass:
            monkeypatch.setattr(sgd, "_flat", lambda *a: False)
        params = [dt.nn.Parameter(dt.from_numpy(p.copy())) for p in init[:2]]
        params.append(dt.nn.Parameter(dt.from_numpy(init[2].T.copy()).t()))  # strided
        opt = dt.optim.SGD(params, lr=0.05, **kwargs)
        for step in grads:
            for p, g in zip(params, step):
                p.grad = dt.from_numpy(g.copy())
            opt.step()
        results.append([p.detach().numpy().copy() for p in params])
    assert all(np.array_equal(a, b) for a, b in zip(*results))
