"""Names libraries import from ``torch._dynamo``, ``torch.ops``, ``torch.overrides``,
``torch.jit`` and ``torch._tensor_str``, answering as PyTorch's CPU build does eagerly."""

from __future__ import annotations

import pytest

import disttorch as dt
from disttorch import _dynamo


def test_dynamo_markers_change_nothing():
    t = dt.ones(2)
    assert _dynamo.is_compiling() is False and _dynamo.eval_frame.is_dynamo_supported()
    assert _dynamo.mark_static_address(t) is None and _dynamo.mark_dynamic(t, 0) is None
    assert _dynamo.allow_in_graph(len) is len and _dynamo.config.cache_size_limit == 8
    assert issubclass(_dynamo.exc.Unsupported, RuntimeError)


def test_inductor_config_keeps_pytorchs_settings():
    import disttorch._inductor.config as config

    assert hasattr(config, "coordinate_descent_tuning") and config.max_autotune is False
    assert config.triton.cudagraphs is False and config.cpp.threads == -1
    config.coordinate_descent_tuning = True  # kept; compile still runs eagerly
    try:
        assert dt._inductor.config.coordinate_descent_tuning is True
    finally:
        config.coordinate_descent_tuning = False


def _config_facts(T) -> list:
    """What a program sees of ``_dynamo.config``: the alias, ``patch`` in its three forms as
    a context manager and a decorator, ``get_config_copy``, an unknown name read."""
    c = T._dynamo.config
    facts = [c.suppress_errors, c.cache_size_limit]
    with c.patch(suppress_errors=True, cache_size_limit=64):
        facts += [c.suppress_errors, c.cache_size_limit, c.recompile_limit]
        with c.patch({"verbose": True}), c.patch("optimize_ddp", False):
            facts += [c.verbose, c.optimize_ddp]
    facts += [c.suppress_errors, c.recompile_limit, c.verbose, c.optimize_ddp]
    facts.append(c.patch(verbose=True)(lambda: c.verbose)())
    copy = c.get_config_copy()
    facts += [copy["recompile_limit"], "cache_size_limit" in copy, c.verbose]
    with T._inductor.config.patch({"triton.cudagraphs": True, "max_autotune": True}):
        facts += [T._inductor.config.triton.cudagraphs, T._inductor.config.max_autotune]
    facts += [T._inductor.config.triton.cudagraphs, T._inductor.config.max_autotune]
    facts += [c.guard_nn_modules, c.compiled_autograd, c.specialize_int, c.accumulated_cache_size_limit]
    with c.patch(accumulated_cache_size_limit=3):
        facts.append(c.accumulated_recompile_limit)
    T._dynamo.reset_code_caches()
    facts.append(isinstance(T._dynamo.utils.counters["stats"]["calls_captured"], int))  # (PyTorch's counts)
    with pytest.raises(AttributeError) as err:
        c.no_such_setting  # noqa: B018
    return [*facts, str(err.value).replace("disttorch.", "torch.")]


def test_dynamo_and_inductor_config_patch_as_pytorchs():
    pytest.importorskip("torch._dynamo")
    import torch

    assert _config_facts(dt) == _config_facts(torch)


def test_a_config_patch_is_reusable_and_decorates_a_testcase_as_pytorchs():
    import unittest

    c = dt._dynamo.config
    patch = c.patch(cache_size_limit=6)
    seen = []
    for _ in range(2):  # entered again once left, and nested
        with patch, patch:
            seen.append(c.cache_size_limit)
        seen.append(c.cache_size_limit)
    decorated = patch(lambda: c.cache_size_limit)
    seen += [decorated(), decorated()]

    @c.patch(cache_size_limit=5)
    class Case(unittest.TestCase):  # (PyTorch's: patched from setUpClass to tearDownClass)
        def test_it(self):
            seen.append(c.cache_size_limit)

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Case).run(result)
    assert isinstance(Case, type) and Case.__name__ == "Case" and result.testsRun == 1
    assert seen == [6, 8, 6, 8, 6, 6, 5] and c.cache_size_limit == 8 and result.wasSuccessful()


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        (("cache_size_limit",), {}, "first argument must be a dict when passing a single positional arg"),
        (("verbose", None), {}, "first argument must be a dict"),  # (None reads as no value)
        ((None, 3), {}, "second positional argument is only valid when first argument is a key string"),
        (({"verbose": True},), {"optimize_ddp": False}, "cannot pass both positional and keyword arguments"),
    ],
)
def test_a_config_patch_with_misplaced_arguments_raises_pytorchs_assertion(args, kwargs, message):
    with pytest.raises(AssertionError, match=message):
        dt._dynamo.config.patch(*args, **kwargs)


