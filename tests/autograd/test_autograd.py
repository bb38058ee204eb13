"""The autograd API and engine: backward/grad and their arguments, grad modes, hooks,
end-of-pass callbacks, custom Functions, higher-order gradients, gradcheck, and the
engine's guarantees (iterative, each node once, freed graphs, unaliased ``.grad``)."""

import time
import warnings

import numpy as np
import pytest

import disttorch as torch
from disttorch.autograd import Function, gradcheck, gradgradcheck
from disttorch.autograd.gradcheck import GradcheckError

FREED_MSG = "Trying to backward through the graph a second time"


def leaf(values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


# ---------------------------------------------------------------------- backward()
def test_tensor_used_twice_and_broadcast_bias():
    x, w = leaf([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0])
    (x * w + x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), w.numpy() + 1)
    inp, bias = torch.ones(5, 3), leaf([0.0, 0.0, 0.0])
    ((inp + bias) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(bias.grad.numpy(), [5.0, 10.0, 15.0])


def test_backward_with_gradient_argument_and_non_scalar_error():
    x = leaf([1.0, 2.0])
    (x * 3).backward(torch.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [3.0, 30.0]
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of"):
        (x * 2).backward(torch.ones(3))
    with pytest.raises(
        RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"
    ):
        torch.tensor(1.0).backward()


def test_root_gradient_is_cast_to_its_outputs_dtype():
    # a float32 gradient for a bfloat16 output ran the pass in float32: the broadcast sum gave
    # 3.015625 (PyTorch's engine casts it first: three bfloat16 ones give 3), hooks saw float32
    x = leaf([0.0], dtype=torch.bfloat16)
    y = x + torch.zeros(3, dtype=torch.bfloat16)
    seen = []
    y.register_hook(lambda g: seen.append(g.dtype))
    y.backward(torch.full((3,), 1.00390625))
    assert x.grad.dtype == torch.bfloat16 and x.grad.tolist() == [3.0] and seen == [torch.bfloat16]
    x = leaf([1.0, 2.0])
    (g,) = torch.autograd.grad(x * 2, x, torch.tensor([1, 2]))
    assert g.dtype == torch.float32 and g.tolist() == [2.0, 4.0]


def test_complex_root_gradient_of_a_real_output_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(
        RuntimeError,
        match=r"grad_output\[0\] has a dtype of \w+.complex64 and output\[0\] has a dtype of \w+.float32",
    ):
        (x * 2).backward(torch.ones(2, dtype=torch.complex64))
    z = leaf([1.0, 2.0], dtype=torch.complex64)
    with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output and output"):
        torch.autograd.grad(z * 2, z, torch.ones(2))


def test_gradients_accumulate_across_passes():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]


def test_backward_twice_needs_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match=FREED_MSG):
        y.backward()


def test_backward_inputs_accumulates_only_there():
    a, b = leaf([1.0]), leaf([2.0])
    c = a * b
    (c * a).backward(inputs=[a])
    assert a.grad.tolist() == [4.0] and b.grad is None
    h = a * 3
    (h * b).backward(inputs=[b, h])  # a non-leaf input gets its .grad too
    assert b.grad.tolist() == [3.0] and h.grad.tolist() == [2.0] and a.grad.tolist() == [4.0]
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty"):
        (a * 2).sum().backward(inputs=[])


def test_autograd_backward_function():
    x = leaf([1.0, 2.0])
    torch.autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]
    y = leaf([1.0, 2.0])
    torch.autograd.backward(y * 2, grad_tensors=torch.tensor([1.0, 5.0]))
    assert y.grad.tolist() == [2.0, 10.0]


