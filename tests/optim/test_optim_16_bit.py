"""SGD, Adam and AdamW on bfloat16/float16 parameters: each operation of PyTorch's
single-tensor step rounds to the parameter's dtype (``param.add_(grad, alpha=-lr)`` once,
not after ``lr * grad`` and again after the subtraction), bit for bit as PyTorch's CPU
kernels."""

import numpy as np
import pytest

import disttorch as dt

pytest.importorskip("ml_dtypes")

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "maximize": True}),
    ("Adam", {"lr": 1e-2}),
    ("Adam", {"lr": 1e-2, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 1e-2, "weight_decay": 0.1}),
    ("AdamW", {"lr": 3e-3, "betas": (0.8, 0.95), "eps": 1e-6}),
]


def _train(L, name: str, kw: dict, low: str, n: int) -> np.ndarray:
    g = np.random.default_rng(n)
    dl = getattr(L, low)
    p = L.nn.Parameter(L.tensor(g.standard_normal(n).astype(np.float32)).to(dl))
    opt = getattr(L.optim, name)([p], **kw)
    for _ in range(3):
        p.grad = L.tensor((0.1 * g.standard_normal(n)).astype(np.float32)).to(dl)
        opt.step()
    return p.detach().float().numpy()


def test_sgd_step_rounds_the_update_once():
    p = dt.nn.Parameter(dt.tensor([0.00089263916015625, 1.0]).bfloat16())
    p.grad = dt.tensor([0.009765625, 0.5]).bfloat16()
    want = p.detach().clone().add_(p.grad, alpha=-0.1)
    dt.optim.SGD([p], lr=0.1).step()
    assert dt.equal(p.detach(), want)
    # not the product rounded first, then the difference
    assert not dt.equal(want, p.detach() - (0.1 * p.grad))


@pytest.mark.parity
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,kw", CASES)
def test_16_bit_steps_as_pytorch(torch, name, kw, low):
    # (a float16 Adam parameter of fewer than 32 elements, all in PyTorch's scalar loop, may
    # differ by an ulp: that loop computes some of Adam's operations in float16 arithmetic)
    for n in (8, 300) if low == "bfloat16" or name == "SGD" else (64, 300):
        np.testing.assert_array_equal(_train(dt, name, kw, low, n), _train(torch, name, kw, low, n))