def test_optimized_module_wraps_and_runs_its_module():
    lin = dt.nn.Linear(2, 1)
    wrapped = _dynamo.OptimizedModule(lin)
    x = dt.ones(3, 2)
    assert dt.equal(wrapped(x), lin(x)) and wrapped.in_features == 2
    assert list(wrapped.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]


def test_aten_ops_are_named_and_run():
    aten = dt.ops.aten
    assert aten.add.Tensor is aten.add.Tensor and aten.add.Tensor.name() == "aten::add.Tensor"
    assert aten.add.Tensor(dt.ones(2), dt.ones(2)).tolist() == [2.0, 2.0]
    assert aten.cat.default([dt.ones(1), dt.zeros(1)]).tolist() == [1.0, 0.0]
    with pytest.raises(NotImplementedError, match="aten::_sparse_addmm"):
        aten._sparse_addmm.default(dt.ones(1))
    with pytest.raises(AttributeError, match="'pyg' object has no attribute 'knn'"):
        dt.ops.pyg.knn  # noqa: B018 (a C++ extension's namespace, not loaded)
    from disttorch.ops import shape  # submodules still import

    assert shape.__name__ == "disttorch.ops.shape"


def test_function_modes_enter_and_leave_the_stack():
    from disttorch.overrides import TorchFunctionMode, _get_current_function_mode_stack

    with TorchFunctionMode() as mode:
        assert _get_current_function_mode_stack() == [mode]
    assert _get_current_function_mode_stack() == []


def test_jit_overload_and_print_options():
    assert dt.jit._overload(len) is len
    from disttorch._tensor_str import PRINT_OPTS, _add_suffixes, _tensor_str

    assert PRINT_OPTS.threshold == 1000 and _tensor_str(dt.arange(3.0), 0) == "[0., 1., 2.]"
    assert _add_suffixes("tensor([1])", ["dtype=x"], 7, False) == "tensor([1]), dtype=x)"


@pytest.mark.parity
def test_aten_names_as_pytorch(torch):
    assert repr(dt.ops.aten.add.Tensor) == repr(torch.ops.aten.add.Tensor)
    assert repr(dt.ops.aten.add) == repr(torch.ops.aten.add)
    assert str(dt.ops.aten.add.default) == str(torch.ops.aten.add.default)


def test_top_level_script_types_and_emit_nvtx():
    assert dt.ScriptModule is dt.jit.ScriptModule and dt.ScriptFunction is dt.jit.ScriptFunction
    from disttorch.autograd.profiler import emit_nvtx

    with emit_nvtx(enabled=False):
        pass
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        with emit_nvtx():
            pass


def _jit_attributes(lib) -> list:
    """``torch.jit.Attribute``: a (value, type) pair, which a ``ScriptModule`` stores as its value
    (PyG's RGCNConv annotates with it)."""

    class Scaled(lib.jit.ScriptModule):
        def __init__(self) -> None:
            super().__init__()
            self.seen = lib.jit.Attribute([], list[int])
            self.scale = lib.jit.Attribute(2.5, float)

        @lib.jit.script_method
        def forward(self, t):
            return t * self.scale

    m = Scaled()
    pair = lib.jit.Attribute(3, int)
    return [repr(pair), pair == (3, int), pair.value, m.seen, m.scale, m(lib.ones(1)).tolist()]


def test_jit_attribute_declares_a_script_module_attribute():
    assert _jit_attributes(dt) == ["Attribute(value=3, type=<class 'int'>)", True, 3, [], 2.5, [2.5]]


def test_jit_attribute_as_pytorch(torch):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _jit_attributes(dt) == _jit_attributes(torch)