# ---------------------------------------------------------------------- autograd.grad
def test_grad_returns_and_leaves_dot_grad_untouched():
    x, z = leaf([1.0, 2.0]), leaf([3.0])
    (gx,) = torch.autograd.grad((x * x).sum(), x)
    assert gx.tolist() == [2.0, 4.0] and x.grad is None
    (g,) = torch.autograd.grad(x * 2, x, grad_outputs=torch.tensor([1.0, 3.0]))
    assert g.tolist() == [2.0, 6.0]
    with pytest.raises(
        RuntimeError, match="The differentiated Tensor at index 1 appears to not have been used in the graph"
    ):
        torch.autograd.grad((x * 2).sum(), [x, z])
    gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gz is None
    gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
    assert gz.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        torch.autograd.grad((x * 2).sum(), torch.tensor([1.0]))


def test_grad_retain_graph():
    x = leaf([3.0])
    y = x * x
    torch.autograd.grad(y, x, retain_graph=True)
    (g,) = torch.autograd.grad(y, x)
    assert g.item() == 6.0
    with pytest.raises(RuntimeError, match=FREED_MSG):
        torch.autograd.grad(y, x)


def test_create_graph_higher_order_derivatives():
    x = leaf([2.0], torch.float64)
    (g1,) = torch.autograd.grad(x**3, x, create_graph=True)
    assert g1.requires_grad and g1.item() == 12.0
    (g2,) = torch.autograd.grad(g1, x, create_graph=True)
    (g3,) = torch.autograd.grad(g2, x)
    assert (g2.item(), g3.item()) == (12.0, 6.0)
    # backward(create_graph=True) leaves a differentiable .grad
    w = leaf([1.0, 2.0], torch.float64)
    (w * w * w).sum().backward(create_graph=True)
    assert w.grad.requires_grad
    (w.grad.sum()).backward(inputs=[w])
    # d/dw sum(3w^2) = 6w, added to the 3w^2 already there
    np.testing.assert_allclose(w.grad.detach().numpy(), [3.0 + 6.0, 12.0 + 12.0])


def test_gradient_penalty_style_double_backward():
    x = leaf([[1.0, 2.0], [3.0, 4.0]], torch.float64)
    w = leaf([[0.5], [-1.0]], torch.float64)
    out = (x @ w).tanh().sum()
    (gx,) = torch.autograd.grad(out, x, create_graph=True)
    penalty = (gx**2).sum()
    penalty.backward()
    assert w.grad is not None and w.grad.shape == (2, 1)
    assert gradgradcheck(
        lambda x, w: (x @ w).tanh(), (x.detach().requires_grad_(), w.detach().requires_grad_())
    )


# ---------------------------------------------------------------------- grad modes
def test_grad_modes_as_context_managers_and_decorators():
    x = leaf([1.0])
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        assert not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def f(t):
        return t * 2

    @torch.enable_grad()
    def g(t):
        return t * 2

    assert not f(x).requires_grad
    with torch.no_grad():
        assert g(x).requires_grad
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        assert not torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    with torch.inference_mode():
        assert not (x * 2).requires_grad
    with torch.autograd.no_grad():
        assert not torch.autograd.is_grad_enabled()


def test_no_grad_restores_mode_after_exception():
    with pytest.raises(ValueError):
        with torch.no_grad():
            raise ValueError
    assert torch.is_grad_enabled()


def test_detach_requires_grad_and_retain_grad():
    x = leaf([1.0, 2.0])
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    y = x * 2
    y.retain_grad()
    x.retain_grad()  # no-op on a leaf
    (y * 3).sum().backward()
    assert y.grad.tolist() == [3.0, 3.0] and y.retains_grad and not x.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        torch.tensor([1.0]).retain_grad()
    t = torch.tensor([1.0])
    assert t.requires_grad_() is t and t.requires_grad


# ---------------------------------------------------------------------- hooks
def test_tensor_hooks_order_and_replacement():
    log = []
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: log.append(("x1", g.tolist())))
    x.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: log.append(("x3", g.tolist())))
    y = x * 3
    y.register_hook(lambda g: log.append(("y1", g.tolist())))
    y.register_hook(lambda g: g + 1)
    y.register_hook(lambda g: log.append(("y3", g.tolist())))
    y.sum().backward()
    assert log == [("y1", [1.0, 1.0]), ("y3", [2.0, 2.0]), ("x1", [6.0, 6.0]), ("x3", [60.0, 60.0])]
    assert x.grad.tolist() == [60.0, 60.0]


