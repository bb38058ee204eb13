"""torch.__future__'s switches for module conversions and load_state_dict: new Parameter
objects (overwrite) or values swapped into the existing ones (swap, via
torch.utils.swap_tensors and Tensor.module_load); off by default."""

import numpy as np
import pytest

import disttorch as dt
from disttorch import nn


@pytest.fixture
def future():
    yield dt.__future__
    dt.__future__.set_overwrite_module_params_on_conversion(False)
    dt.__future__.set_swap_module_params_on_conversion(False)


def test_switches_default_off_and_overwrite_gives_new_parameters(future):
    assert not future.get_overwrite_module_params_on_conversion()
    assert not future.get_swap_module_params_on_conversion()
    m = nn.Linear(2, 2)
    w = m.weight
    m(dt.ones(1, 2)).sum().backward()
    future.set_overwrite_module_params_on_conversion(True)
    m.double()
    assert m.weight is not w and type(m.weight) is nn.Parameter and m.weight.requires_grad
    assert m.weight.dtype == dt.float64 and w.dtype == dt.float32
    assert m.weight.grad.dtype == dt.float64


def test_swap_keeps_parameter_and_gradient_objects(future):
    future.set_swap_module_params_on_conversion(True)
    m = nn.Linear(2, 2)
    opt = dt.optim.SGD(m.parameters(), lr=0.1)
    w = m.weight
    m(dt.ones(1, 2)).sum().backward()
    g = w.grad
    m.double()
    assert m.weight is w and w.dtype == dt.float64 and w.grad is g and g.dtype == dt.float64
    opt.step()  # the optimizer still holds the module's parameter
    np.testing.assert_allclose(m.weight.detach().numpy(), w.detach().numpy())
    state = {"weight": dt.ones(2, 2, dtype=dt.float64), "bias": dt.zeros(2, dtype=dt.float64)}
    m.load_state_dict(state)
    assert m.weight is w and type(w) is nn.Parameter and w.requires_grad
    np.testing.assert_array_equal(w.detach().numpy(), np.ones((2, 2)))


def test_module_load_and_its_torch_function_override(future):
    assert dt.ones(2).module_load(dt.zeros(2)).tolist() == [0.0, 0.0]
    src = dt.zeros(2)
    assert dt.ones(2).module_load(src, assign=True) is not src

    class Scaled(dt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is dt.Tensor.module_load:
                return args[1].detach() * 10
            return NotImplemented

    future.set_swap_module_params_on_conversion(True)
    m = nn.Module()
    m.register_buffer("scale", dt.zeros(2).as_subclass(Scaled))
    kept = m.scale
    m.load_state_dict({"scale": dt.ones(2)})
    assert m.scale is kept and kept.tolist() == [10.0, 10.0]

    class Same(dt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is dt.Tensor.module_load:
                return args[0]
            return super().__torch_function__(func, types, args, kwargs)

    m.register_buffer("scale", dt.zeros(2).as_subclass(Same))
    with pytest.raises(RuntimeError, match="module_load returned one of self or other"):
        m.load_state_dict({"scale": dt.ones(2)})


@pytest.mark.parity
def test_conversions_match_pytorch(torch, future):
    def run(lib):
        out = []
        lib.__future__.set_overwrite_module_params_on_conversion(True)
        m = lib.nn.Linear(2, 2)
        w = m.weight
        m.double()
        out.append((m.weight is w, str(m.weight.dtype)[-7:], str(w.dtype)[-7:]))
        lib.__future__.set_overwrite_module_params_on_conversion(False)
        lib.__future__.set_swap_module_params_on_conversion(True)
        try:
            m = lib.nn.Linear(2, 2)
            w = m.weight
            m(lib.ones(1, 2)).sum().backward()
            g = w.grad
            m.double()
            out.append((m.weight is w, w.grad is g, str(w.grad.dtype)[-7:]))
            m.load_state_dict({"weight": lib.ones(2, 2), "bias": lib.zeros(2)})
            out.append((m.weight is w, str(w.dtype)[-7:], w.requires_grad, w.tolist()))
        finally:
            lib.__future__.set_swap_module_params_on_conversion(False)
        return out

    assert run(dt) == run(torch)
