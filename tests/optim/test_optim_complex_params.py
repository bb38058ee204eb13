"""Optimisers on complex parameters update real and imaginary parts apart (PyTorch's
``view_as_real``), keep their state complex as PyTorch does, and give PyTorch's values."""

import numpy as np
import pytest

import disttorch as dt

CASES = [
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("Adam", dict(lr=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("Adagrad", dict(lr=0.1)),
    ("Adadelta", {}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("Rprop", {}),
    ("ASGD", {}),
]


def _start():
    rng = np.random.default_rng(0)
    return rng.standard_normal(3) + 1j * rng.standard_normal(3)


def _run(lib, name, kw, steps=3):
    p = lib.tensor(_start(), requires_grad=True)
    opt = getattr(lib.optim, name)([p], **kw)
    for _ in range(steps):
        opt.zero_grad()
        ((p * p).real.sum() + p.abs().sum()).backward()
        opt.step()
    return p, opt


@pytest.mark.parametrize("name, kw", CASES, ids=[c[0] for c in CASES])
def test_state_stays_complex(name, kw):
    p, opt = _run(dt, name, kw)
    assert p.dtype == dt.complex128
    for key, value in opt.state_dict()["state"][0].items():
        if isinstance(value, dt.Tensor) and value.dim():
            assert value.dtype == dt.complex128 and value.shape == p.shape, key


def test_adam_moves_real_and_imaginary_parts_apart():
    p = dt.tensor([1 + 1j], requires_grad=True)
    opt = dt.optim.Adam([p], lr=0.1)
    (p.real * 3 - p.imag).sum().backward()  # gradient 3 - 1j: signs (+, -)
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.9 + 1.1j], rtol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("name, kw", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(name, kw):
    torch = pytest.importorskip("torch")
    ours, _ = _run(dt, name, kw)
    theirs, _ = _run(torch, name, kw)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10)