def test_hook_removal_and_errors():
    x = leaf([1.0])
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    (x * 2).backward()
    assert x.grad.item() == 2.0
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"
    ):
        torch.tensor([1.0]).register_hook(lambda g: g)


def test_post_accumulate_grad_hook_sees_the_accumulated_grad():
    log = []
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: log.append("tensor hook"))
    x.register_post_accumulate_grad_hook(lambda p: log.append(("post", p.grad.tolist())))
    (x * x).sum().backward()
    (x * 1).sum().backward()
    assert log == ["tensor hook", ("post", [2.0, 4.0]), "tensor hook", ("post", [3.0, 5.0])]
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_queue_callback_runs_once_after_the_pass():
    log = []
    a, b = leaf([1.0]), leaf([2.0])

    def grads_now():
        log.append(("callback", a.grad.tolist(), b.grad.tolist()))

    def hook(p):
        log.append(("post", p.grad.tolist()))
        if len(log) == 1:
            torch.autograd.Variable._execution_engine.queue_callback(grads_now)

    a.register_post_accumulate_grad_hook(hook)
    b.register_post_accumulate_grad_hook(hook)
    (a * b * 3).backward()
    assert log[-1] == ("callback", [6.0], [3.0]) and len(log) == 3
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass"):
        torch.autograd.queue_callback(lambda: None)
    calls = []
    y = a * 2
    y.register_hook(lambda g: torch.autograd.queue_callback(lambda: calls.append(1)))
    y.backward()
    assert calls == [1]


# ---------------------------------------------------------------------- custom Function
class Cube(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x * scale

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.scale, None


def test_custom_function_forward_backward_and_grad_fn():
    x = leaf([1.0, 2.0], torch.float64)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward" and "grad_fn=<CubeBackward>" in repr(y)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert gradcheck(lambda t: Cube.apply(t, 0.5), (leaf([0.3, -1.2], torch.float64),))
    assert gradgradcheck(lambda t: Cube.apply(t, 0.5), (leaf([0.3, -1.2], torch.float64),))


def _instantiate_and_call(lib):
    """``MyFunction()(x)``, the legacy style: what it warns and what it raises."""

    class Legacy(lib.autograd.Function):
        def forward(self, x):
            return x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = Legacy()
    with pytest.raises(RuntimeError) as raised:
        fn(lib.ones(1))
    [w] = caught
    return w.category, str(w.message).replace(type(fn).__qualname__, "Legacy"), str(raised.value)


def test_instantiating_a_function_warns_and_calling_it_raises():
    category, message, error = _instantiate_and_call(torch)
    assert category is DeprecationWarning and "should not be instantiated" in message
    assert error.startswith("Legacy autograd function with non-static forward method is deprecated")


@pytest.mark.parity
def test_instantiating_a_function_as_pytorch():
    real = pytest.importorskip("torch")  # this file names disttorch ``torch``
    assert _instantiate_and_call(torch) == _instantiate_and_call(real)


def test_custom_function_needs_input_grad_and_non_differentiable_outputs():
    seen = []

    class ArgMaxValue(Function):
        @staticmethod
        def forward(ctx, x, other):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return x[idx] * other, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            seen.append(ctx.needs_input_grad)
            x, idx = ctx.saved_tensors
            out = torch.zeros_like(x)
            out[idx] = g
            return out, None

    x = leaf([1.0, 5.0, 2.0])
    val, idx = ArgMaxValue.apply(x, torch.tensor(2.0))
    assert val.requires_grad and not idx.requires_grad
    val.backward()
    assert seen == [(True, False)] and x.grad.tolist() == [0.0, 1.0, 0.0]


def test_custom_function_saved_tensors_freed_and_version_checked():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x * 1, 1.0)
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED_MSG):
        y.grad_fn.saved_tensors
    h = x * 1
    z = Cube.apply(h, 1.0)
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_gradcheck_catches_a_wrong_backward():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = leaf([1.0, 2.0], torch.float64)
    assert gradcheck(lambda t: t * 2, (x,))
    assert not gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0") as info:
        gradcheck(Wrong.apply, (x,))
    assert type(info.value) is GradcheckError and type(info.value).__name__ == "GradcheckError"


