"""Interpreter and Transformer, replace_pattern, and ShapeProp."""

import pytest
from fx_models import cnn, mlp

import disttorch as dt
import disttorch.fx as fx
from disttorch.fx.passes.shape_prop import ShapeProp


def test_interpreter_runs_like_the_module_and_its_hooks_can_swap_ops():
    dt.manual_seed(0)
    gm = fx.symbolic_trace(mlp(dt))
    x = dt.randn(3, 4)
    assert fx.Interpreter(gm).run(x).tolist() == gm(x).tolist()

    class NegTanh(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            return (
                -target(*args, **kwargs) if target is dt.tanh else super().call_function(target, args, kwargs)
            )

    seen = []

    class Watch(fx.Interpreter):
        def run_node(self, n):
            seen.append(n.op)
            return super().run_node(n)

    assert NegTanh(gm).run(x).tolist() != gm(x).tolist()
    Watch(gm).run(x)
    assert seen[0] == "placeholder" and seen[-1] == "output" and len(seen) == len(gm.graph.nodes)


def test_transformer_rewrites_and_keeps_the_rest():
    gm = fx.symbolic_trace(lambda x: dt.relu(x) + 1)

    class ReluToSigmoid(fx.Transformer):
        def call_function(self, target, args, kwargs):
            return super().call_function(dt.sigmoid if target is dt.relu else target, args, kwargs)

    new = ReluToSigmoid(gm).transform()
    assert "torch.sigmoid(x)" in new.code
    assert new(dt.zeros(1)).tolist() == [1.5]


def test_replace_pattern_rewrites_every_match():
    class M(dt.nn.Module):
        def forward(self, x, w1, w2):
            m1 = dt.cat([dt.neg(w1), w2]).sum()
            m2 = dt.cat([dt.neg(w1), w2]).sum()
            return x + dt.max(m1) + dt.max(m2)

    def pattern(a1, a2):
        return dt.cat([dt.neg(a1), a2]).sum()

    def replacement(w1, w2):
        return dt.stack([w1, w2])

    gm = fx.symbolic_trace(M())
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert gm.code.splitlines()[3:6] == [
        "def forward(self, x, w1, w2):",
        "    stack = torch.stack([w1, w2])",
        "    max_1 = torch.max(stack);  stack = None",
    ]
    out = gm(dt.zeros(1), dt.ones(1), dt.full((1,), 2.0))
    assert out.tolist() == [4.0]


def test_shape_prop_records_tensor_meta():
    gm = fx.symbolic_trace(cnn(dt))
    ShapeProp(gm).propagate(dt.randn(2, 1, 4, 4))
    meta = {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes if "tensor_meta" in n.meta}
    assert tuple(meta["features_3"].shape) == (2, 4, 2, 2) and meta["features_3"].dtype == dt.float32
    assert tuple(meta["head"].shape) == (2, 5) and meta["head"].stride == (5, 1)
    assert next(iter(gm.graph.nodes)).meta["type"] is dt.Tensor


@pytest.mark.parity
def test_replace_pattern_and_shape_prop_match_pytorch(torch):
    def build(lib):
        class M(lib.nn.Module):
            def forward(self, x, w):
                return lib.relu(lib.neg(x)) + lib.relu(lib.neg(w))

        gm = lib.fx.symbolic_trace(M())
        lib.fx.replace_pattern(gm, lambda a: lib.relu(lib.neg(a)), lambda a: lib.sigmoid(a))
        return gm

    ours, theirs = build(dt), build(torch)
    assert ours.code == theirs.code
    from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

    tg = torch.fx.symbolic_trace(cnn(torch))
    TorchShapeProp(tg).propagate(torch.randn(2, 1, 4, 4))
    og = fx.symbolic_trace(cnn(dt))
    ShapeProp(og).propagate(dt.randn(2, 1, 4, 4))
    for a, b in zip(og.graph.nodes, tg.graph.nodes):
        if "tensor_meta" in b.meta:
            assert tuple(a.meta["tensor_meta"].shape) == tuple(b.meta["tensor_meta"].shape)
            assert a.meta["tensor_meta"].stride == b.meta["tensor_meta"].stride
