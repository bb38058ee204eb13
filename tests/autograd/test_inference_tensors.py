"""``inference_mode()`` makes inference tensors, and outside it they are refused as PyTorch
refuses them: no in-place update (raised after the write, as PyTorch's kernels do), no
``requires_grad``, never saved for backward, no version counter."""

from __future__ import annotations

import pickle

import pytest

import disttorch as dt

INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
    "for more details."
)
SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)
REQUIRES_GRAD = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
VERSION = "Inference tensors do not track version counter."


def _outcome(fn) -> object:
    try:
        return fn()
    except RuntimeError as e:
        return ("raised", str(e))


def _inside(torch) -> list:
    """What is (and is not) an inference tensor, and what works, inside inference mode."""
    a = torch.ones(2, 3)
    w = torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        x = torch.ones(2, 3)
        got = [
            torch.is_inference_mode_enabled(),
            torch.is_grad_enabled(),
            x.is_inference(),
            (a * 2).is_inference(),  # an op's output
            a.view(6).is_inference(),  # a view of a normal tensor stays normal
            a[0].is_inference(),
            x.detach().is_inference(),
            x.view(6).is_inference(),
            _outcome(lambda: a.add_(1).is_inference()),  # a normal tensor updated: still normal
            a._version,
            _outcome(lambda: x.add_(1).sum().item()),  # allowed inside
            _outcome(lambda: x._version),
            ((w * 2).requires_grad, (w * 2).is_inference()),
            torch.ones(2, requires_grad=True).requires_grad,
        ]
        with torch.inference_mode(False):
            got += [
                torch.is_inference_mode_enabled(),
                torch.is_grad_enabled(),
                torch.ones(1).is_inference(),
                (x * 2).is_inference(),
                _outcome(lambda: x.add_(1)),
            ]
        with torch.no_grad():
            got.append(torch.is_inference_mode_enabled())
    got.append(torch.is_inference_mode_enabled())
    return got


def _outside(torch) -> list:
    """What an inference tensor refuses, and allows, once inference mode is left."""
    torch.manual_seed(0)
    a = torch.ones(2, 3)
    with torch.inference_mode():
        x = torch.ones(2, 3)
        xr = torch.ones(3, requires_grad=True)
        v = a.view(6)
        bn = torch.nn.BatchNorm1d(3)
    w = torch.ones(3, requires_grad=True)
    return [
        torch.is_inference(x),
        (x.grad_fn, x.requires_grad, x.is_leaf),
        (xr.requires_grad, xr.is_inference()),
        _outcome(lambda: x.add_(1)),
        x.sum().item(),  # PyTorch writes, then refuses
        _outcome(lambda: x.__setitem__(0, 5.0)),
        _outcome(lambda: x.zero_()),
        _outcome(lambda: torch.add(a, a, out=x)),
        _outcome(lambda: x.copy_(a * 3)),
        _outcome(lambda: x.view(6).add_(1)),
        _outcome(lambda: x.fill_(7)),
        _outcome(lambda: x.add_(w)),
        x.sum().item(),
        _outcome(lambda: x._version),
        [x.view(6).is_inference(), x.detach().is_inference(), x.data.is_inference()],
        [(x * 2).is_inference(), x.clone().is_inference(), x.double().is_inference()],
        _outcome(lambda: (x * w).sum().item()),  # Mul saves x for w's gradient
        _outcome(lambda: (x @ torch.ones(3, 2, requires_grad=True)).sum().item()),
        _outcome(lambda: torch.nn.Linear(3, 2)(x).shape),
        _outcome(lambda: (xr * w).sum().item()),
        (x + w).grad_fn.name(),  # Add saves nothing
        torch.exp(x + w).grad_fn.name(),
        _outcome(lambda: x.requires_grad_()),
        x.requires_grad_(False).requires_grad,
        _outcome(lambda: setattr(x, "requires_grad", True)),
        _outcome(lambda: torch.nn.Parameter(x)),
        torch.nn.Parameter(x, requires_grad=False).is_inference(),
        v.add_(1).sum().item(),  # a normal view made inside: writable outside
        bn.running_mean.is_inference(),
        _outcome(lambda: bn(torch.randn(4, 3)).shape),  # training updates its inference buffers
        pickle.loads(pickle.dumps(x)).is_inference(),
        torch.stack([x, a]).is_inference(),
    ]