def test_gradcheck_error_prints_both_jacobians_as_pytorch():
    def wrong(t):  # a detached factor: half the derivative of t * t is missing
        return t * t.detach() + t[:1]

    x = leaf([0.5, 1.25, 2.0], torch.float64)
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong, (x,))
    text = str(info.value)
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[")
    real = pytest.importorskip("torch")  # this file names disttorch ``torch``
    rx = real.tensor([0.5, 1.25, 2.0], dtype=real.float64, requires_grad=True)
    with pytest.raises(RuntimeError) as ref:
        real.autograd.gradcheck(wrong, (rx,))
    assert text.replace("disttorch.", "torch.") == str(ref.value)  # dtypes print as torch.* under the alias


# ---------------------------------------------------------------------- engine
def test_long_chain_is_iterative():
    x = leaf([1.0])
    y = x
    for _ in range(100_000):
        y = y + 1
    start = time.perf_counter()
    y.backward()
    assert x.grad.item() == 1.0
    assert time.perf_counter() - start < 30


def test_each_node_runs_once_after_all_its_consumers():
    calls = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            calls.append(g.tolist())
            return g

    x = leaf([1.0])
    a = Probe.apply(x)
    b, c, d = a * 2, a * 3, (a * 4) * 5
    (b + c + d * 1).backward()
    assert calls == [[25.0]] and x.grad.item() == 25.0


def test_dot_grad_is_never_aliased_and_never_carries_a_graph():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (a + b).sum().backward()
    a.grad.add_(100)
    assert b.grad.tolist() == [1.0, 1.0]
    assert not a.grad.requires_grad and a.grad.grad_fn is None
    v = leaf([1.0, 2.0, 3.0, 4.0])
    v.view(2, 2).sum().backward()
    assert v.grad.shape == (4,) and v.grad.is_contiguous()
    v.grad.mul_(2)  # its own writable memory
    e = leaf([1.0])
    e.expand(3).sum().backward()
    e.grad.add_(1)
    assert e.grad.item() == 4.0
    g = torch.ones(2)
    w = leaf([1.0, 2.0])
    (w * 1).backward(g)
    g.add_(5)
    assert w.grad.tolist() == [1.0, 1.0]


def test_gradient_dtype_follows_the_leaf():
    x = leaf([1.0, 2.0])
    (x.double() * torch.tensor([1.0, 2.0], dtype=torch.float64)).sum().backward()
    assert x.grad.dtype == torch.float32 and x.grad.tolist() == [1.0, 2.0]


def test_integer_and_comparison_results_do_not_require_grad():
    x = leaf([1.5, 0.5])
    assert not (x > 1).requires_grad
    assert not x.argmax().requires_grad


# ---------------------------------------------------------------------- first checks (were test_core_smoke.py)
def test_mul_add_backward_matches_closed_form():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = torch.tensor([[0.5, -1.0], [2.0, 3.0]])
    (a * b + a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.numpy() + 1)


def test_broadcast_bias_gets_summed_gradient():
    x = torch.randn(3, 4)
    bias = torch.zeros(4, requires_grad=True)
    (x + bias).sum().backward()
    np.testing.assert_allclose(bias.grad.numpy(), np.full(4, 3.0))


def test_second_derivative_with_create_graph():
    x = torch.tensor([2.0], requires_grad=True)
    (g,) = torch.autograd.grad(x**3, x, create_graph=True)
    (g2,) = torch.autograd.grad(g, x)
    assert g.item() == 12.0 and g2.item() == 12.0


class _MulSetup(Function):
    """PyTorch's newer style: ``forward`` without ``ctx``, then ``setup_context``."""

    @staticmethod
    def forward(a, b):
        return a * b, (a > 0).to(torch.int64)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx, g, _):
        a, b = ctx.saved_tensors
        return g * b, g * a


