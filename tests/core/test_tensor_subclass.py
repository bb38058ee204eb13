"""Tensor subclasses keep their type through ops (``Tensor.__torch_function__`` and
``_convert``), dispatch to their own ``__torch_function__``, and opt out with
``torch._C._disabled_torch_function_impl`` (as ``nn.Parameter`` does), as in PyTorch."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import disttorch as dt


def _kinds(lib) -> dict:
    """The result types of ops on a plain subclass, a logging one and parameters."""
    F = lib.nn.functional

    class MyT(lib.Tensor):
        pass

    class Logged(lib.Tensor):
        calls: list = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    class MyParam(lib.nn.Parameter):
        pass

    t = lib.arange(6.0).reshape(2, 3).as_subclass(MyT)
    results = {
        "add": t + 1,
        "radd": 1 + t,
        "sum": t.sum(),
        "getitem": t[0],
        "cat": lib.cat([t, t]),
        "linear": F.linear(t, lib.ones(4, 3)),
        "relu": lib.relu(t),
        "T": t.T,
        "data": t.data,
        "detach": t.detach(),
        "plain_times_sub": lib.ones(2, 3) * t,
        "to": t.to(lib.float64),
        "max": t.max(dim=1),
        "split": t.split(1),
        "layer": lib.nn.Linear(3, 2)(t),
    }
    out = {
        k: [type(x).__name__ for x in v] if isinstance(v, (tuple, list)) else type(v).__name__
        for k, v in results.items()
    }
    out["max_type"] = type(results["max"]).__name__
    out["item"] = type(t.sum().item()).__name__
    out["repr"] = repr(lib.ones(2, 2).as_subclass(MyT))
    x = lib.zeros(3).as_subclass(Logged)
    Logged.calls.clear()
    y = lib.add(x * 2, 1, alpha=3).sum()
    out["logged"] = (list(Logged.calls), type(y).__name__)
    p = MyParam(lib.ones(2))
    q = lib.nn.Parameter(lib.ones(2))
    out["param"] = [type(p).__name__, type(p * 2).__name__, type(q * 2).__name__, type(q.detach()).__name__]
    b = lib.nn.Buffer(lib.ones(2).as_subclass(MyT))
    out["buffer"] = (
        type(b).__name__,
        isinstance(b, lib.nn.Buffer),
        type(lib.nn.Buffer(lib.ones(1))).__name__,
    )
    out["subclass_param_repr"] = repr(lib.nn.Parameter(lib.ones(2, 2).as_subclass(MyT)))
    out["param_opts_out"] = lib.nn.Parameter.__torch_function__ is lib._C._disabled_torch_function_impl
    with lib._C.DisableTorchFunctionSubclass():
        out["disabled"] = type(t + 1).__name__
    out["has_tf"] = (lib.overrides.has_torch_function((t,)), lib.overrides.has_torch_function((lib.ones(1),)))
    out["has_tf_forms"] = (
        lib.overrides.has_torch_function_unary(t),
        lib._C._has_torch_function_variadic(1, lib.ones(1)),
        lib._C._has_torch_function_unary(lib.ones(1)),
        lib.overrides.has_torch_function((lib.nn.Parameter(lib.ones(1)),)),
        lib.Tensor._base.__get__ in lib.overrides.get_default_nowrap_functions(),
    )
    w = lib.ones(3, requires_grad=True)
    s = (w.as_subclass(MyT) * 2).sum()
    s.backward()
    out["grad"] = (type(s).__name__, s.grad_fn.name(), w.grad.tolist())
    return out


def test_subclasses_keep_their_type_through_ops():
    out = _kinds(dt)
    assert out["add"] == out["cat"] == out["linear"] == out["layer"] == out["plain_times_sub"] == "MyT"
    assert out["max"] == ["MyT", "MyT"] and out["max_type"] == "max"
    assert out["logged"] == (["mul", "add", "sum"], "Logged")
    assert out["param"] == ["MyParam", "Tensor", "Tensor", "Tensor"] and out["param_opts_out"]
    assert out["disabled"] == "Tensor" and out["has_tf"] == (True, False)
    assert out["has_tf_forms"] == (True, False, False, False, True)
    assert out["buffer"] == ("MyT", True, "Tensor")
    assert out["repr"].startswith("MyT([[1., 1.],") and out["grad"] == ("MyT", "AliasBackward0", [2.0] * 3)


@pytest.mark.parity
def test_subclasses_match_pytorch(torch):
    assert _kinds(dt) == _kinds(torch)


def _handlers_set_later(lib) -> list:
    """A subclass used, then given a ``__torch_function__``, then a wrapper subclass (with
    ``__torch_dispatch__``) given one: each handler takes effect from then on."""
    seen = []

    class Late(lib.Tensor):
        pass

    t = lib.ones(2).as_subclass(Late)
    t + 1  # the type is seen (and judged) before it has a handler of its own

    @classmethod
    def logged(cls, func, types, args=(), kwargs=None):
        seen.append(func.__name__)
        return super(Late, cls).__torch_function__(func, types, args, kwargs)

    Late.__torch_function__ = logged
    t + 1
    kinds = [type(t.mul(2)).__name__]

    class Wrapped(lib.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return lib.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

        def __init__(self, elem):
            self.elem = elem

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise NotImplementedError(str(func))

    w = Wrapped(lib.ones(2))

    @classmethod
    def answered(cls, func, types, args=(), kwargs=None):
        return "answered " + func.__name__

    Wrapped.__torch_function__ = answered
    return [*seen, *kinds, w.module_load(lib.ones(2)), w.add(1)]


def test_a_handler_set_after_the_class_takes_effect():
    assert _handlers_set_later(dt) == ["add", "mul", "Late", "answered module_load", "answered add"]


@pytest.mark.parity
def test_a_handler_set_after_the_class_matches_pytorch(torch):
    assert _handlers_set_later(dt) == _handlers_set_later(torch)


def _pickled(lib):
    class Tagged(lib.Tensor):
        pass

    globals()["Tagged"] = Tagged  # picklable by reference
    Tagged.__qualname__ = "Tagged"
    t = lib.arange(3.0).as_subclass(Tagged)
    t.note = "kept"
    back = pickle.loads(pickle.dumps(t))
    return type(back).__name__, back.note, back.tolist()


def test_a_pickled_subclass_comes_back_as_itself():
    assert _pickled(dt) == ("Tagged", "kept", [0.0, 1.0, 2.0])


def test_an_op_keeps_its_inputs_objects_untouched():
    class Sub(dt.Tensor):
        pass

    plain = dt.ones(2)
    s = dt.zeros(2).as_subclass(Sub)
    out = plain.expand_as(s)  # may return ``plain`` itself: shown as Sub, ``plain`` stays
    assert type(plain) is dt.Tensor and type(out) is Sub
    np.testing.assert_array_equal(out.numpy(), [1.0, 1.0])


def _wrapper(lib) -> list:
    """A wrapper subclass (``_make_wrapper_subclass`` + ``__torch_dispatch__``) that keeps
    its data in ``elem`` and logs the ATen operators it is handed."""

    def unwrap(x):
        return x.elem if isinstance(x, W) else [unwrap(v) for v in x] if isinstance(x, list) else x

    class W(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl
        log: list = []

        @staticmethod
        def __new__(cls, elem):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype, requires_grad=False)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            cls.log.append(str(func))
            out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})
            return W(out) if isinstance(out, lib.Tensor) else out

    w = W(lib.arange(12.0).reshape(3, 4))
    out = [tuple(w.shape), w.dim(), w.numel(), w.size(1), str(w.dtype).rsplit(".", 1)[-1]]
    results = [w * 2 + 1, lib.sum(w), lib.cat([w, w]), w[1], w[:, 1:3], w[lib.tensor([0, 2])]]
    out += [(type(r).__name__, r.elem.tolist()) for r in results]
    out.append(list(W.log))

    class P(lib.Tensor):
        pass

    base = lib.ones(2)
    m = lib.Tensor._make_subclass(P, base, True)
    with lib.no_grad():
        m[0] = 5.0
    out.append((type(m).__name__, m.requires_grad, m.is_leaf, base.tolist(), type(m.detach() + 1).__name__))
    return out


def test_wrapper_subclasses_dispatch_aten_operators():
    out = _wrapper(dt)
    assert out[:5] == [(3, 4), 2, 12, 4, "float32"]
    assert out[5] == ("W", [[1.0, 3.0, 5.0, 7.0], [9.0, 11.0, 13.0, 15.0], [17.0, 19.0, 21.0, 23.0]])
    assert out[11] == [
        "aten.mul.Tensor",
        "aten.add.Tensor",
        "aten.sum.default",
        "aten.cat.default",
        "aten.select.int",
        "aten.slice.Tensor",
        "aten.index.Tensor",
    ]
    assert out[12] == ("P", True, True, [5.0, 1.0], "P")


@pytest.mark.parity
def test_wrapper_subclasses_match_pytorch(torch):
    assert _wrapper(dt) == _wrapper(torch)


def test_a_batch_of_subclass_samples_is_of_their_type():
    from disttorch.utils.data import DataLoader

    class Tagged(dt.Tensor):
        pass

    samples = [dt.tensor([float(i), 1.0]).as_subclass(Tagged) for i in range(4)]
    batches = list(DataLoader(samples, batch_size=2))
    assert [type(b) for b in batches] == [Tagged, Tagged]
    assert batches[1].tolist() == [[2.0, 1.0], [3.0, 1.0]]


def _logged_mlp(lib) -> list:
    """What a logging wrapper subclass (inner tensor in ``elem``) is handed for a linear
    layer, ReLU and sum, forward then backward, and the graph recorded above it."""
    F = lib.nn.functional

    def unwrap(x):
        return x.elem if isinstance(x, L) else [unwrap(v) for v in x] if isinstance(x, list) else x

    def describe(x):
        return (
            tuple(x.shape)
            if isinstance(x, lib.Tensor)
            else [describe(v) for v in x]
            if isinstance(x, list)
            else x
        )

    class L(lib.Tensor):
        log: list = []

        @staticmethod
        def __new__(cls, elem, requires_grad=False):
            r = lib.Tensor._make_wrapper_subclass(
                cls, elem.size(), dtype=elem.dtype, requires_grad=requires_grad
            )
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            cls.log.append((str(func), [describe(a) for a in args], sorted(kwargs)))
            out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
            if isinstance(out, (tuple, list)):
                return type(out)(L(o) if isinstance(o, lib.Tensor) else o for o in out)
            return L(out) if isinstance(out, lib.Tensor) else out

    lib.manual_seed(0)
    x = L(lib.arange(12.0).reshape(3, 4) / 10)
    w = L(lib.linspace(-1, 1, 32).reshape(8, 4), requires_grad=True)
    b = L(lib.linspace(0, 1, 8), requires_grad=True)
    loss = F.relu(F.linear(x, w, b)).sum()
    forward = list(L.log)
    nodes = [type(loss.grad_fn).__name__, loss.grad_fn.next_functions[0][0].name()]
    L.log.clear()
    loss.backward()
    grads = [
        type(w.grad).__name__,
        w.grad.elem.numpy().round(5).tolist(),
        b.grad.elem.numpy().round(5).tolist(),
    ]
    backward = list(L.log)
    L.log.clear()
    steps = {
        "reshape": lambda a: a.reshape(-1),
        "flatten": lambda a: a.flatten(),
        "softmax": lambda a: F.softmax(a, dim=-1),
        "sum_dim": lambda a: a.sum(1, keepdim=True),
        "mean_dim": lambda a: a.mean(-1),
        "pow": lambda a: a**2,
        "gt": lambda a: a > 0,
        "to": lambda a: a.to(lib.float64),
        "var": lambda a: a.var(1),
        "rsub": lambda a: 1 - a,
        "matmul3d": lambda a: a[None] @ a.t(),
        "cross_entropy": lambda a: F.cross_entropy(a, lib.tensor([0, 1, 2])),
        "where": lambda a: lib.where(a > 0.5, a, 0.0),
        "contiguous": lambda a: a.contiguous(),
        "flip": lambda a: a.flip(0),
        "sort_stable": lambda a: a.sort(stable=True, dim=0),
        "unbind": lambda a: a.unbind(1),
        "narrow": lambda a: a.narrow(1, 1, 2),
        "ellipsis": lambda a: a[..., 1],
        "view_as_T": lambda a: a.view_as(a).T,
        "movedim": lambda a: a[None].movedim(0, 2),
        "long": lambda a: a.long(),
        "full_like": lambda a: lib.full_like(a, 2.0),
        "to_copy": lambda a: (a.to(copy=True), a.to("cpu", lib.float64), a.to("cpu")),
    }
    seen = {}
    for name, step in steps.items():
        L.log.clear()
        step(x)
        seen[name] = [(op, kw) if kw else op for op, _, kw in L.log]
    return [forward, nodes, backward, grads, seen]


def test_a_wrapper_subclass_is_handed_aten_operators_as_pytorch_decomposes_them():
    forward, nodes, backward, grads, seen = _logged_mlp(dt)
    assert forward == [
        ("aten.t.default", [(8, 4)], []),
        ("aten.addmm.default", [(8,), (3, 4), (4, 8)], []),
        ("aten.relu.default", [(3, 8)], []),
        ("aten.detach.default", [(3, 8)], []),
        ("aten.sum.default", [(3, 8)], []),
    ]
    assert nodes == ["SumBackward0", "ReluBackward0"]
    assert [op for op, _, _ in backward] == [
        "aten.ones_like.default",
        "aten.expand.default",
        "aten.detach.default",
        "aten.threshold_backward.default",
        "aten.t.default",
        "aten.mm.default",
        "aten.sum.dim_IntList",
        "aten.view.default",
        "aten.detach.default",
        "aten.t.default",
        "aten.detach.default",
    ]
    assert grads[0] == "L" and len(grads[1]) == 8
    assert seen["softmax"] == ["aten._softmax.default"] and seen["contiguous"] == []
    assert seen["cross_entropy"] == ["aten._log_softmax.default", "aten.nll_loss_forward.default"]


@pytest.mark.parity
def test_wrapper_subclass_dispatch_matches_pytorch(torch):
    assert _logged_mlp(dt) == _logged_mlp(torch)


def test_gradients_through_a_wrapper_subclass_match_plain_tensors():
    """The derivatives recorded above the dispatch give a plain tensor's gradients."""
    _, _, _, grads, _ = _logged_mlp(dt)
    w = dt.linspace(-1, 1, 32).reshape(8, 4).requires_grad_()
    b = dt.linspace(0, 1, 8).requires_grad_()
    dt.nn.functional.relu(dt.nn.functional.linear(dt.arange(12.0).reshape(3, 4) / 10, w, b)).sum().backward()
    assert grads[1] == w.grad.numpy().round(5).tolist() and grads[2] == b.grad.numpy().round(5).tolist()