def _decorated(torch) -> list:
    @torch.inference_mode()
    def called():
        return torch.ones(1).is_inference(), torch.is_inference_mode_enabled()

    @torch.inference_mode
    def bare():
        return torch.ones(1).is_inference()

    @torch.inference_mode(False)
    def off():
        return torch.ones(1).is_inference(), torch.is_inference_mode_enabled(), torch.is_grad_enabled()

    with torch.inference_mode():
        inner = off()
    return [called(), bare(), inner, torch.is_inference_mode_enabled()]


def test_inference_mode_makes_inference_tensors():
    assert _inside(dt) == [
        True,
        False,
        True,
        True,
        False,
        False,
        True,
        True,
        False,
        1,
        12.0,
        ("raised", VERSION),
        (False, True),
        True,
        False,
        True,
        False,
        False,
        ("raised", INPLACE),
        True,
        False,
    ]


def test_inference_tensors_refused_outside():
    got = _outside(dt)
    assert got[0] is True and got[1] == (None, False, True) and got[2] == (True, True)
    assert got[3] == ("raised", INPLACE) and got[4] == 12.0
    assert all(g == ("raised", INPLACE) for g in got[5:12])
    assert got[13] == ("raised", VERSION)
    assert got[14] == [True, True, True] and got[15] == [False, False, False]
    assert got[16:20] == [("raised", SAVED)] * 4
    assert got[20:22] == ["AddBackward0", "ExpBackward0"]
    assert got[22] == ("raised", REQUIRES_GRAD) and got[23] is False
    assert got[24] == got[25] == ("raised", REQUIRES_GRAD) and got[26] is True
    assert got[27] == 12.0 and got[28] is True and got[29] == ("raised", INPLACE)
    assert got[30:] == [False, False]


def test_inference_mode_decorates_and_nests():
    assert _decorated(dt) == [(True, True), True, (False, False, True), False]


def _square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.save_for_forward(a)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    return Square


def test_user_function_cannot_save_an_inference_tensor():
    with dt.inference_mode():
        x = dt.ones(2)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        _square(dt).apply(x, dt.ones(2, requires_grad=True))


@pytest.mark.parity
def test_user_function_saves_inference_tensors_where_nothing_is_recorded(torch):
    """A custom Function called in inference mode (a model's test loop) or on inference tensors
    under no_grad records no node, so what its forward saves is not checked, as in PyTorch."""
    for lib in (dt, torch):
        square = _square(lib)
        w = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            x = lib.full((2,), 3.0)
            assert square.apply(x, w).tolist() == [3.0, 3.0]
        with lib.no_grad():
            assert square.apply(x, w).tolist() == [3.0, 3.0]


@pytest.mark.parity
def test_same_as_pytorch_inside(torch):
    assert _inside(dt) == _inside(torch)


@pytest.mark.parity
def test_same_as_pytorch_outside(torch):
    assert _outside(dt) == _outside(torch)


@pytest.mark.parity
def test_same_decorators_as_pytorch(torch):
    assert _decorated(dt) == _decorated(torch)


def _load_into_inference_params(torch) -> str:
    with torch.inference_mode():
        lin = torch.nn.Linear(2, 2)
    try:
        lin.load_state_dict(torch.nn.Linear(2, 2).state_dict())
    except RuntimeError as e:
        return str(e)
    return "loaded"


def test_load_state_dict_reports_the_refused_copy():
    w, b = dt.Size([2, 2]), dt.Size([2])
    assert _load_into_inference_params(dt) == (
        "Error(s) in loading state_dict for Linear:\n\t"
        f'While copying the parameter named "weight", whose dimensions in the model are {w} '
        f"and whose dimensions in the checkpoint are {w}, an exception occurred : ({INPLACE!r},).\n\t"
        f'While copying the parameter named "bias", whose dimensions in the model are {b} '
        f"and whose dimensions in the checkpoint are {b}, an exception occurred : ({INPLACE!r},)."
    )


@pytest.mark.parity
def test_load_state_dict_error_as_pytorch(torch):
    ours = _load_into_inference_params(dt).replace(repr(dt.Size([2])).split("(")[0], "torch.Size")
    assert ours == _load_into_inference_params(torch)