def test_function_with_setup_context():
    a = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.5, 4.0, -1.0], dtype=torch.float64, requires_grad=True)
    prod, positive = _MulSetup.apply(a, b)
    assert prod.requires_grad and not positive.requires_grad and positive.tolist() == [1, 0, 1]
    prod.sum().backward()
    assert a.grad.tolist() == [0.5, 4.0, -1.0] and b.grad.tolist() == [1.0, -2.0, 3.0]
    assert gradcheck(lambda x, y: _MulSetup.apply(x, y)[0], (a, b))
    with torch.no_grad():
        assert _MulSetup.apply(a, b)[0].tolist() == [0.5, -8.0, -3.0]
    from disttorch.func import grad, vmap

    assert grad(lambda t: _MulSetup.apply(t, t)[0].sum())(a.detach()).tolist() == [2.0, -4.0, 6.0]
    assert vmap(lambda x, y: _MulSetup.apply(x, y)[0])(torch.ones(2, 3), torch.ones(2, 3)).shape == (2, 3)


class _ExpSavingOutput(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return result * grad_out


def test_custom_function_saved_output_unpacks_as_the_output_for_double_backward():
    x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    out = _ExpSavingOutput.apply(x)
    (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    assert g.grad_fn is not None
    (gg,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp([0.5, -1.0]))
    assert gradgradcheck(_ExpSavingOutput.apply, (x,))
    seen = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.grad_fn) or t, lambda t: t):
        _ExpSavingOutput.apply(x)
    assert seen and seen[0] is not None and type(seen[0]).__name__ == "_ExpSavingOutputBackward"
    out = _ExpSavingOutput.apply(x)
    out.add_(1)  # the saved output changed: backward must refuse, as PyTorch's
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_in_place_result_without_gradient_cuts_the_graph_before():
    """``y.eq_(0)`` or ``y.bernoulli_()`` on a tensor of the graph: its new values do not
    depend on the graph, so the graph before gets zero gradient through it (as PyTorch's)."""
    x = torch.tensor([1.0, 0.0, 2.0], requires_grad=True)
    for step in (lambda y: y.eq_(0), lambda y: y.lt_(1.5), lambda y: y.bernoulli_(0.5)):
        y = x * 1
        step(y)
        assert y.requires_grad
        (y * x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
        x.grad = None
    y = x * 1
    y[1:].gt_(0.5)  # a view: only its region is cut
    (y * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 1.0])


def test_in_place_on_what_an_op_does_not_need_for_backward():
    w = torch.ones(3, requires_grad=True)
    c = (w * 1) / 2
    c.add_(1)  # Div keeps its output only for the divisor's gradient
    c.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [0.5] * 3)
    w.grad = None
    a = w * 1
    c = a / torch.full((3,), 2.0)
    a.add_(1)  # nor the dividend when the divisor needs no gradient
    c.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [0.5] * 3)
    w.grad = None
    c = (w * 1) ** 2
    c.add_(1)  # Pow keeps its output only for the exponent's gradient
    c.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0] * 3)
    b = w * 2
    c = torch.ones(3) / b
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.add_(1)  # the divisor is needed, as in PyTorch
        c.sum().backward()