def _unwrapping(lib) -> tuple:
    """A handler that unwraps with ``as_subclass`` (which never dispatches) and rewraps."""

    class U(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            args = [a.as_subclass(lib.Tensor) if isinstance(a, cls) else a for a in args]
            out = func(*args, **(kwargs or {}))
            return out.as_subclass(cls) if isinstance(out, lib.Tensor) else out

    u = lib.arange(6.0).view(2, 3).as_subclass(U)
    rows = [x.grad_fn for x in lib.ones(2, 2, requires_grad=True) * 1]
    return type(u * 2).__name__, u.stride(), [type(r).__name__ for r in u], [g.name() for g in rows]


def test_a_handler_unwraps_with_as_subclass():
    assert _unwrapping(dt) == ("U", (3, 1), ["Tensor", "Tensor"], ["UnbindBackward0"] * 2)


@pytest.mark.parity
def test_unwrapping_matches_pytorch(torch):
    assert _unwrapping(dt) == _unwrapping(torch)


def test_python_dispatch_helpers_for_wrapper_subclasses():
    from disttorch.utils import _python_dispatch as pd

    class Two(dt.Tensor):
        __torch_function__ = dt._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, a, b):
            r = dt.Tensor._make_wrapper_subclass(cls, a.shape, dtype=a.dtype)
            r.a, r.b = a, b
            return r

        def __tensor_flatten__(self):
            return ["a", "b"], None

        @staticmethod
        def __tensor_unflatten__(inner, ctx, size, stride):
            return Two(inner["a"], inner["b"])

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    t = Two(dt.ones(2), dt.zeros(2))
    doubled = pd.transform_subclass(t, lambda name, x: x * 2 + (name == "b"))
    assert pd.is_traceable_wrapper_subclass(t) and not pd.is_traceable_wrapper_subclass(dt.ones(1))
    assert type(doubled) is Two and doubled.a.tolist() == [2.0, 2.0] and doubled.b.tolist() == [1.0, 1.0]
    assert pd.return_and_correct_aliasing(None, (), {}, t) is t and pd._get_current_dispatch_mode() is None

    assert pd._get_current_dispatch_mode_stack() == []


