"""Activation-checkpoint wrappers (``torch.distributed.algorithms._checkpoint.checkpoint_wrapper``):
the wrapped model computes the plain model's values and gradients, recomputes the wrapped
modules in backward, saves and loads plain state dicts, and prints and names as PyTorch's."""

from __future__ import annotations

import pytest

import disttorch as dt
from disttorch import nn
from disttorch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    CheckpointWrapper,
    apply_activation_checkpointing,
    checkpoint_wrapper,
    offload_wrapper,
)
from disttorch.distributed.fsdp.wrap import ModuleWrapPolicy


def _model(lib):
    lib.manual_seed(0)
    n = lib.nn
    return n.Sequential(
        n.Linear(2, 3), n.Tanh(), n.Sequential(n.Linear(3, 3), n.Dropout(0.3), n.Linear(3, 1))
    ).double()


class _Counting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer, self.calls = nn.Linear(3, 3).double(), 0

    def forward(self, x, scale=1.0):
        self.calls += 1
        return self.layer(x).tanh() * scale


@pytest.mark.parametrize("impl", list(CheckpointImpl))
def test_a_wrapped_module_recomputes_in_backward_with_the_plain_gradients(impl):
    inner = _Counting()
    wrapped = checkpoint_wrapper(inner, checkpoint_impl=impl)
    x = dt.randn(4, 3, dtype=dt.float64, requires_grad=True)
    wrapped(x, scale=2.0).sum().backward()  # keywords too: the reentrant variant takes them packed
    assert inner.calls == 2  # forward, and again in backward
    got = (x.grad.clone(), inner.layer.weight.grad.clone())
    x.grad = inner.layer.weight.grad = None
    inner(x, scale=2.0).sum().backward()
    assert dt.equal(got[0], x.grad) and dt.equal(got[1], inner.layer.weight.grad)
    assert wrapped.checkpoint_impl is impl and wrapped.calls == 3  # (read through to the module)


def test_apply_wraps_the_chosen_submodules_in_place_and_state_dicts_stay_plain():
    model = _model(dt)
    plain = _model(dt)
    apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, nn.Linear))
    assert [type(m).__name__ for m in (model[0], model[2][0], model[2][2])] == ["CheckpointWrapper"] * 3
    assert list(model.state_dict()) == list(plain.state_dict())
    assert next(model[0].named_parameters())[0] == "weight"
    assert model[0].out_features == 3  # attributes read through
    model.load_state_dict(plain.state_dict())
    plain.load_state_dict(model.state_dict())
    x = dt.randn(5, 2, dtype=dt.float64)
    model.eval(), plain.eval()
    assert dt.equal(model(x), plain(x))


def test_an_auto_wrap_policy_picks_the_modules_and_never_the_root():
    model = _model(dt)
    apply_activation_checkpointing(model, auto_wrap_policy=ModuleWrapPolicy({nn.Sequential}))
    assert isinstance(model, nn.Sequential) and isinstance(model[2], CheckpointWrapper)
    assert isinstance(model[2][0], nn.Linear)  # items read through the wrapper
    with pytest.raises(ValueError, match="callable"):
        apply_activation_checkpointing(model, auto_wrap_policy=3)


def test_offload_wrapper_runs_the_module():
    layer = nn.Linear(2, 2).double()
    x = dt.randn(3, 2, dtype=dt.float64, requires_grad=True)
    wrapped = offload_wrapper(layer)
    assert dt.equal(wrapped(x), layer(x)) and list(wrapped.state_dict()) == ["weight", "bias"]


def _facts(lib):
    from importlib import import_module

    cw = import_module(lib.__name__ + ".distributed.algorithms._checkpoint.checkpoint_wrapper")
    model = _model(lib)
    cw.apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, lib.nn.Linear))
    x = lib.ones(4, 2, dtype=lib.float64, requires_grad=True)
    lib.manual_seed(1)
    y = model(x).sum()
    y.backward()
    return [
        repr(model),
        list(model.state_dict()),
        [n for n, _ in model.named_parameters()],
        [n for n, _ in model.named_modules()],
        round(y.item(), 10),
        [round(v, 10) for v in x.grad.flatten().tolist()],
    ]


@pytest.mark.parity
def test_wrapped_models_print_name_and_compute_as_pytorchs(torch):
    assert _facts(dt) == _facts(torch)
