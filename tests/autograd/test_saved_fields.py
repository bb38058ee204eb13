"""``grad_fn._saved_<name>`` / ``grad_fn._raw_saved_<name>`` (the "Hooks for saved tensors"
tutorial) and ``next_functions``, answered as PyTorch's nodes answer them."""

import numpy as np
import pytest

import disttorch as dt

# expression -> the leaves it reads; each is built with disttorch and with PyTorch
CASES = {
    "mul": lambda L, a: a["x"] * a["y"],
    "mul_number": lambda L, a: a["x"] * 3,
    "div": lambda L, a: a["x"] / a["y"],
    "atan2": lambda L, a: L.atan2(a["x"], a["y"]),
    "hypot": lambda L, a: L.hypot(a["x"], a["y"]),
    "add": lambda L, a: a["x"] + a["y"],
    "sub": lambda L, a: a["x"] - a["y"],
    "sin": lambda L, a: a["x"].sin(),
    "cos": lambda L, a: a["x"].cos(),
    "exp": lambda L, a: a["x"].exp(),
    "log": lambda L, a: a["p"].log(),
    "tanh": lambda L, a: a["x"].tanh(),
    "sigmoid": lambda L, a: a["x"].sigmoid(),
    "sqrt": lambda L, a: a["p"].sqrt(),
    "relu": lambda L, a: a["x"].relu(),
    "functional_relu": lambda L, a: L.nn.functional.relu(a["x"]),
    "pow_number": lambda L, a: a["x"].pow(2),
    "pow_tensor": lambda L, a: a["p"].pow(a["y"]),
    "number_pow": lambda L, a: 2 ** a["x"],
    "mm": lambda L, a: a["x"].mm(a["m"]),
    "matmul": lambda L, a: a["x"] @ a["m"],
    "mv": lambda L, a: a["x"] @ a["v"],
    "dot": lambda L, a: a["v"] @ a["v"],
    "sum": lambda L, a: a["x"].sum(),
    "sum_dim": lambda L, a: a["x"].sum(dim=1, keepdim=True),
    "mean": lambda L, a: a["x"].mean(),
    "mean_dim": lambda L, a: a["x"].mean(0),
    "linear": lambda L, a: L.nn.functional.linear(a["x"], a["w"], a["b"]),
    "linear_no_bias": lambda L, a: L.nn.functional.linear(a["x"], a["w"]),
    "conv2d": lambda L, a: L.nn.functional.conv2d(a["img"], a["k"], padding=1, stride=2),
    "conv2d_bias": lambda L, a: L.nn.functional.conv2d(a["img"], a["k"], a["b"][:3], dilation=2),
    "softmax": lambda L, a: a["x"].softmax(1),
    "log_softmax": lambda L, a: a["x"].log_softmax(1),
    "layer_norm": lambda L, a: L.nn.functional.layer_norm(a["x"], (4,)),
    "layer_norm_affine": lambda L, a: L.nn.functional.layer_norm(a["x"], (4,), a["v"], a["v"] * 2),
    "view": lambda L, a: a["x"].view(12),
    "reshape": lambda L, a: a["x"].reshape(2, 6),
    "transpose": lambda L, a: a["x"].transpose(0, 1),
    "permute": lambda L, a: a["x"].permute(1, 0),
    "t": lambda L, a: a["x"].t(),
    "exp2": lambda L, a: L.exp2(a["x"]),
    "cumprod": lambda L, a: a["x"].cumprod(1),
    "cumsum": lambda L, a: a["x"].cumsum(1),
    "erfcx": lambda L, a: L.special.erfcx(a["x"]),
    "i0e": lambda L, a: L.special.i0e(a["x"]),
    "i1": lambda L, a: L.special.i1(a["x"]),
    "i1e": lambda L, a: L.special.i1e(a["x"]),
    "log_ndtr": lambda L, a: L.special.log_ndtr(a["x"]),
    "ndtri": lambda L, a: L.special.ndtri(a["p"] / 3),
    "digamma": lambda L, a: a["p"].digamma(),
    "lgamma": lambda L, a: a["p"].lgamma(),
    "erfc": lambda L, a: a["x"].erfc(),
    "erfinv": lambda L, a: (a["p"] / 3).erfinv(),
    "i0": lambda L, a: a["x"].i0(),
    "entr": lambda L, a: L.special.entr(a["p"]),
    "sinc": lambda L, a: a["x"].sinc(),
    "polygamma": lambda L, a: L.polygamma(1, a["p"]),
    "logit": lambda L, a: L.logit(a["p"] / 3, eps=0.1),
    "xlogy": lambda L, a: L.xlogy(a["x"], a["p"]),
    "xlogy_number": lambda L, a: L.xlogy(2.0, a["p"]),
    "xlog1py": lambda L, a: L.special.xlog1py(a["x"], a["p"]),
    "zeta": lambda L, a: L.special.zeta(a["p"] + 1, a["p"]),
}