def _dispatch_mode(lib) -> list:
    """A logging ``TorchDispatchMode`` around a layer's forward and factories: the operators
    it is handed (in order, nested modes outermost first), the results, the mode stack."""
    import importlib

    pd = importlib.import_module(f"{lib.__name__}.utils._python_dispatch")
    log = []

    class Log(pd.TorchDispatchMode):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append(f"{self.tag}:{func}")
            return func(*args, **(kwargs or {}))

    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 2)
    x = lib.ones(4, 3)
    with lib.no_grad(), Log("outer") as outer, Log("inner"):
        stack = [type(m).__name__ for m in pd._get_current_dispatch_mode_stack()]
        y = lib.nn.functional.relu(layer(x)).sum(1)
        z = lib.arange(3.0) * 2
    after = pd._get_current_dispatch_mode()
    return [log, stack, y.detach().numpy().round(5).tolist(), z.tolist(), after, outer.tag]


def test_a_dispatch_mode_is_handed_the_aten_operators():
    log, stack, y, z, after, tag = _dispatch_mode(dt)
    assert log[:4] == [
        "inner:aten.t.default",
        "outer:aten.t.default",
        "inner:aten.addmm.default",
        "outer:aten.addmm.default",
    ]
    assert stack == ["Log", "Log"] and z == [0.0, 2.0, 4.0] and after is None and tag == "outer"


