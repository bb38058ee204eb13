"""Runtime functions a training script touches: threads, compile/jit/onnx, testing.assert_close,
global flags, legacy tensor types, size= keywords, optimiser switches, Dropout2d on 2-D
input, the lazy RandomSampler, DDP(device_ids=...)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import tracemalloc
import typing
import warnings
from pathlib import Path

import numpy as np
import pytest

import disttorch
from disttorch import nn

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def real_torch():
    return pytest.importorskip("torch")


# ---------------------------------------------------------------------- threads
def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_set_num_threads_sets_the_budget_and_blas_stays_on_one_thread():
    pytest.importorskip("threadpoolctl")
    before = disttorch.get_num_threads()
    try:
        disttorch.set_num_threads(3)
        assert disttorch.get_num_threads() == 3 and set(_blas_threads()) == {1}
        a = disttorch.randn(64, 64)
        assert (a @ a).shape == (64, 64)
    finally:
        disttorch.set_num_threads(before)
    assert disttorch.get_num_threads() == before and set(_blas_threads()) == {1}


@pytest.mark.parity
@pytest.mark.parametrize("expr", ["set_num_threads(0)", "set_num_threads('a')", "set_num_threads(True)"])
def test_thread_argument_errors_match(real_torch, expr):
    for lib in (disttorch, real_torch):
        with pytest.raises(RuntimeError) as info:
            eval(f"lib.{expr}")
        if lib is disttorch:
            ours = str(info.value)
        else:
            assert str(info.value).split(",")[0] == ours.split(",")[0] or "expects" in ours


@pytest.mark.timeout(60)
def test_interop_threads_set_once_like_pytorch():
    code = (
        "import disttorch as t\nt.set_num_interop_threads(3)\nprint(t.get_num_interop_threads())\n"
        "try:\n    t.set_num_interop_threads(2)\nexcept RuntimeError as e:\n    print('again', e)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=50, check=True
    ).stdout
    assert out.startswith("3\nagain Error: cannot set number of interop threads")


def test_threads_without_threadpoolctl_name_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)
    with pytest.raises(ImportError, match=r"pip install 'disttorch\[threads\]'"):
        disttorch.set_num_threads(1)


# ---------------------------------------------------------------------- compile, jit, onnx
def test_compile_and_jit_return_callables_computing_the_same():
    model = nn.Linear(3, 2)
    x = disttorch.randn(4, 3)
    for compiled in (disttorch.compile(model), disttorch.compile(model, mode="max-autotune")):
        assert compiled._orig_mod is model and compiled.weight is model.weight
        np.testing.assert_array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    assert disttorch.compile()(model)._orig_mod is model
    step = model.forward  # libraries compile more methods through the wrapper's context
    assert disttorch.compile(model).dynamo_ctx(step) is step

    @disttorch.compile
    def f(a):
        return a * 2

    @disttorch.compile(fullgraph=True)
    def g(a):
        return a + 1

    assert f(x).tolist() == (x * 2).tolist() and g(x).tolist() == (x + 1).tolist()
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        disttorch.compile(model, mode="fast")
    with pytest.raises(RuntimeError, match="Invalid backend"):
        disttorch.compile(model, backend="nope")
    assert disttorch.jit.script(model).weight is model.weight  # (tests/runtime/test_jit_archives.py)
    traced = disttorch.jit.trace(model, x)
    np.testing.assert_array_equal(traced(x).detach().numpy(), model(x).detach().numpy())
    with pytest.raises(RuntimeError, match="example_inputs"):
        disttorch.jit.trace(model)
    assert not disttorch.jit.is_scripting() and disttorch.jit.ignore(f) is f
    assert disttorch.jit.script_if_tracing(f) is f  # nothing traces here: runs as it is


@pytest.mark.parity
def test_compile_backends_listed_and_refused_as_pytorch(real_torch):
    for tags in (("debug", "experimental"), ("debug",), (), None):
        assert disttorch.compiler.list_backends(tags) == real_torch.compiler.list_backends(tags), tags
    assert disttorch._dynamo.list_backends() == real_torch._dynamo.list_backends()
    assert disttorch.compile(lambda a: a * 2, backend="aot_eager")(disttorch.ones(1)).item() == 2.0
    with pytest.raises(RuntimeError) as ours:
        disttorch.compile(lambda a: a, backend="nope")
    with pytest.raises(RuntimeError) as theirs:
        real_torch.compile(lambda a: a, backend="nope")
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parity
def test_is_compiling_inside_compiled_calls_and_stances_as_pytorch(real_torch):
    def run(T) -> list:
        def probe(x):
            return x + 1 if T.compiler.is_compiling() else x - 1

        class M(T.nn.Module):
            def forward(self, x):
                return probe(x) + T._dynamo.is_compiling()

        foo, mod = T.compile(probe, backend="eager"), T.compile(M(), backend="eager")  # (fast in PyTorch)
        free = T.compiler.disable(lambda x: probe(x))
        eager = T.compiler.set_stance("force_eager")(foo)
        z = T.zeros(1)
        out = [foo(z), mod(z), probe(z), T.compile(lambda x: free(x), backend="eager")(z), eager(z)]
        with T.compiler.set_stance("force_eager"):
            out.append(foo(z))
        T.compiler.set_stance("eager_on_recompile")
        out.append(foo(z))
        T.compiler.set_stance("no such stance")
        with pytest.raises(RuntimeError, match="invalid torch.compile stance 'DynamoStance") as err:
            foo(z)
        T.compiler.set_stance("default")
        return [v.item() for v in out] + [str(err.value), foo.__name__]

    assert run(disttorch) == run(real_torch)
    m = disttorch.nn.Linear(1, 1)
    assert disttorch.compile(m, disable=True) is m and disttorch.compile(disable=True)(run) is run
    inside = disttorch.compile(lambda: disttorch.compiler.set_stance("force_eager"))
    with pytest.raises(AssertionError, match="Attempt to trace forbidden callable <function set_stance"):
        inside()


@pytest.mark.parity
def test_compiled_outputs_come_from_compiled_function_as_pytorchs(real_torch):
    def run(T) -> list:
        T.manual_seed(0)
        lin = T.nn.Linear(3, 2)
        mod = T.compile(T.nn.Sequential(lin, T.nn.ReLU()), backend="aot_eager")  # (fast in PyTorch)
        out = mod(T.randn(4, 3))
        names = [out.grad_fn.name(), T.compile(lin, backend="eager")(T.ones(1, 3)).grad_fn.name()]
        out.sum().backward()
        outer = T.compile(lambda x: mod(x) * 2, backend="aot_eager")  # nested: one node, the outer one
        with T.no_grad():
            names += [outer(T.ones(1, 3)).grad_fn, mod(T.ones(1, 3)).grad_fn]
        names.append(outer(T.ones(1, 3)).grad_fn.name())
        return names + [lin.weight.grad.tolist()]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_a_compiled_node_points_at_the_inputs_nodes_as_pytorchs(real_torch):
    # its next_functions were the eager graph's last node (MulBackward0), not the inputs'
    def run(T) -> list:
        a, b = T.ones(3, requires_grad=True), T.ones(3, requires_grad=True)
        lin = T.nn.Linear(3, 3)
        known = {id(a): "a", id(b): "b", id(lin.weight): "W", id(lin.bias): "bias"}

        def inputs(out) -> list:
            return [
                known.get(id(getattr(n, "variable", None)), n.name()) for n, _ in out.grad_fn.next_functions
            ]

        seen = [inputs(T.compile(lambda x, y: y * 2 + x, backend="aot_eager")(a, b))]
        seen.append(inputs(T.compile(lin, backend="aot_eager")(a)))  # the module's parameters first
        seen.append(inputs(T.compile(lambda x: lin(x * 2) + b, backend="aot_eager")(a)))
        return seen + [inputs(T.compile(lambda x: x.sin(), backend="aot_eager")(a * 1))]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_a_stance_holds_on_every_thread_as_pytorchs(real_torch):
    # it was the setting thread's own: a compiled call on another thread still compiled
    def run(T) -> list:
        compiled = T.compile(lambda: T.compiler.is_compiling(), backend="eager")
        seen = []
        with T.compiler.set_stance("force_eager"):
            thread = threading.Thread(target=lambda: seen.append(compiled()))
            thread.start()
            thread.join()
        return seen + [compiled()]

    assert run(disttorch) == run(real_torch) == [False, True]


@pytest.mark.parity
def test_compiled_outputs_keep_their_aliasing_as_pytorchs(real_torch):
    # every output was copied: a tensor returned twice came back as two, an input as a copy
    def run(T) -> list:
        a = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        c = a * 1
        u, twice, view, part, fresh, same, of_input = T.compile(
            lambda t: (lambda w: (w, w, w.view(2, 2), w[1:], (t * 3)[::2], t, t.view(2, 2)))(t * 2),
            backend="aot_eager",
        )(c)
        view.add_(1)  # through u's memory
        facts = [u is twice, view._base is u, part._base is u, fresh._base is None, same is c]
        facts += [of_input._base is c, part.tolist(), [same.grad_fn.name(), of_input.grad_fn.name()]]
        (u.sum() + part.sum() + fresh.sum()).backward()
        lin = T.nn.Linear(2, 2)
        weight_t = T.compile(lambda: lin.weight.t(), backend="aot_eager")()  # a parameter's view
        return facts + [a.grad.tolist(), weight_t._base is lin.weight, weight_t.grad_fn.name()]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_compiled_views_of_outputs_keep_their_own_nodes_as_pytorchs(real_torch):
    # a view of another output was remade with as_strided: AsStridedBackward0
    def run(T) -> list:
        x = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64, requires_grad=True)
        outs = T.compile(
            lambda x: (lambda y: (y, y[1:].t(), y.view(-1)[2:], y.split(1)[1], y.diagonal(), y[:, 1]))(x * 2),
            backend="aot_eager",
        )(x)
        names = [(o.grad_fn.name(), o._base is outs[0]) for o in outs[1:]]
        chain = outs[1].grad_fn.next_functions[0][0].name()  # the slice the transpose was made from
        sum((o * o).sum() for o in outs).backward()
        return [names, chain, x.grad.tolist()]

    assert run(disttorch) == run(real_torch)


@pytest.mark.parity
def test_dynamo_optimize_run_and_compile_times_as_pytorchs(real_torch):
    # none of them existed
    def run(T) -> list:
        def double(x):
            return x * 2

        x = T.ones(2, requires_grad=True)
        optimized = T._dynamo.optimize("eager")(double)
        facts = [type(T._dynamo.optimize("eager")).__name__, optimized(x).grad_fn.name()]
        facts.append(type(T._dynamo.optimize("eager")(T.nn.Linear(1, 1))).__name__)
        facts.append(T._dynamo.optimize("eager", disable=True)(double) is double)
        for make in (lambda: T._dynamo.optimize("eager"), lambda: T._dynamo.optimize("nope")):
            try:
                with make():
                    pass
            except RuntimeError as e:
                facts.append((type(e).__name__, str(e)))

        def triple(x):  # (never compiled: PyTorch's run() would run the code compiled before)
            return x * 3

        ran = T._dynamo.run(triple)
        facts += [type(T._dynamo.run()).__name__, ran(x).grad_fn.name(), ran.__wrapped__ is triple]
        return facts + [T._dynamo.utils.compile_times(repr="x")]

    assert run(disttorch) == run(real_torch)
    assert disttorch._dynamo.utils.compile_times("csv") == ([], [])  # (nothing compiles here)


@pytest.mark.parity
def test_dynamo_explain_counts_graphs_and_explicit_breaks_as_pytorch(real_torch):
    def run(T) -> list:
        def broken(x):
            y = x * 2
            T._dynamo.graph_break()
            return y + 1

        facts = []
        for fn in (broken, lambda x: x * 3, lambda x: 3):
            e = T._dynamo.explain(fn)(T.ones(2))
            facts.append((e.graph_count, e.graph_break_count, e.op_count, e.ops_per_graph))
            facts.append([(r.reason, r.graph_break, r.user_stack[0].line) for r in e.break_reasons])
        facts.append(str(e).split("Compile Times")[0])
        return facts

    assert run(disttorch) == run(real_torch)
    with pytest.warns(FutureWarning, match="explain.f, .args, .*kwargs. is deprecated"):
        assert disttorch._dynamo.explain(lambda x: x * 2, disttorch.ones(1)).graph_count == 1


def _compiled_module_facts(lib) -> list:
    """What a program sees of ``lib.compile(module)``: its class, names, state_dict keys,
    where attributes go, ``training``, ``len``, and ``Module.compile`` in place."""
    model = lib.nn.Sequential(lib.nn.Linear(3, 2))
    compiled = lib.compile(model)
    compiled.note = 1  # set through the wrapper: lands on the module
    compiled.eval()
    before = list(model.state_dict())
    plain = lib.nn.Linear(2, 2)
    in_place = plain.compile(mode="max-autotune")
    try:
        lib.compile(plain, mode="fast")
        refused = ""
    except RuntimeError as error:
        refused = str(error)
    return [
        type(compiled).__name__,
        repr(compiled),
        list(compiled.state_dict()),
        [name for name, _ in compiled.named_parameters()],
        getattr(model, "note", None),
        (compiled.training, model.training, len(compiled)),
        before,
        (in_place, list(plain.state_dict())),
        refused,
    ]


@pytest.mark.parity
def test_a_compiled_module_is_what_pytorchs_compile_returns(torch):
    assert _compiled_module_facts(disttorch) == _compiled_module_facts(torch)


def test_a_compiled_module_checkpoint_loads_into_a_compiled_twin():
    src, dst = nn.Linear(3, 2), nn.Linear(3, 2)
    state = disttorch.compile(src).state_dict()
    assert list(state) == ["_orig_mod.weight", "_orig_mod.bias"]
    disttorch.compile(dst).load_state_dict(state)
    assert disttorch.equal(dst.weight, src.weight)
    with pytest.raises(RuntimeError, match="Missing key"):
        nn.Linear(3, 2).load_state_dict(state)


def test_onnx_imports_and_export_says_what_to_do():
    from disttorch import onnx

    assert not onnx.is_in_onnx_export()
    with pytest.raises(RuntimeError, match="not available in disttorch.*state_dict"):
        onnx.export(nn.Linear(2, 2), (disttorch.ones(1, 2),), "m.onnx")


# ---------------------------------------------------------------------- testing.assert_close
CLOSE_CASES = [
    "torch.tensor([1., 2., 3.]), torch.tensor([1., 2.1, 3.])",
    "torch.tensor([1., 2.]), torch.tensor([1., 2.], dtype=torch.float64)",
    "torch.tensor([1., 2.]), torch.tensor([1., 2., 3.])",
    "1.0, 1.1",
    "[torch.tensor(1.)], [torch.tensor(2.)]",
    "torch.tensor([1, 2]), torch.tensor([1, 3])",
    "{'a': torch.tensor(1.)}, {'b': torch.tensor(1.)}",
    "torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')])",
    "torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]), equal_nan=True",
    "torch.tensor([1., 2.]), torch.tensor([1., 2.0001]), rtol=1e-3, atol=0.",
    "torch.tensor([[1., 2.], [3., 4.]]), torch.tensor([[1., 2.], [3., 5.]])",
    "torch.tensor([1., 2.], dtype=torch.float16), torch.tensor([1., 2.001], dtype=torch.float16)",
    "torch.tensor([1., 2.]), torch.tensor([1., 2.], dtype=torch.float64), check_dtype=False",
    "(1, 2), (1, 2)",
    "torch.tensor([1.]), torch.tensor([2.]), msg='custom'",
    "torch.tensor([True, False]), torch.tensor([True, True])",
]


@pytest.mark.parity
@pytest.mark.parametrize("args", CLOSE_CASES)
def test_assert_close_matches_pytorch(real_torch, args):
    def outcome(torch):
        try:
            eval(f"torch.testing.assert_close({args})")
        except AssertionError as e:
            return str(e).replace("disttorch.", "torch.")  # dtypes print as disttorch.float32
        return None

    assert outcome(disttorch) == outcome(real_torch)


ALLCLOSE_CASES = [
    "torch.tensor([1., 2.]), torch.tensor([1., 2.00005])",  # inside assert_allclose's float32 rtol
    "torch.tensor([1., 2.]), torch.tensor([1., 2.001])",
    "torch.tensor([1., float('nan')]), [1., float('nan')]",
    "torch.tensor([1, 2]), torch.tensor([1., 2.])",
    "torch.tensor([1., 2.]), torch.tensor([1., 2.5]), rtol=0.1, atol=0., msg='m'",
]


@pytest.mark.parity
def test_deprecated_assert_allclose_matches_pytorch(real_torch):
    def outcome(torch, args):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                eval(f"torch.testing.assert_allclose({args})")
                result = None
            except AssertionError as e:
                result = str(e).replace("disttorch.", "torch.")
        return result, [(str(w.message), w.category) for w in caught]

    for args in ALLCLOSE_CASES:
        assert outcome(disttorch, args) == outcome(real_torch, args), args


@pytest.mark.parity
def test_removed_linear_algebra_raises_as_pytorch(real_torch):
    for name, n in [("solve", 2), ("lstsq", 2), ("eig", 1), ("symeig", 1), ("matrix_rank", 1)]:
        errors = []
        for lib in (disttorch, real_torch):
            with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed") as e:
                getattr(lib, name)(*[lib.eye(2)] * n)
            errors.append(str(e.value))
        assert errors[0] == errors[1], name
    assert not hasattr(disttorch.eye(2), "matrix_rank") and hasattr(disttorch.eye(2), "symeig")


def test_assert_close_argument_errors():
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        disttorch.testing.assert_close(1.0, 1.0, rtol=1e-3)
    with pytest.raises(TypeError, match="No comparison pair"):
        disttorch.testing.assert_close("a", "a")


# ---------------------------------------------------------------------- global flags
@pytest.mark.parity
def test_flags_match_pytorch(real_torch):
    for lib in (disttorch, real_torch):
        assert lib.get_float32_matmul_precision() == "highest"
        with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("bad")
        assert lib.get_float32_matmul_precision() == "highest"
        lib.set_float32_matmul_precision("medium")
        assert lib.get_float32_matmul_precision() == "medium"
        lib.set_float32_matmul_precision("highest")
        assert not lib.are_deterministic_algorithms_enabled()
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert (
            lib.are_deterministic_algorithms_enabled() and lib.is_deterministic_algorithms_warn_only_enabled()
        )
        lib.use_deterministic_algorithms(False)
        assert not lib.are_deterministic_algorithms_enabled()
        with pytest.raises(TypeError, match="must be bool, not int"):
            lib.use_deterministic_algorithms(1)
        assert lib.get_default_device() == lib.device("cpu")
        lib.set_default_device("cpu")
        lib.set_default_device(None)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        disttorch.set_default_device("cuda")  # PyTorch raises at the next tensor; disttorch at once


# ---------------------------------------------------------------------- legacy types, size=
LEGACY = [
    "torch.FloatTensor(2, 3).shape",
    "torch.FloatTensor([1, 2]).tolist()",
    "torch.LongTensor([1, 2]).dtype",
    "torch.zeros(2).type()",
    "torch.zeros(2).type(torch.LongTensor).dtype",
    "isinstance(torch.zeros(2), torch.FloatTensor)",
    "isinstance(torch.zeros(2), torch.LongTensor)",
    "isinstance(torch.tensor([1]), torch.LongTensor)",
    "torch.ByteTensor(3).dtype",
    "torch.BoolTensor([1, 0]).tolist()",
    "torch.HalfTensor([1]).dtype",
    "torch.zeros(2).type('torch.DoubleTensor').dtype",
    "torch.zeros(2).type(torch.float64).dtype",
    "repr(torch.FloatTensor)",
    "torch.FloatTensor.dtype",
    "issubclass(torch.FloatTensor, torch.Tensor)",
    "torch.zeros(2).type(torch.IntTensor).type()",
    "torch.zeros(2, dtype=torch.int8).type()",
    "torch.zeros(2, dtype=torch.bool).type()",
    "torch.FloatTensor(torch.zeros(2, dtype=torch.float64))",
    "torch.FloatTensor(torch.zeros(2)).tolist()",
    "torch.LongTensor(2.5)",
    "torch.FloatTensor(size=(2,)).shape",
    "torch.zeros(2).type('bad')",
    "torch.cuda.FloatTensor(2)",
    "isinstance(torch.zeros(2), torch.cuda.FloatTensor)",
    "torch.DoubleTensor(torch.Size([2, 1])).shape",
    "torch.empty(size=(2, 3)).shape",
    "torch.zeros(size=(2,)).shape",
    "torch.ones(size=[2, 1]).shape",
    "torch.rand(size=(2,)).shape",
    "torch.randn(size=(2,)).dtype",
    "torch.full(size=(2,), fill_value=3).tolist()",
    "torch.randint(0, 5, size=(3,)).shape",
    "torch.zeros(2, size=(2,))",
    "torch.ones(2, 3).shape",
    "torch.zeros((2, 3)).shape",
    "torch.rand(2, device='cuda')",
]


def _outcome(torch, expr):
    try:
        value = eval(expr, {"torch": torch})
    except Exception as e:  # noqa: BLE001 (the type is the answer)
        return "raises", type(e).__name__
    text = str(value)
    return "value", text.replace("disttorch.", "torch.")  # disttorch's dtypes print as disttorch.float32


@pytest.mark.parity
@pytest.mark.parametrize("expr", LEGACY)
def test_legacy_types_and_size_keyword_match_pytorch(real_torch, expr):
    assert _outcome(disttorch, expr) == _outcome(real_torch, expr)


@pytest.mark.parity
def test_set_default_tensor_type_like_pytorch(real_torch):
    with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
        disttorch.set_default_tensor_type(disttorch.DoubleTensor)
    disttorch.set_default_dtype(disttorch.float32)
    for lib in (disttorch, real_torch):  # PyTorch warns once per process: compare the effects
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                lib.set_default_tensor_type(lib.DoubleTensor)
                assert lib.zeros(1).dtype == lib.float64
                lib.set_default_tensor_type("torch.FloatTensor")
                assert lib.zeros(1).dtype == lib.float32
                with pytest.raises(TypeError, match="only floating-point types"):
                    lib.set_default_tensor_type(lib.LongTensor)
                with pytest.raises(TypeError, match="not available"):
                    lib.set_default_tensor_type("torch.cuda.FloatTensor")
            finally:
                lib.set_default_dtype(lib.float32)


# ---------------------------------------------------------------------- optimisers, dropout2d, sampler, DDP
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_optimisers_accept_fused_and_foreach_with_the_same_updates(name):
    results = []
    for kw in ({}, {"fused": True}, {"foreach": True}, {"foreach": False, "fused": False}):
        disttorch.manual_seed(0)
        model = nn.Linear(4, 2)
        opt = getattr(disttorch.optim, name)(model.parameters(), lr=0.1, **kw)
        for _ in range(3):
            opt.zero_grad()
            model(disttorch.ones(3, 4)).pow(2).sum().backward()
            opt.step()
        results.append(model.weight.detach().numpy().copy())
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        getattr(disttorch.optim, name)(nn.Linear(1, 1).parameters(), lr=0.1, fused=True, foreach=True)


@pytest.mark.parity
def test_dropout2d_on_2d_input_warns_like_pytorch(real_torch):
    messages = []
    for lib in (disttorch, real_torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = lib.nn.Dropout2d(0.5)(lib.ones(64, 32))
        messages.append([str(x.message) for x in w])
        kept = out.detach().numpy()
        assert set(np.unique(kept)) <= {0.0, 2.0} and 0.3 < (kept == 0).mean() < 0.7  # entries dropped
    assert messages[0] == messages[1] and "Received a 2-D input to dropout2d" in messages[0][0]
    x = disttorch.ones(2, 3, 5, requires_grad=True)
    with pytest.warns(UserWarning, match="interpreted as shape \\(N, C, L\\)"):
        out = nn.functional.dropout2d(x, 0.5)
    rows = out.detach().numpy()
    assert ((rows == 0).all(-1) | (rows == 2).all(-1)).all()  # whole (N, C) rows, as PyTorch
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), rows)


def test_random_sampler_with_replacement_draws_lazily():
    from disttorch.utils.data import RandomSampler

    sampler = RandomSampler(range(10), replacement=True, num_samples=10**10)
    assert len(sampler) == 10**10
    tracemalloc.start()
    try:
        first = list(itertools.islice(iter(sampler), 100))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(first) == 100 and all(0 <= i < 10 for i in first) and peak < 1 << 20
    disttorch.manual_seed(3)
    a = list(RandomSampler(range(7), replacement=True, num_samples=70))
    disttorch.manual_seed(3)
    assert a == list(RandomSampler(range(7), replacement=True, num_samples=70)) and len(a) == 70
    assert set(a) == set(range(7))


def test_ddp_rejects_device_ids_on_a_cpu_module_like_pytorch():
    from disttorch.nn.parallel import DistributedDataParallel as DDP

    with pytest.raises(
        ValueError, match="device_ids and output_device arguments only work with.*device_ids \\[0\\]"
    ):
        DDP(nn.Linear(2, 2), device_ids=[0])


@pytest.mark.parity
def test_dataloader_pin_memory_warns_like_the_cpu_build(real_torch):
    messages = []
    for lib in (disttorch, real_torch):
        loader = lib.utils.data.DataLoader(list(range(4)), batch_size=2, pin_memory=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            batches = [b.tolist() for b in loader]
        assert batches == [[0, 1], [2, 3]]
        pins = [x for x in w if "pin_memory" in str(x.message)]
        # shown where the library's iterator is made: once per process, not once per loop
        assert [x.filename.endswith(os.path.join("utils", "data", "dataloader.py")) for x in pins] == [True]
        messages.append([str(x.message) for x in pins])
    assert messages[0] == messages[1] and len(messages[0]) == 1


def test_jit_annotations_are_typing_names():
    from disttorch.jit.annotations import Dict, List, Optional, Tuple

    assert (List, Tuple, Dict, Optional) == (typing.List, typing.Tuple, typing.Dict, typing.Optional)


@pytest.mark.parity
def test_jit_annotations_as_pytorch(torch):
    import torch.jit.annotations as theirs

    import disttorch.jit.annotations as ours

    for name in ours.__all__:
        assert getattr(ours, name) is getattr(theirs, name)