def _leaves(L):
    rng = np.random.default_rng(0)

    def leaf(*shape):
        return L.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)

    a = {"x": leaf(3, 4), "y": leaf(3, 4), "m": leaf(4, 2), "v": leaf(4), "w": leaf(5, 4), "b": leaf(5)}
    a["p"] = L.tensor(rng.uniform(0.5, 2, (3, 4)).astype(np.float32), requires_grad=True)
    a["img"], a["k"] = leaf(1, 2, 5, 5), leaf(3, 2, 3, 3)
    return a


def _fields(L, node):
    """Every ``_saved_*`` of ``node``: tensors as (values, shape), other values as they are."""
    out = {}
    for name in dir(node):
        if name.startswith("_saved_"):
            v = getattr(node, name)
            out[name] = (v.detach().numpy(), tuple(v.shape)) if isinstance(v, L.Tensor) else v
    return out


def _raw_names(node):
    return sorted(n for n in dir(node) if n.startswith("_raw_saved_"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_fields_match_pytorch(torch, case):
    ours = CASES[case](dt, _leaves(dt)).grad_fn
    theirs = CASES[case](torch, _leaves(torch)).grad_fn
    assert ours.name() == theirs.name()
    mine, expected = _fields(dt, ours), _fields(torch, theirs)
    assert sorted(mine) == sorted(expected)
    for name, value in expected.items():
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray):
            assert mine[name][1] == value[1], name
            np.testing.assert_allclose(mine[name][0], value[0], rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            assert mine[name] == value, name


def test_special_functions_and_scans_save_pytorchs_fields():
    a = _leaves(dt)
    names = {
        case: sorted(n for n in dir(CASES[case](dt, a).grad_fn) if n.startswith("_saved_"))
        for case in ("exp2", "cumprod", "erfcx", "ndtri", "cumsum", "logit")
    }
    assert names == {
        "exp2": ["_saved_result"],
        "cumprod": ["_saved_dim", "_saved_result", "_saved_self"],
        "erfcx": ["_saved_result", "_saved_self"],
        "ndtri": ["_saved_result"],
        "cumsum": ["_saved_dim"],
        "logit": ["_saved_eps", "_saved_self"],
    }
    node = CASES["erfcx"](dt, a).grad_fn
    assert node._saved_self is a["x"] and node._saved_result.grad_fn is node


RAW_CASES = [
    "mul",
    "div",
    "sin",
    "exp",
    "tanh",
    "sigmoid",
    "relu",
    "pow_number",
    "pow_tensor",
    "mm",
    "softmax",
    "exp2",
    "cumprod",
    "erfcx",
    "xlogy",
]


@pytest.mark.parametrize("case", RAW_CASES)
def test_raw_saved_names_match_pytorch(torch, case):
    ours = CASES[case](dt, _leaves(dt)).grad_fn
    theirs = CASES[case](torch, _leaves(torch)).grad_fn
    assert _raw_names(ours) == _raw_names(theirs)


def test_saved_input_is_the_input_and_saved_result_equals_the_output():
    x = dt.randn(5, requires_grad=True)
    y = x.pow(2)
    assert y.grad_fn._saved_self is x
    assert y.grad_fn._saved_exponent == 2
    e = x.exp()
    r = e.grad_fn._saved_result
    assert r is not e and r.equal(e) and r.grad_fn is e.grad_fn


def test_scalar_operand_is_saved_as_a_zero_dim_tensor_and_an_unneeded_one_as_none():
    x = dt.randn(3, requires_grad=True)
    node = (x * 3).grad_fn
    assert node._saved_self is None
    other = node._saved_other
    assert other.dim() == 0 and other.dtype == dt.int64 and other.item() == 3


def test_saved_tensors_raise_once_backward_freed_them_and_other_fields_stay():
    x = dt.randn(3, requires_grad=True)
    y = x.pow(2)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn._saved_self
    assert y.grad_fn._saved_exponent == 2
    with pytest.raises(RuntimeError, match="after it has been freed"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    z = x.sin()
    z.sum().backward(retain_graph=True)
    assert z.grad_fn._saved_self is x


def test_saved_tensor_modified_in_place_raises_pytorchs_error():
    x = dt.randn(3, requires_grad=True)
    a = x + 1
    y = a.sin()
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"which is output 0 of Add, is at version 1; expected version 0"):
        y.grad_fn._saved_self


def test_unknown_saved_name_is_an_attribute_error_naming_the_node():
    y = dt.randn(3, requires_grad=True).sin()
    with pytest.raises(AttributeError, match="'SinBackward0' object has no attribute '_saved_result'"):
        y.grad_fn._saved_result
    assert not hasattr(y.grad_fn, "_raw_saved_dim")
    names = [n for n in dir(y.grad_fn) if n.startswith("_saved")]
    assert names == ["_saved_self"]


def test_raw_saved_register_hooks_packs_now_and_unpacks_for_backward():
    x = dt.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x.pow(2)
    calls = []

    def pack(t):
        calls.append("pack")
        return t.detach().numpy().copy() * 10  # anything may be kept

    def unpack(kept):
        calls.append("unpack")
        return dt.tensor(kept / 10)

    raw = y.grad_fn._raw_saved_self
    assert raw is y.grad_fn._raw_saved_self
    raw.register_hooks(pack, unpack)
    assert calls == ["pack"]
    assert y.grad_fn._saved_self.equal(x.detach())  # read through the unpack hook
    assert calls == ["pack", "unpack"]
    y.sum().backward()
    assert calls == ["pack", "unpack", "unpack"]
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0, 4.0])