@pytest.mark.parity
def test_a_dispatch_mode_matches_pytorch(torch):
    assert _dispatch_mode(dt) == _dispatch_mode(torch)


def _quantised_weight(lib) -> list:
    """A weight-only quantised subclass (torchao-style: int8 data and a scale, dequantised in
    ``__torch_dispatch__``) as an ``nn.Linear`` weight: the operators its layer hands it,
    ``deepcopy`` (through ``clone``)."""
    import copy

    aten = lib.ops.aten

    class Int8W(lib.Tensor):
        seen: list = []

        @staticmethod
        def __new__(cls, q, scale):
            return lib.Tensor._make_wrapper_subclass(cls, q.shape, dtype=scale.dtype)

        def __init__(self, q, scale):
            self.q, self.scale = q, scale

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(str(func))
            w = next(a for a in args if isinstance(a, Int8W))
            if func in (aten.detach.default, aten.clone.default):
                return Int8W(w.q.clone(), w.scale.clone())
            if func is aten.t.default:  # the transposed weight, dequantised
                return (w.q.to(w.scale.dtype) * w.scale).t()
            raise NotImplementedError(str(func))

    lib.manual_seed(0)
    lin = lib.nn.Linear(4, 3)
    w = lin.weight.detach()
    scale = w.abs().amax(1, keepdim=True) / 127
    lin.weight = lib.nn.Parameter(Int8W(lib.round(w / scale).to(lib.int8), scale), requires_grad=False)
    out = lin(lib.ones(2, 4))
    twin = copy.deepcopy(lin)
    return [
        type(out).__name__,
        out.detach().numpy().round(4).tolist(),
        Int8W.seen,
        type(twin.weight).__name__,
        twin.weight.q.tolist() == lin.weight.q.tolist() and twin.weight.q is not lin.weight.q,
    ]


