"""symbolic_trace: the graph and code of real modules, the traced module computing what the
eager one does (values and gradients), leaves, parameters, ``wrap``, and PyTorch's errors."""

import numpy as np
import pytest
from fx_models import (
    BUFFERED_CODE,
    FUNCTIONAL_CODE,
    MLP_CODE,
    TWO_INPUTS_CODE,
    branchy,
    buffered,
    cnn,
    functional,
    mlp,
    two_inputs,
)

import disttorch as dt
import disttorch.fx as fx


def _leaf_fn(x):
    return x * 3


fx.wrap("_leaf_fn")


def test_mlp_code_graph_and_values_match_eager():
    dt.manual_seed(0)
    model = mlp(dt)
    gm = fx.symbolic_trace(model)
    assert gm.code == MLP_CODE
    assert type(gm).__name__ == "MLP" and isinstance(gm, dt.nn.Module)
    ops = [(n.op, n.target if isinstance(n.target, str) else n.target.__name__) for n in gm.graph.nodes]
    assert ops[:5] == [
        ("placeholder", "x"),
        ("call_module", "fc1"),
        ("call_module", "act"),
        ("call_module", "fc2"),
        ("get_attr", "scale"),
    ]
    x = dt.randn(5, 4)
    np.testing.assert_allclose(gm(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)
    assert [k for k, _ in gm.named_parameters()] == [k for k, _ in model.named_parameters()]
    assert set(gm.state_dict()) == set(model.state_dict())


def test_gradients_flow_through_the_traced_module():
    dt.manual_seed(1)
    model = cnn(dt)
    gm = fx.symbolic_trace(model)
    x = dt.randn(2, 1, 4, 4, dtype=dt.float32)
    model(x).sum().backward()
    eager = {k: p.grad.clone() for k, p in model.named_parameters()}
    model.zero_grad()
    gm(x).sum().backward()
    for k, p in gm.named_parameters():  # the same parameter objects: grads land on the model
        np.testing.assert_allclose(p.grad.numpy(), eager[k].numpy(), rtol=1e-5, atol=1e-6)


def test_sequential_is_traced_through_and_nn_modules_are_leaves():
    gm = fx.symbolic_trace(cnn(dt))
    targets = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert targets == ["features.0", "features.1", "features.2", "features.3", "head"]
    assert 'getattr(self.features, "0")(x)' in gm.code
    assert "(features): Module(" in str(gm)


def test_three_spellings_of_add_and_a_traced_function():
    gm = fx.symbolic_trace(two_inputs(dt))
    assert gm.code == TWO_INPUTS_CODE
    f = fx.symbolic_trace(lambda x: dt.relu(x) + 1)
    assert f(dt.tensor([-1.0, 2.0])).tolist() == [1.0, 3.0]


def test_functional_calls_carry_their_defaults_by_keyword():
    gm = fx.symbolic_trace(functional(dt))
    assert gm.code == FUNCTIONAL_CODE
    x = dt.randn(2, 3)
    assert [t.shape for t in gm(x)] == [(2, 3), (1, 1, 1)]


def test_tensor_left_of_an_operator_records_the_tensor_method():
    model = buffered(dt)
    gm = fx.symbolic_trace(model)
    assert gm.code == BUFFERED_CODE
    x = dt.tensor([0.0, 5.0, 1.0])
    assert [t.tolist() for t in gm(x)] == [t.tolist() for t in model(x)]
    assert "buf" in dict(gm.named_buffers()) and "c" in dict(gm.named_buffers())


def test_functionals_pytorch_runs_in_cpp_are_named_as_there():
    w = dt.ones(1, 1, 3, 3)
    code = fx.symbolic_trace(lambda x: dt.nn.functional.conv2d(x, w, padding=1)).code
    assert "conv2d = torch.conv2d(x, _tensor_constant0, padding = 1)" in code


def test_wrap_records_a_call_and_the_code_says_so():
    def forward(x):
        return _leaf_fn(x) + 1

    gm = fx.symbolic_trace(forward)
    node = next(n for n in gm.graph.nodes if n.op == "call_function" and n.target is _leaf_fn)
    assert node.meta["is_wrapped"]
    assert f'torch.fx._symbolic_trace.wrap("{__name__.replace(".", "_")}__leaf_fn")' in gm.code
    assert gm(dt.ones(2)).tolist() == [4.0, 4.0]


def test_tuple_unpacking_of_a_proxy_records_getitem():
    def f(pair):
        a, b = pair
        return a - b

    gm = fx.symbolic_trace(f)
    assert "getitem = pair[0]" in gm.code and gm((dt.ones(1), dt.ones(1))).tolist() == [0.0]


def test_tensor_constant_becomes_an_attribute():
    c = dt.tensor([1.0, 2.0])
    gm = fx.symbolic_trace(lambda x: x + c)
    assert "_tensor_constant0 = self._tensor_constant0" in gm.code
    assert gm(dt.zeros(2)).tolist() == [1.0, 2.0]


def test_data_dependent_if_raises_trace_error():
    with pytest.raises(
        fx.proxy.TraceError, match="symbolically traced variables cannot be used as inputs to control flow"
    ):
        fx.symbolic_trace(branchy(dt))


def test_iteration_and_len_raise_as_in_pytorch():
    def loop(x):
        return [v for v in x]

    with pytest.raises(fx.proxy.TraceError, match="Proxy object cannot be iterated"):
        fx.symbolic_trace(loop)
    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing by default"):
        fx.symbolic_trace(lambda x: len(x))


def test_the_trace_restores_module_call_and_getattr():
    before = (dt.nn.Module.__call__, dt.nn.Module.__getattr__)
    with pytest.raises(fx.proxy.TraceError):
        fx.symbolic_trace(branchy(dt))
    assert (dt.nn.Module.__call__, dt.nn.Module.__getattr__) == before


def test_custom_tracer_lowers_relu_and_tags_nodes():
    class Lower(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return not isinstance(m, dt.nn.ReLU) and super().is_leaf_module(m, qualname)

        def create_node(self, *args, **kwargs):
            n = super().create_node(*args, **kwargs)
            n.tag = "foo"
            return n

    graph = Lower().trace(mlp(dt))
    relu = next(n for n in graph.nodes if n.op == "call_function" and n.target.__name__ == "relu")
    assert relu.target is dt.nn.functional.relu and all(n.tag == "foo" for n in graph.nodes)


@pytest.mark.parity
@pytest.mark.parametrize("build", [mlp, cnn, two_inputs, functional, buffered])
def test_code_and_graph_text_match_pytorch(torch, build):
    ours, theirs = fx.symbolic_trace(build(dt)), torch.fx.symbolic_trace(build(torch))
    assert ours.code == theirs.code
    assert str(ours.graph) == str(theirs.graph)
    assert ours.print_readable(print_output=False) == theirs.print_readable(print_output=False)


@pytest.mark.parity
def test_trace_errors_match_pytorch(torch):
    with pytest.raises(torch.fx.proxy.TraceError) as theirs:
        torch.fx.symbolic_trace(branchy(torch))
    with pytest.raises(fx.proxy.TraceError) as ours:
        fx.symbolic_trace(branchy(dt))
    assert str(ours.value) == str(theirs.value)


def _specialised(x, flag, z):
    if flag:
        x = x + 1
    return x if z is None else x * z


SPECIALISED_CODE = """


def forward(self, x, flag_1, z_1):
    eq = flag_1 == True;  flag_1 = None
    _assert = torch._assert(eq, 'flag has been specialized to have value True but got another value');  eq = _assert = None
    _assert_is_none = torch.fx._symbolic_trace._assert_is_none(z_1, 'z has been specialized to have value None but got another value');  z_1 = _assert_is_none = None
    add = x + 1;  x = None
    return add
    """


def test_concrete_args_specialise_and_check_their_values():
    gm = fx.symbolic_trace(_specialised, concrete_args={"flag": True, "z": None})
    assert gm.code == SPECIALISED_CODE
    assert gm(dt.zeros(1), True, None).tolist() == [1.0]
    with pytest.raises(
        AssertionError, match="flag has been specialized to have value True but got another value"
    ):
        gm(dt.zeros(1), False, None)
    kept = fx.symbolic_trace(_specialised, concrete_args={"flag": False, "z": fx.PH})
    assert kept(dt.ones(1), False, dt.full((1,), 3.0)).tolist() == [3.0]


@pytest.mark.parity
def test_concrete_args_code_matches_pytorch(torch):
    ours = fx.symbolic_trace(_specialised, concrete_args={"flag": True, "z": None})
    theirs = torch.fx.symbolic_trace(_specialised, concrete_args={"flag": True, "z": None})
    assert ours.code == theirs.code


def _annotated(x: dt.Tensor, y: int = 3, z: "dt.Tensor | None" = None) -> dt.Tensor:
    return x * y


def test_annotations_reach_the_signature_and_the_graph():
    from typing import List, Optional, Tuple

    def f(a: float, b: List[int], c: Optional[int] = None) -> Tuple[dt.Tensor, int]:
        return a + 1

    code = fx.symbolic_trace(f).code
    assert (
        "def forward(self, a : float, b : typing_List[int], c : typing_Union[int,NoneType] = None) -> typing_Tuple[torch.Tensor,int]:"
        in code
    )
    gm = fx.symbolic_trace(_annotated)
    assert "%x : torch.Tensor [num_users=1] = placeholder[target=x]" in str(gm.graph)
    assert gm(dt.ones(1)).tolist() == [3.0]


def test_print_readable_shows_shapes_after_shape_prop():
    from disttorch.fx.passes.shape_prop import ShapeProp

    gm = fx.symbolic_trace(lambda x: dt.relu(x).sum(0))
    ShapeProp(gm).propagate(dt.ones(4, 2))
    readable = gm.print_readable(print_output=False)
    assert (
        'def forward(self, x: "f32[4, 2]"):' in readable and 'relu: "f32[4, 2]" = torch.relu(x)' in readable
    )
    assert 'sum_1: "f32[2]" = relu.sum(0)' in readable


class _Starred(dt.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = dt.nn.Linear(2, 2)

    def forward(self, x, *args, scale: float = 2.0, **kwargs):
        return self.lin(x) * scale + args[0] + kwargs["b"]


def test_star_args_and_kwargs_become_starred_inputs():
    model = _Starred()
    gm = fx.symbolic_trace(model)
    assert gm.code.splitlines()[3:6] == [
        "def forward(self, x, scale : float = 2.0, *args, **kwargs):",
        "    _args = args",
        "    _kwargs = kwargs",
    ]
    x, y = dt.ones(1, 2), dt.full((1, 2), 3.0)
    assert gm(x, 2.0, y, b=y).tolist() == model(x, y, b=y).tolist()


@pytest.mark.parity
def test_star_args_code_matches_pytorch(torch):
    class Starred(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def forward(self, x, *args, scale: float = 2.0, **kwargs):
            return self.lin(x) * scale + args[0] + kwargs["b"]

    assert fx.symbolic_trace(_Starred()).code == torch.fx.symbolic_trace(Starred()).code


def test_traced_sequential_graph_matches_pytorch(torch):
    """A Sequential traced as the root has an unannotated placeholder, as PyTorch's."""

    class Tracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return True

    ours = Tracer().trace(dt.nn.Sequential(dt.nn.Linear(2, 3), dt.nn.ReLU()))
    theirs = torch.fx.Tracer().trace(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU()))
    assert str(ours) == str(theirs)
    assert "%input_1 : [num_users=1] = placeholder[target=input]" in str(ours)