def test_gradgradcheck_checks_the_dependence_on_the_output_gradient():
    class WrongInGrad(Function):  # backward ignores grad_out: only gradgradcheck's second half sees it
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_out.detach()

    x = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    assert gradcheck(WrongInGrad.apply, (x,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradgradcheck(WrongInGrad.apply, (x,))
    g = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    assert gradgradcheck(lambda t: t.sin() * 3, (x,), (g,))


@pytest.mark.parity
def test_gradgradcheck_draws_its_output_gradients_as_pytorch():
    real = pytest.importorskip("torch")  # this file names disttorch ``torch``
    draws = []
    for lib in (torch, real):
        lib.manual_seed(0)
        x = lib.rand(3, 2, dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(lambda t: (t.exp(), t * 2), (x,))
        draws.append(lib.rand(4).tolist())
    assert draws[0] == draws[1]


class _ExpForwardOnly(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.result = torch.exp(x)
        return ctx.result

    @staticmethod
    def jvp(ctx, tangent):
        return tangent * ctx.result


class _SquareByVjp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def vjp(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_out


def test_custom_function_with_jvp_only_in_forward_mode_and_vjp_as_backward():
    import disttorch.autograd.forward_ad as fwAD

    x = torch.tensor([0.2, -0.5], dtype=torch.float64, requires_grad=True)
    with fwAD.dual_level():
        out = _ExpForwardOnly.apply(fwAD.make_dual(x, torch.tensor([1.0, 2.0], dtype=torch.float64)))
        tangent = fwAD.unpack_dual(out).tangent
    np.testing.assert_allclose(tangent.numpy(), np.exp([0.2, -0.5]) * [1.0, 2.0])
    assert gradcheck(_ExpForwardOnly.apply, (x,), check_forward_ad=True, check_backward_ad=False)
    with pytest.raises(NotImplementedError, match="backward or vjp"):
        _ExpForwardOnly.apply(x).sum().backward()
    _SquareByVjp.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.4, -1.0])


def test_gradcheck_forward_mode_catches_a_wrong_jvp_and_takes_pytorchs_switches():
    class WrongJvp(_ExpForwardOnly):
        @staticmethod
        def jvp(ctx, tangent):
            return tangent * 2 * ctx.result

    x = torch.tensor([0.2, -0.5], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch"):
        gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)
    assert gradcheck(lambda t: t.sin(), (x,), check_forward_ad=True, nondet_tol=0.0, fast_mode=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'check_everything'"):
        gradcheck(lambda t: t.sin(), (x,), check_everything=True)
    assert gradgradcheck(
        lambda t: t.sin(), (x,), check_rev_over_rev=True, gen_non_contig_grad_outputs=True, nondet_tol=0.0
    )
    with pytest.raises(
        TypeError, match=r"gradgradcheck\(\) got an unexpected keyword argument 'check_everything'"
    ):
        gradgradcheck(lambda t: t.sin(), (x,), check_everything=True)


def test_custom_function_forward_reads_back_ctx_attributes_without_grad():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.factor = 3.0
            assert ctx.needs_input_grad == (False,)  # nothing records here
            return x * ctx.factor

        @staticmethod
        def backward(ctx, g):
            return g * ctx.factor

    assert Scale.apply(torch.ones(2)).tolist() == [3.0, 3.0]
    with torch.no_grad():
        assert Scale.apply(leaf([1.0])).tolist() == [3.0]


def _frozen_after_recording(lib):
    """A parameter frozen between forward and backward (vit-pytorch's Adapter freezes the
    ViT whose logits were computed before): no gradient is stored, its hooks still run."""
    w, b = lib.nn.Parameter(lib.ones(3)), lib.nn.Parameter(lib.ones(3))
    seen = []
    w.register_hook(lambda g: seen.append("pre"))
    w.register_post_accumulate_grad_hook(lambda p: seen.append("post"))
    y = (w * b * 2).sum()
    w.requires_grad_(False)
    y.backward()
    return w.grad, b.grad.tolist(), seen


def test_a_leaf_frozen_after_recording_gets_no_gradient():
    assert _frozen_after_recording(torch) == (None, [2.0, 2.0, 2.0], ["pre", "post"])


@pytest.mark.parity
def test_a_leaf_frozen_after_recording_as_pytorch():
    real = pytest.importorskip("torch")  # this file names disttorch ``torch``
    assert _frozen_after_recording(torch) == _frozen_after_recording(real)
