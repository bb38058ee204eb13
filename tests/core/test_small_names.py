"""Small names of ``torch`` that programs and libraries reach for: the symbolic-number classes and
``sym_*`` helpers (plain numbers here), ``cond``/``while_loop`` run eagerly, the build flags, and
``Tensor.new_empty_strided``/``is_set_to``/``output_nr``/``const_data_ptr``; each as PyTorch
answers for eager code."""

from __future__ import annotations

import importlib

import pytest

import disttorch as dt


def _answers(lib) -> list:
    x = lib.ones(2)
    out = [
        lib.sym_int(3.7),
        lib.sym_int(-3.7),
        lib.sym_float(2),
        lib.sym_max(2, 3.5),
        lib.sym_min(1, 2),
        lib.sym_not(True),
        lib.sym_ite(True, 1, 2),
        lib.sym_sqrt(4),
        lib.sym_sum([1, 2, 3]),
        isinstance(3, (lib.SymInt, lib.SymFloat, lib.SymBool)),
        lib.cond(x.sum() > 0, lambda a: a + 1, lambda a: a - 1, (x,)).tolist(),
        lib.cond(0, lambda: 1, lambda: 2),
        [
            t.tolist()
            for t in lib.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (lib.tensor(0), x))
        ],
        lib.while_loop(lambda i: i < 3, lambda i: i + 1, (0,)),
        lib.while_loop(lambda i: i < 6, lambda i: [i + 1], (lib.tensor(5),))[0].item(),
        lib.compiled_with_cxx11_abi(),
    ]
    y = lib.ones(2, 3)
    w = lib.ones(3, requires_grad=True)
    out += [
        y.new_empty_strided((2, 3), (1, 2)).stride(),
        y.new_empty_strided((2,), (1,), dtype=lib.float64).dtype == lib.float64,
        [y.is_set_to(y), y.is_set_to(y.view(3, 2)), y.is_set_to(y[:]), y.is_set_to(y.clone())],
        [y.output_nr, w.unbind()[2].output_nr, (w * 2).output_nr],
        y.const_data_ptr() == y.data_ptr(),
    ]
    return out


def test_as_pytorch_answers(torch):
    assert _answers(dt) == _answers(torch)


def test_cond_refuses_a_predicate_of_several_elements():
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
        dt.cond(dt.ones(2), lambda: 1, lambda: 2)


def test_cond_is_differentiable():
    w = dt.tensor([2.0], requires_grad=True)
    dt.cond(w > 1, lambda a: (a * a).sum(), lambda a: a.sum(), (w,)).backward()
    assert w.grad.tolist() == [4.0]


def test_while_loop_checks_its_inputs_and_copies_when_it_never_runs():
    x = dt.ones(2)
    out = dt.while_loop(lambda a: a.sum() < 0, lambda a: (a * 2,), (x,))
    assert isinstance(out, tuple) and out[0].tolist() == [1.0, 1.0] and out[0] is not x
    with pytest.raises(RuntimeError, match="carried_inputs must be a tuple or list"):
        dt.while_loop(lambda a: True, lambda a: a, x)
    with pytest.raises(RuntimeError, match="tensor or int leaves"):
        dt.while_loop(lambda a: True, lambda a: a, (1.5,))
    with pytest.raises(RuntimeError, match="cond_fn must return a boolean scalar tensor or a boolean"):
        dt.while_loop(lambda a: a, lambda a: a, (x,))


def test_symbolic_classes_are_never_made():
    with pytest.raises(TypeError, match="eagerly"):
        dt.SymInt(3)
    assert dt.has_lapack and not dt.has_mkl


@pytest.mark.parametrize(
    "flag, replacement",
    [
        ("has_mps", "backends.mps.is_built"),
        ("has_cuda", "backends.cuda.is_built"),
        ("has_cudnn", "backends.cudnn.is_available"),
        ("has_mkldnn", "backends.mkldnn.is_available"),
    ],
)
def test_deprecated_build_flags_warn_and_answer_as_the_backends(flag, replacement):
    with pytest.warns(
        UserWarning, match=rf"'{flag}' is deprecated, please use 'disttorch\.{replacement}\(\)'"
    ):
        value = getattr(dt, flag)
    module, function = replacement.rsplit(".", 1)
    assert value is getattr(importlib.import_module(f"disttorch.{module}"), function)()
