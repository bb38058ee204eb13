"""``nn.Parameter`` of a tensor subclass and ``load_state_dict(assign=True)``, as PyTorch
answers: a subclass whose ``detach()`` keeps its type stays of its type, flagged as a
parameter (``DTensor`` shards take this path), and an assigned ``Parameter`` is put into the
module as it is (its identity kept, its ``requires_grad`` the module's)."""

from __future__ import annotations

import pytest

import disttorch as dt


def _tagged_class(lib):
    class Tagged(lib.Tensor):
        def detach(self):
            return super().detach().as_subclass(Tagged)

    return Tagged


def _subclass_parameter(lib) -> tuple:
    Tagged = _tagged_class(lib)
    t = lib.ones(3).as_subclass(Tagged)
    p = lib.nn.Parameter(t)
    frozen = lib.nn.Parameter(t, requires_grad=False)
    m = lib.nn.Module()
    m.w = p  # a flagged subclass registers as a parameter
    return (
        type(p) is Tagged,
        isinstance(p, lib.nn.Parameter),
        p is t,
        p.requires_grad,
        frozen.requires_grad,
        [n for n, _ in m.named_parameters()],
        isinstance(t, lib.nn.Parameter),
        isinstance(lib.ones(1), lib.nn.Parameter),
    )


def _assign_load(lib) -> tuple:
    m = lib.nn.Linear(2, 1)
    m.bias.requires_grad_(False)
    w = lib.nn.Parameter(lib.zeros(1, 2), requires_grad=False)
    b = lib.zeros(1)
    m.load_state_dict({"weight": w, "bias": b}, assign=True)
    return (
        m.weight is w,
        m.weight.requires_grad,
        m.bias is b,
        type(m.bias).__name__,
        m.bias.requires_grad,
        m.bias.data_ptr() == b.data_ptr(),
    )


def test_parameter_of_subclass_keeps_its_type():
    assert _subclass_parameter(dt) == (True, True, False, True, False, ["w"], False, False)


def test_assign_load_keeps_a_parameters_identity():
    assert _assign_load(dt) == (True, True, False, "Parameter", False, True)


def test_plain_subclass_stays_itself_as_a_parameter():
    """A subclass keeps its type through ``detach()`` (``Tensor.__torch_function__``), so
    ``Parameter(t)`` is ``t``'s detached twin of the same type, flagged as a parameter and
    sharing its memory, as in PyTorch."""

    class Plain(dt.Tensor):
        pass

    t = dt.ones(2).as_subclass(Plain)
    p = dt.nn.Parameter(t)
    assert type(p) is Plain and isinstance(p, dt.nn.Parameter) and p.requires_grad
    assert p.data_ptr() == t.data_ptr()


@pytest.mark.parity
def test_parameter_identity_matches_pytorch(torch):
    assert _subclass_parameter(dt) == _subclass_parameter(torch)
    assert _assign_load(dt) == _assign_load(torch)