def test_a_quantised_weight_subclass_runs_a_linear_layer_and_copies():
    out = _quantised_weight(dt)
    assert out[0] == "Tensor" and out[3] == "Int8W" and out[4]
    assert out[2] == ["aten.detach.default", "aten.t.default", "aten.clone.default"]


@pytest.mark.parity
def test_a_quantised_weight_subclass_matches_pytorch(torch):
    assert _quantised_weight(dt) == _quantised_weight(torch)


def _custom_reprs(lib) -> list:
    """Reprs of a subclass that prints its own contents through ``torch._tensor_str`` (as PyG's
    ``HashTensor`` does): ``_str_intern`` adds the class name, dtype and gradient suffixes."""

    class Keyed(lib.Tensor):
        def __repr__(self) -> str:
            indent = len("Keyed(")
            contents = lib._tensor_str._tensor_str(self.flip(0).as_subclass(lib.Tensor), indent)
            return lib._tensor_str._str_intern(self, tensor_contents=contents)

    reprs = [
        repr(lib.arange(4.0).reshape(2, 2).as_subclass(Keyed)),
        repr(lib.tensor([1, 2], dtype=lib.int32).as_subclass(Keyed)),
        repr(lib.ones(2, dtype=lib.float64, requires_grad=True).as_subclass(Keyed)),
        repr((lib.ones(2, requires_grad=True) * 2).as_subclass(Keyed)),
        repr(lib.zeros(0, 2).as_subclass(Keyed)),
        lib._tensor_str._str_intern(lib.tensor([1.5])),
    ]
    return [r.replace(f"{lib.__name__}.", "torch.") for r in reprs]


def test_str_intern_prints_a_subclass_with_its_own_contents():
    assert _custom_reprs(dt) == [
        "Keyed([[2., 3.],\n       [0., 1.]])",
        "Keyed([2, 1], dtype=torch.int32)",
        "Keyed([1., 1.], dtype=torch.float64, grad_fn=<AliasBackward0>)",
        "Keyed([2., 2.], grad_fn=<AliasBackward0>)",
        "Keyed([], size=(0, 2))",
        "tensor([1.5000])",
    ]


def test_str_intern_matches_pytorch(torch):
    assert _custom_reprs(dt) == _custom_reprs(torch)
