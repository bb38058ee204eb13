"""The "Custom Python operators" tutorial: a ``torch.library.custom_op`` kernel sees its inputs
below autograd (``x.numpy()`` works on one that requires grad), and ``torch.library.opcheck``
runs PyTorch's four tests with PyTorch's verdicts."""

import itertools
import re

import numpy as np
import pytest

import disttorch as dt

_ids = itertools.count()


def _ops(lib):
    """The tutorial's operators and some broken ones, in a fresh namespace of ``lib``."""
    ns = f"opchecktest{next(_ids)}"
    T = lib.Tensor
    ops = {}

    @lib.library.custom_op(f"{ns}::numpy_sin", mutates_args=())
    def numpy_sin(x: T) -> T:
        return lib.from_numpy(np.sin(x.numpy()))

    numpy_sin.register_fake(lambda x: lib.empty_like(x))

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    numpy_sin.register_autograd(lambda ctx, g: g * ctx.saved_tensors[0].cos(), setup_context=setup_context)
    ops["numpy_sin"] = numpy_sin

    @lib.library.custom_op(f"{ns}::sin_out", mutates_args={"out"})
    def sin_out(x: T, out: T) -> None:
        np.sin(x.numpy(), out=out.numpy())

    ops["sin_out"] = sin_out

    @lib.library.custom_op(f"{ns}::alias", mutates_args=())
    def alias(x: T) -> T:
        return x

    ops["alias"] = alias

    @lib.library.custom_op(f"{ns}::no_fake", mutates_args=())
    def no_fake(x: T) -> T:
        return x * 2

    ops["no_fake"] = no_fake

    @lib.library.custom_op(f"{ns}::sneaky", mutates_args=())
    def sneaky(x: T) -> T:
        x.add_(1)
        return x.clone()

    sneaky.register_fake(lambda x: lib.empty_like(x))
    ops["sneaky"] = sneaky

    @lib.library.custom_op(f"{ns}::no_grad_formula", mutates_args=())
    def no_grad_formula(x: T) -> T:
        return x * 2

    no_grad_formula.register_fake(lambda x: lib.empty_like(x))
    ops["no_grad_formula"] = no_grad_formula

    @lib.library.custom_op(f"{ns}::wrong_fake", mutates_args=())
    def wrong_fake(x: T) -> T:
        return x * 2

    wrong_fake.register_fake(lambda x: lib.empty(2))
    ops["wrong_fake"] = wrong_fake
    return ops


def test_kernel_reads_an_input_that_requires_grad_as_numpy():
    op = _ops(dt)["numpy_sin"]
    x = dt.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = op(x)
    np.testing.assert_allclose(y.detach().numpy(), np.sin([0.0, 1.0, 2.0]), rtol=1e-6)
    (g,) = dt.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), np.cos([0.0, 1.0, 2.0]), rtol=1e-6)
    out = dt.empty(3)
    _ops(dt)["sin_out"](x.detach(), out)  # the mutated argument is written in place
    np.testing.assert_allclose(out.numpy(), np.sin([0.0, 1.0, 2.0]), rtol=1e-6)


def _verdicts(lib, name, *, grad=False):
    """``{test: "SUCCESS" or the first words of its error}`` for one operator."""
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=grad)
    args = (x, lib.empty(3)) if name == "sin_out" else (x,)
    results = lib.library.opcheck(_ops(lib)[name], args, raise_exception=False)
    words = {k: v if v == "SUCCESS" else " ".join(str(v).split()[:6]) for k, v in results.items()}
    return {k: re.sub(r"opchecktest\d+", "ns", v) for k, v in words.items()}


CASES = [("numpy_sin", True), ("numpy_sin", False), ("sin_out", False), ("no_fake", False), ("sneaky", False)]
CASES += [("no_grad_formula", True), ("wrong_fake", False)]


@pytest.mark.parametrize(("name", "grad"), CASES)
def test_opcheck_verdicts_match_pytorch(torch, name, grad):
    assert _verdicts(dt, name, grad=grad) == _verdicts(torch, name, grad=grad)


def test_opcheck_raises_on_the_first_failure_and_reports_all_otherwise():
    ops = _ops(dt)
    assert dt.library.opcheck(ops["numpy_sin"], (dt.randn(3, requires_grad=True),)) == {
        "test_schema": "SUCCESS",
        "test_autograd_registration": "SUCCESS",
        "test_faketensor": "SUCCESS",
        "test_aot_dispatch_dynamic": "SUCCESS",
    }
    with pytest.raises(
        Exception, match=r"opcheck\(op, \.\.\.\): test_schema failed with alias .*must not also be an input"
    ):
        dt.library.opcheck(ops["alias"], (dt.randn(3),))
    with pytest.raises(Exception, match="Argument x is not defined as mutable but was mutated"):
        dt.library.opcheck(ops["sneaky"], (dt.randn(3),))
    with pytest.raises(Exception, match=r"Shapes torch.Size\(\[3\]\)|Shapes disttorch.Size\(\[3\]\)"):
        dt.library.opcheck(ops["wrong_fake"], (dt.randn(3),))
    assert dt.library.opcheck(ops["wrong_fake"], (dt.randn(3),), test_utils="test_schema") == {
        "test_schema": "SUCCESS"
    }
    x = dt.randn(3)
    dt.library.opcheck(ops["sneaky"], (x,), raise_exception=False)
    assert x.equal(x.clone())  # the sample arguments themselves are left alone
    with pytest.raises(ValueError, match="unknown test_utils"):
        dt.library.opcheck(ops["numpy_sin"], (x,), test_utils="test_nothing")