def test_raw_saved_hooks_decide_what_backward_reads():
    x = dt.tensor([0.0, 1.0], requires_grad=True)
    y = x.sin()  # backward reads cos(saved self)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: None, lambda _: dt.tensor([np.pi, 0.0]))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, 1.0], atol=1e-6)


def test_raw_saved_result_of_a_kept_output_takes_hooks():
    x = dt.randn(4, requires_grad=True)
    y = x.exp()
    seen = []
    y.grad_fn._raw_saved_result.register_hooks(lambda t: seen.append(t.clone()) or "key", lambda k: seen[0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy(), rtol=1e-6)


def test_raw_saved_register_hooks_errors():
    x = dt.randn(3, requires_grad=True)
    y = x * 3
    with pytest.raises(RuntimeError, match="with value None is forbidden"):
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    z = x.sin()
    with pytest.raises(TypeError, match="register_hooks"):
        z.grad_fn._raw_saved_self.register_hooks(1, 2)
    z.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="whose hooks have already been set"):
        z.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    with dt.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        w = x.sin()
    with pytest.raises(RuntimeError, match="whose hooks have already been set"):
        w.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def test_saved_field_read_under_saved_tensors_hooks_goes_through_unpack():
    x = dt.randn(3, requires_grad=True)
    unpacked = []

    def unpack(t):
        unpacked.append(1)
        return t

    with dt.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = x.exp()
    y.grad_fn._saved_result
    assert unpacked == [1]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x.detach().exp().numpy(), rtol=1e-6)


NEXT_CASES = [
    "x + 2",
    "x * 2",
    "2 * x",
    "x - 2",
    "2 - x",
    "x ** 2",
    "2 ** x",
    "x.sum(0)",
    "x.mean()",
    "x.clamp(0)",
    "torch.where(x > 0, x, 0.0)",
    "x[1:]",
    "x[0]",
    "x.unsqueeze(0)",
    "x.expand(2, 3)",
    "torch.cat([x, x])",
    "torch.stack([x, x])",
    "x.softmax(0)",
    "x.clone()",
    "x.view(3, 1)",
    "torch.nn.functional.gelu(x)",
    "torch.nn.functional.mse_loss(x, x.detach())",
    "torch.nn.functional.layer_norm(x, (3,))",
    "torch.nn.functional.conv1d(x.view(1, 1, 3), x.view(1, 1, 3))",
]


def _next_names(node):
    return [(n.name() if n is not None else None, i) for n, i in node.next_functions]


@pytest.mark.parametrize("expr", NEXT_CASES)
def test_next_functions_list_pytorchs_tensor_inputs(torch, expr):
    def build(L):
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        return eval(expr, {"torch": L, "x": x}).grad_fn

    assert _next_names(build(dt)) == _next_names(build(torch))


def test_relu_output_changed_in_place_makes_backward_raise_as_pytorch(torch):
    def attempt(L):
        x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = L.relu(x * 1)
        y.add_(1)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return str(e).split(" Hint")[0]
        return None

    assert attempt(dt) == attempt(torch) is not None
