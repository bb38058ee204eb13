"""``torch.library``: operators registered by name (``custom_op``, ``define``/``impl``,
``Library``) run as ``torch.ops.ns.op``; ``register_autograd``/``register_fake`` accept the
name, and each behaves as in PyTorch."""

from __future__ import annotations

import itertools

import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

_ids = itertools.count()


def _ns() -> str:
    """A fresh namespace per test: the registry is process-wide, as PyTorch's."""
    return f"libtest{next(_ids)}"


def _scale_op(lib, ns: str):
    """``ns::scale(x, k=2.0) = x * k`` with its gradient registered by name, in ``lib``."""

    @lib.library.custom_op(f"{ns}::scale", mutates_args=(), schema="(Tensor x, float k=2.0) -> Tensor")
    def scale(x, k=2.0):
        return x * k

    seen = []

    def setup(ctx, inputs, output):
        seen.append(len(inputs))
        ctx.k = inputs[1]

    lib.library.register_autograd(f"{ns}::scale", lambda ctx, g: (g * ctx.k, None), setup_context=setup)
    lib.library.register_fake(f"{ns}::scale", lambda x, k=2.0: lib.empty_like(x))
    return scale, seen


@pytest.mark.parity
def test_custom_op_by_name_runs_and_differentiates_as_pytorch(torch):
    results = []
    for lib in (dt, torch):
        ns = _ns()
        scale, seen = _scale_op(lib, ns)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = getattr(lib.ops, ns).scale(x, k=4.0)
        y.sum().backward()
        results.append(
            (
                y.tolist(),
                x.grad.tolist(),
                seen,
                scale(lib.ones(1)).tolist(),
                str(getattr(lib.ops, ns).scale.default),
            )
        )
        assert getattr(lib.ops, ns).scale.default(lib.ones(1), 3.0).tolist() == [3.0]
    d, t = results
    assert d[:4] == t[:4]
    assert d[4].split(".", 1)[1] == t[4].split(".", 1)[1] == "scale.default"


def test_custom_op_gradcheck_through_torch_ops():
    ns = _ns()
    _scale_op(dt, ns)
    x = dt.tensor([0.5, -1.5], dtype=dt.float64, requires_grad=True)
    assert gradcheck(lambda t: getattr(dt.ops, ns).scale(t, 3.0), (x,))


@pytest.mark.parity
def test_define_then_impl_and_the_errors_on_the_way(torch):
    for lib in (dt, torch):
        ns = _ns()
        lib.library.define(f"{ns}::neg", "(Tensor x) -> Tensor")
        with pytest.raises(
            NotImplementedError, match=f"Could not run '{ns}::neg' with arguments from the 'CPU' backend"
        ):
            getattr(lib.ops, ns).neg(lib.ones(2))
        lib.library.impl(f"{ns}::neg", "cpu", lambda x: -x)
        assert getattr(lib.ops, ns).neg(lib.ones(2)).tolist() == [-1.0, -1.0]
        with pytest.raises(RuntimeError, match="same name and overload name multiple times"):
            lib.library.define(f"{ns}::neg", "(Tensor x) -> Tensor")
        with pytest.raises(RuntimeError, match=f"operator {ns}::absent does not exist"):
            lib.library.register_fake(f"{ns}::absent", lambda x: x)
        with pytest.raises(AttributeError, match="has no attribute 'absent'"):
            getattr(lib.ops, ns).absent


@pytest.mark.parity
def test_library_object_defines_and_implements(torch):
    for lib in (dt, torch):
        ns = _ns()
        library = lib.library.Library(ns, "DEF")
        library.define("sq(Tensor x) -> Tensor")
        library.impl("sq", lambda x: x * x, "CPU")
        assert getattr(lib.ops, ns).sq(lib.tensor([3.0])).tolist() == [9.0]
        with pytest.raises(ValueError, match="Unsupported kind: XYZ"):
            lib.library.Library(ns, "XYZ")


@pytest.mark.parity
def test_backward_without_a_registered_formula_raises(torch):
    for lib in (dt, torch):
        ns = _ns()

        @lib.library.custom_op(f"{ns}::double", mutates_args=(), schema="(Tensor x) -> Tensor")
        def double(x):
            return x * 2

        y = double(lib.ones(2, requires_grad=True))
        assert y.requires_grad
        with pytest.raises(
            RuntimeError, match=f"backward through {ns}.double.default but no autograd formula"
        ):
            y.sum().backward()
