"""Internal modules libraries reach for by name: ``distributed.algorithms``' join names,
``jit._recursive``'s type store, ``fx._pytree``'s ``tree_flatten_spec`` and
``autograd.profiler_legacy``'s ``profile``, answering as PyTorch's."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import pytest

import disttorch as dt
from disttorch.utils import _pytree

Pair = namedtuple("Pair", "a b")


def test_join_names_are_exported_by_algorithms():
    from disttorch.distributed.algorithms import join

    algorithms = dt.distributed.algorithms
    assert (algorithms.Join, algorithms.Joinable, algorithms.JoinHook) == (
        join.Join,
        join.Joinable,
        join.JoinHook,
    )


def test_concrete_type_store_is_an_empty_store_a_class_can_leave():
    store = dt.jit._recursive.concrete_type_store
    assert isinstance(store, dt.jit._recursive.ConcreteTypeStore)
    assert store.type_store.pop(dt.nn.Linear, None) is None and store.methods_compiled == set()


def test_tree_flatten_spec_follows_the_spec_order():
    fx_pytree = dt.fx._pytree
    _, spec = _pytree.tree_flatten(((), {"x": 1, "y": [2, Pair(3, 4)]}))
    assert fx_pytree.tree_flatten_spec(((), {"y": [5, Pair(6, 7)], "x": 8}), spec) == [8, 5, 6, 7]
    with pytest.raises(RuntimeError, match="different from expected spec"):
        fx_pytree.tree_flatten_spec(OrderedDict(b=1), _pytree.tree_flatten(OrderedDict(a=1))[1])


def test_register_pytree_flatten_spec_adds_a_type():
    fx_pytree = dt.fx._pytree

    class Box:
        def __init__(self, items: list) -> None:
            self.items = items

    _pytree.register_pytree_node(Box, lambda b: (b.items, None), lambda items, _: Box(list(items)))
    try:
        _, spec = _pytree.tree_flatten(Box([1, 2]))
        fx_pytree.register_pytree_flatten_spec(Box, lambda b, s: b.items[::-1])
        assert fx_pytree.tree_flatten_spec(Box([1, 2]), spec) == [2, 1]
        fx_pytree._deregister_pytree_flatten_spec(Box)
        assert fx_pytree.tree_flatten_spec(Box([1, 2]), spec) == [1, 2]
    finally:
        del _pytree.SUPPORTED_NODES[Box]


def test_legacy_profile_records_and_refuses_new_arguments():
    with dt.autograd.profiler_legacy.profile(record_shapes=True) as prof:
        dt.ones(2, 3).sum()
    assert any(e.key == "aten::sum" for e in prof.key_averages())
    with pytest.raises(TypeError, match="use_xpu"):
        dt.autograd.profiler_legacy.profile(use_xpu=True)


def test_cpu_build_answers_for_devices_it_lacks():
    assert dt.cuda.random.manual_seed(0) is None and dt.cuda.random.get_rng_state_all() == []
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        dt.cuda.random.get_rng_state()
    with pytest.raises(RuntimeError, match="without MPS backend"):
        dt.backends.mps.is_macos_or_newer(14, 0)
    with pytest.raises(RuntimeError, match="without MPS backend"):
        dt.backends.mps.is_macos13_or_newer()
    assert dt._C._get_privateuse1_backend_name() == "privateuseone"
    _nvtx_refuses(dt)


def _nvtx_refuses(lib):
    for call in (
        lambda: lib.cuda.nvtx.range_push("a"),
        lib.cuda.nvtx.range_pop,
        lambda: lib.cuda.nvtx.mark("a"),
    ):
        with pytest.raises(RuntimeError, match="NVTX functions not installed"):
            call()
    with pytest.raises(RuntimeError, match="NVTX functions not installed"), lib.cuda.nvtx.range("step {}", 1):
        pass
    with pytest.raises(AttributeError, match="rangeStartA"):
        lib.cuda.nvtx.range_start("a")


@pytest.mark.parity
def test_names_as_pytorch(torch):
    import torch.autograd.profiler_legacy
    import torch.fx._pytree

    assert torch.distributed.algorithms.Join.__name__ == dt.distributed.algorithms.Join.__name__
    assert isinstance(torch.jit._recursive.concrete_type_store.type_store, dict)
    _, spec = torch.utils._pytree.tree_flatten(((), {"x": 1, "y": [2, Pair(3, 4)]}))
    assert torch.fx._pytree.tree_flatten_spec(((), {"y": [5, Pair(6, 7)], "x": 8}), spec) == [8, 5, 6, 7]
    with pytest.raises(TypeError, match="use_xpu"):
        torch.autograd.profiler_legacy.profile(use_xpu=True)
    assert (
        torch.cuda.random.manual_seed(0) is None
        and torch._C._get_privateuse1_backend_name() == "privateuseone"
    )
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        torch.cuda.random.get_rng_state()
    with pytest.raises(RuntimeError, match="without MPS backend"):
        torch.backends.mps.is_macos_or_newer(14, 0)
    _nvtx_refuses(torch)
    with pytest.raises(RuntimeError, match="different from expected spec"):
        torch.fx._pytree.tree_flatten_spec(
            OrderedDict(b=1), torch.utils._pytree.tree_flatten(OrderedDict(a=1))[1]
        )
