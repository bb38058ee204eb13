"""In-place ops: values, dtype rules, the leaf error, rebasing a non-leaf onto the new node
(gradients stay right), version counters shared with views, and the error when backward
needs a value that was overwritten; parity with PyTorch (values, gradients, messages)."""

import copy
import warnings

import numpy as np
import pytest
from parity_helpers import MASK, assert_case_matches, setitem

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
MODIFIED_MSG = (
    "one of the variables needed for gradient computation has been modified by an inplace operation"
)


def dbl(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return dt.tensor(rng.standard_normal(shape), dtype=dt.float64, requires_grad=True)


# ---------------------------------------------------------------------- values
def test_arithmetic_in_place_values_and_identity():
    x = dt.tensor([1.0, 2.0, 3.0])
    buf = x.numpy()
    assert x.add_(1) is x
    x.sub_(dt.tensor([1.0, 1.0, 1.0]), alpha=2).mul_(2).div_(4)
    np.testing.assert_allclose(x.numpy(), [0.0, 0.5, 1.0])
    assert x.numpy() is buf  # same memory throughout
    x.pow_(2)
    np.testing.assert_allclose(x.numpy(), [0.0, 0.25, 1.0])
    x.addcmul_(dt.tensor([1.0, 2.0, 3.0]), dt.tensor([2.0, 2.0, 2.0]), value=0.5)
    np.testing.assert_allclose(x.numpy(), [1.0, 2.25, 4.0])
    x.addcdiv_(dt.tensor([2.0, 2.0, 2.0]), dt.tensor([1.0, 2.0, 4.0]), value=-1)
    np.testing.assert_allclose(x.numpy(), [-1.0, 1.25, 3.5])
    x.lerp_(dt.tensor([1.0, 1.0, 1.0]), 0.5)
    np.testing.assert_allclose(x.numpy(), [0.0, 1.125, 2.25])
    assert x._version == 8


def test_addcdiv_by_zero_gives_inf_and_nan_silently():
    """As PyTorch: no NumPy warning (an Adam step on float16 whose eps underflows to 0)."""
    x = dt.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.addcdiv_(dt.tensor([1.0, -1.0, 0.0]), dt.zeros(3))
    assert x[0].item() == float("inf") and x[1].item() == float("-inf") and np.isnan(x[2].item())


def test_augmented_assignment_is_in_place():
    x = dt.ones(3)
    alias = x
    x += 1
    x *= dt.tensor([1.0, 2.0, 3.0])
    x -= 1
    x /= 2
    x **= 2
    assert x is alias
    np.testing.assert_allclose(x.numpy(), [0.25, 2.25, 6.25])
    assert x._version == 5


def test_fill_zero_copy_clamp_masked_fill():
    x = dt.empty(2, 3)
    x.fill_(2.5)
    assert x.tolist() == [[2.5] * 3] * 2
    x.zero_()
    assert x.abs().sum().item() == 0
    x.copy_(dt.tensor([1, 2, 3]))  # broadcast and cast
    assert x.tolist() == [[1.0, 2.0, 3.0]] * 2
    x.clamp_(min=1.5, max=2.5)
    assert x.tolist() == [[1.5, 2.0, 2.5]] * 2
    x.masked_fill_(dt.tensor([True, False, False]), -1.0)
    assert x.tolist() == [[-1.0, 2.0, 2.5]] * 2
    x.fill_(dt.tensor(4.0))
    assert x.tolist() == [[4.0] * 3] * 2
    i = dt.zeros(2, dtype=dt.int64)
    i.copy_(dt.tensor([1.7, -2.2]))  # copy_ may cast float to int (truncates)
    assert i.tolist() == [1, -2]


@pytest.mark.parity
def test_fills_of_expanded_tensors_write_the_shared_memory_as_pytorch(torch):
    def run(L):
        base = L.zeros(3)
        e = base.expand(2, 3)
        out = [e.fill_(2.0).stride(), base.tolist(), e.zero_().tolist(), base.tolist()]
        with pytest.warns(UserWarning, match="masked_fill_ on expanded tensors is deprecated"):
            e.masked_fill_(L.tensor([[True, False, False], [False, False, True]]), 5.0)
        out.append(base.tolist())
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            e.add_(1)
        return out

    assert run(dt) == run(torch)


def test_unary_in_place_methods():
    x = dt.tensor([0.25, 1.0, 4.0])
    x.sqrt_()
    assert x.tolist() == [0.5, 1.0, 2.0]
    x.neg_().abs_()
    assert x.tolist() == [0.5, 1.0, 2.0]
    y = dt.tensor([-1.0, 0.0, 2.0])
    y.relu_()
    assert y.tolist() == [0.0, 0.0, 2.0]
    z = dt.tensor([0.0])
    z.exp_()
    assert z.item() == 1.0


def test_every_in_place_method_matches_its_out_of_place_op():
    from disttorch.ops import inplace

    x = dt.tensor([[1.5, -2.5], [0.25, 3.0]])
    args = {
        "clamp": (-1, 1),
        "clip": (-1, 1),
        "clamp_min": (0,),
        "clamp_max": (0,),
        "fmod": (2,),
        "remainder": (2,),
        "masked_fill": (dt.tensor([True, False]), 9.0),
        "scatter": (1, dt.tensor([[1], [0]]), 7.0),
        "scatter_add": (0, dt.tensor([[1, 0]]), dt.ones(1, 2)),
        "index_add": (0, dt.tensor([1]), dt.ones(1, 2)),
        "index_fill": (1, dt.tensor([0]), -1.0),
        "index_put": ((dt.tensor([0]), dt.tensor([1])), dt.tensor(5.0)),
        "scatter_reduce": (0, dt.tensor([[1, 0], [1, 1]]), dt.ones(2, 2) * 2, "prod"),
        "index_reduce": (1, dt.tensor([0, 0]), dt.ones(2, 2) * 3, "amax"),
    }
    for name in inplace._WITH_INPLACE:
        a = args.get(name, ())
        expected = getattr(x, name)(*a)
        y = x.clone()
        assert getattr(y, name + "_")(*a) is y, name
        np.testing.assert_array_equal(y.numpy(), expected.numpy(), err_msg=name)


def test_in_place_casting_rules():
    i = dt.tensor([1, 2, 3])
    i += 2
    i *= 2
    assert i.dtype == dt.int64 and i.tolist() == [6, 8, 10]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i += 1.5
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.div_(2)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.mul_(dt.tensor([0.5, 0.5, 0.5]))
    f = dt.ones(2)
    f.add_(dt.tensor([1, 2]))  # int into float is fine; float32 stays float32
    f.add_(dt.tensor([1.0, 1.0], dtype=dt.float64))
    assert f.dtype == dt.float32 and f.tolist() == [3.0, 4.0]


def test_in_place_shape_errors():
    x = dt.zeros(3)
    with pytest.raises(
        RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"
    ):
        x.add_(dt.ones(2, 3))
    with pytest.raises(
        RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton"
    ):
        x.copy_(dt.ones(4))  # (shapes that do not broadcast at all: PyTorch's size message)
    e = dt.zeros(3, 1).expand(3, 4)
    with pytest.raises(
        RuntimeError,
        match="more than one element of the written-to tensor refers to a single memory location",
    ):
        e.add_(1)


def test_in_place_samplers_are_seeded():
    dt.manual_seed(0)
    a = dt.empty(1000)
    a.uniform_(-2, 3)
    assert -2 <= a.min().item() and a.max().item() < 3 and abs(a.mean().item() - 0.5) < 0.2
    b = dt.empty(2000).normal_(1.0, 0.5)
    assert abs(b.mean().item() - 1.0) < 0.05 and abs(b.std().item() - 0.5) < 0.05
    c = dt.empty(1000).bernoulli_(0.25)
    assert set(np.unique(c.numpy())) <= {0.0, 1.0} and abs(c.mean().item() - 0.25) < 0.05
    d = dt.empty(1000, dtype=dt.int64).random_(3, 7)
    assert set(np.unique(d.numpy())) == {3, 4, 5, 6}
    r = dt.empty(500).random_(10)
    assert r.min().item() >= 0 and r.max().item() <= 9 and np.all(r.numpy() == np.round(r.numpy()))
    e = dt.empty(2000).exponential_(2.0)
    assert e.min().item() >= 0 and abs(e.mean().item() - 0.5) < 0.05
    g1, g2 = dt.Generator().manual_seed(5), dt.Generator().manual_seed(5)
    np.testing.assert_array_equal(
        dt.empty(4).normal_(generator=g1).numpy(), dt.empty(4).normal_(generator=g2).numpy()
    )
    with pytest.raises(RuntimeError, match="uniform_ expects to return a \\[from, to\\) range"):
        dt.empty(2).uniform_(1, 0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        dt.empty(2, dtype=dt.int64).normal_()


# ---------------------------------------------------------------------- autograd rules
@pytest.mark.parametrize(
    "op",
    [
        lambda t: t.add_(1),
        lambda t: t.mul_(2),
        lambda t: t.zero_(),
        lambda t: t.fill_(1.0),
        lambda t: t.copy_(dt.ones(3)),
        lambda t: t.clamp_(0, 1),
        lambda t: t.uniform_(),
        lambda t: t.normal_(),
        lambda t: t.__iadd__(1),
        lambda t: t.__setitem__(0, 1.0),
        lambda t: t.masked_fill_(dt.tensor([True, False, True]), 0.0),
    ],
)
def test_leaf_requiring_grad_rejects_in_place_but_no_grad_allows_it(op):
    w = dt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=LEAF_MSG):
        op(w)
    with dt.no_grad():
        op(w)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None


def test_view_of_leaf_rejects_in_place():
    w = dt.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        w[0].add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used"):
        w.view(6).mul_(2)


VIEW_RULES = {  # in-place ops PyTorch refuses on views while recording a graph
    "unbind_output": lambda L, y: y.unbind(0)[1].mul_(2),
    "split_output": lambda L, y: y.split(1)[0].add_(1),
    "split_with_sizes_output": lambda L, y: y.split([1, 1])[1].zero_(),
    "chunk_single_piece": lambda L, y: y.chunk(1)[0].mul_(2),
    "view_of_unbind_output": lambda L, y: y.unbind(0)[1][1:].mul_(2),
    "no_grad_view": lambda L, y: _no_grad_view(L, y).mul_(2),
    "no_grad_view_of_no_grad_view": lambda L, y: _no_grad_view(L, _no_grad_view(L, y)).mul_(2),
    "no_grad_split_output": lambda L, y: _no_grad_view(L, y, lambda t: t.split(1)[0]).mul_(2),
    "view_of_no_grad_view": lambda L, y: _no_grad_view(L, y)[1:].mul_(2),
    "detach_view_in_place": lambda L, y: y[0].detach_(),
    "detach_plain_view_in_place": lambda L, y: L.ones(3)[1:].detach_(),
}


def _no_grad_view(L, y, make=lambda t: t[0]):
    with L.no_grad():
        return make(y)


def _no_grad_view_story(L):
    """What a view made in no_grad mode of a leaf that requires grad is, and does."""
    x = L.ones(3, requires_grad=True)
    with L.no_grad():
        v = x[1:]
        plain = L.ones(3)[1:]
    seen = [v.requires_grad, v.grad_fn is None, v.is_leaf, v._is_view(), plain.requires_grad]
    d = v.detach()
    seen += [d.requires_grad, d._is_view()]
    m = v * 2  # recorded, its gradient flows nowhere
    seen += [m.requires_grad, m.grad_fn.next_functions, v[1:].grad_fn.next_functions]
    m.sum().backward()
    seen += [x.grad, v.grad]
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        L.autograd.grad((v * 2).sum(), v)
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        v.backward(L.ones(2))
    c = copy.deepcopy(v)  # a leaf of its own
    c.backward(L.ones(2))
    seen += [c.grad.tolist(), c.is_leaf, c._is_view()]
    v.requires_grad_(False)
    seen.append(v.requires_grad)  # its base requires grad: it still does
    with L.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError) as info:
        v * 2  # its memory changed in place: it may no longer be used while recording
    seen.append(str(info.value))
    return seen


@pytest.mark.parity
def test_a_view_made_in_no_grad_mode_requires_grad_through_its_base(torch):
    assert _no_grad_view_story(dt) == _no_grad_view_story(torch)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(VIEW_RULES))
def test_in_place_on_refused_views_raises_pytorchs_error(torch, name):
    def error(L):
        y = L.ones(2, 3, requires_grad=True) * 1
        with pytest.raises(RuntimeError) as info:
            VIEW_RULES[name](L, y)
        return str(info.value)

    assert error(dt) == error(torch)


def test_refused_views_are_allowed_outside_a_recorded_graph():
    y = dt.ones(2, 3, requires_grad=True) * 1
    with dt.no_grad():
        y.unbind(0)[0].mul_(2)
        y[0].mul_(2)
    dt.ones(2, 3).split(1)[0].add_(1)  # nothing requires grad
    assert y.tolist() == [[4.0] * 3, [1.0] * 3]


def test_in_place_on_non_leaf_rebases_grad_fn():
    x = dbl(3)
    y = x * 2
    node_before = y.grad_fn
    y.add_(1)
    assert y.grad_fn is not node_before and y.grad_fn.name() == "AddBackward0"
    y.mul_(x)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    # y = (2x + 1) * x  ->  dy/dx = 4x + 1
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.detach().numpy() + 1)


def test_in_place_with_grad_only_in_the_other_operand():
    w = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    acc = dt.zeros(3)
    acc += w * 2
    acc.mul_(w)
    assert acc.requires_grad and acc.grad_fn.name() == "MulBackward0"
    acc.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 4 * w.detach().numpy())


def test_copy_into_buffer_flows_gradient_to_source():
    src = dt.tensor([1.0, 2.0], dtype=dt.float64, requires_grad=True)
    buf = dt.zeros(3, 2)
    buf.copy_(src)
    assert buf.dtype == dt.float32 and buf.grad_fn is not None
    (buf * 2).sum().backward()
    assert src.grad.dtype == dt.float64
    np.testing.assert_allclose(src.grad.numpy(), [6.0, 6.0])


def test_fill_with_tensor_value_gets_gradient():
    v = dt.tensor(3.0, requires_grad=True)
    x = dt.zeros(2, 2)
    x.fill_(v)
    (x * dt.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert v.grad.item() == 10.0


@pytest.mark.parametrize(
    "name,fn",
    [
        ("add_", lambda y, o: y.add_(o, alpha=2)),
        ("sub_", lambda y, o: y.sub_(o)),
        ("mul_", lambda y, o: y.mul_(o)),
        ("div_", lambda y, o: y.div_(o.abs() + 1)),
        ("pow_", lambda y, o: y.abs().pow_(o)),
        ("addcmul_", lambda y, o: y.addcmul_(o, o, value=0.5)),
        ("addcdiv_", lambda y, o: y.addcdiv_(o, o * o + 1)),
        ("lerp_", lambda y, o: y.lerp_(o, 0.3)),
        ("clamp_", lambda y, o: y.clamp_(-0.5, 0.5)),
        ("exp_", lambda y, o: y.exp_() * o),
        ("masked_fill_", lambda y, o: y.masked_fill_(o > 0, 1.0) * o),
        ("copy_", lambda y, o: y.copy_(o * 3) * y),
        ("setitem", lambda y, o: y.__setitem__(1, o[0]) or y * o),
        ("index_add_", lambda y, o: y.index_add_(0, dt.tensor([0, 0]), o[:2])),
        ("scatter_", lambda y, o: y.scatter_(0, dt.tensor([2, 0]), o[1:])),
    ],
)
def test_in_place_gradcheck(name, fn):
    def f(x, o):
        y = x * 1.5
        return fn(y, o)

    assert gradcheck(f, (dbl(3), dbl(3, seed=1)))


def test_version_counter_detects_modified_saved_tensor():
    x = dbl(3)
    y = x * 1
    z = y * y  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED_MSG):
        z.sum().backward()


def test_version_counter_shared_through_views():
    x = dbl(3, 2)
    y = x * 1
    z = y.exp().sum() + (y * y).sum()
    with dt.no_grad():
        y.view(6)[0] = 5.0
    with pytest.raises(RuntimeError, match=MODIFIED_MSG):
        z.backward()


def test_modified_output_that_backward_needs_raises():
    x = dbl(3)
    y = x.exp()  # exp's backward reads its own output
    y.mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED_MSG):
        y.sum().backward()


def test_optimizer_style_update_under_no_grad():
    w = dt.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with dt.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6])
    assert w.is_leaf and w.requires_grad and w.grad.tolist() == [0.0, 0.0]


def test_retain_grad_follows_in_place_rebase():
    x = dbl(3)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [1.0, 1.0, 1.0])


def test_in_place_on_view_of_non_leaf_rebases_the_base():
    x = dt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 2
    y[0].mul_(3)
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    assert x.grad.tolist() == [[6.0, 6.0, 6.0], [2.0, 2.0, 2.0]]


def test_in_place_on_view_with_gradient_from_the_other_operand():
    x = dt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 2
    v = y[:, 1]
    v.mul_(x[:, 0])
    (y * dt.arange(6.0).view(2, 3)).sum().backward()
    assert x.grad.tolist() == [[4.0, 2.0, 4.0], [46.0, 32.0, 10.0]]  # as PyTorch


def test_writing_a_view_of_a_buffer_puts_the_buffer_in_the_graph():
    a = dt.tensor([1.0, 2.0], requires_grad=True)
    buf = dt.zeros(2, 2)
    buf[1].copy_(a)
    buf[0][1] = a[0] * 5
    assert buf.requires_grad and buf.grad_fn.name() == "CopySlices"
    (buf * dt.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert a.grad.tolist() == [13.0, 4.0]


def test_view_after_in_place_is_a_fresh_view_of_the_new_base():
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    v = y.t()
    v += dt.tensor([[10.0, 0.0], [0.0, 0.0]])
    v.mul_(2)
    assert v.grad_fn.name() == "AsStridedBackward0"
    (y**2).sum().backward()
    assert y.tolist() == [[22.0, 4.0], [6.0, 8.0]] and x.grad.tolist() == [[88.0, 16.0], [24.0, 32.0]]
    r = (x * 1)[1]
    r.mul_(3)
    x.grad = None
    (r * r).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [54.0, 72.0]]


def test_in_place_on_view_of_saved_output_still_raises():
    y = dbl(4).exp()
    y.view(2, 2)[0].mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED_MSG):
        y.sum().backward()


def test_in_place_on_view_gradcheck():
    def f(x, o):
        y = x * 1.5
        y[1:, 0].mul_(o[:2])
        y.t()[2].add_(o[2])
        return y * x

    assert gradcheck(f, (dbl(3, 3), dbl(3, seed=1)))
    assert gradgradcheck(f, (dbl(3, 3), dbl(3, seed=1)))


def test_in_place_on_view_whose_base_memory_was_replaced_is_refused():
    x = dt.ones(2, 3, requires_grad=True)
    y = x * 1
    v = y[0]
    y.data = dt.zeros(5, 5)
    with pytest.raises(RuntimeError, match="the view cannot be located in its base tensor's memory"):
        v.mul_(x[0])


def test_in_place_on_view_of_a_base_not_in_c_order():
    """An einsum's result has PyTorch's permuted strides: writing through a transposed view
    of it (transformers' Longformer global attention) lands in the right elements, and the
    gradients are those of the written values."""

    def f(q, k):
        a = dt.einsum("blhd,bshd->blhs", q, k)
        b = a.transpose(1, 3)
        b[dt.tensor([0, 1]), dt.tensor([1, 0]), :, :] = -5.0
        b[:, :, 1:3, ::2] *= 2
        return b.transpose(1, 3) * 1.5

    q, k = dbl(2, 5, 3, 2), dbl(2, 2, 3, 2, seed=1)
    a = dt.einsum("blhd,bshd->blhs", q, k)
    assert not a._data.flags.c_contiguous  # the case under test
    want = a.detach().numpy().copy()
    want.transpose(0, 3, 2, 1)[[0, 1], [1, 0]] = -5.0
    want.transpose(0, 3, 2, 1)[:, :, 1:3, ::2] *= 2
    np.testing.assert_allclose(f(q, k).detach().numpy(), want * 1.5)
    assert gradcheck(f, (q, k))


def test_views_made_before_an_in_place_change_re_derive_their_graph():
    x = dt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 2
    v = y[0]
    y.mul_(3)  # v now shows 6 * x[0]
    v.sum().backward()
    assert x.grad.tolist() == [[6.0, 6.0], [0.0, 0.0]]
    x.grad = None
    y = x * 2
    v, u = y[0], y[:, 1]
    u.mul_(5)  # changes v[1] through another view
    (v * 1).sum().backward()
    assert x.grad.tolist() == [[2.0, 10.0], [0.0, 0.0]]


def test_view_of_a_parameter_after_an_optimizer_style_update():
    w = dt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    wt = w.t()
    with dt.no_grad():
        w.mul_(2)
    (wt * dt.tensor([[1.0, 10.0], [100.0, 1000.0]])).sum().backward()
    assert wt.tolist() == [[2.0, 6.0], [4.0, 8.0]]
    assert w.grad.tolist() == [[1.0, 100.0], [10.0, 1000.0]]


def test_zero_on_a_view_keeps_gradient_shapes():
    x = dbl(4, 5)
    y = x * 1.0
    y[1:].zero_()
    y.t()[0].exp_()
    ((y * y).sum()).backward()
    x0 = x.detach().numpy()[0]
    expected = np.zeros((4, 5))  # rows 1.. were overwritten; y[0, 0] = exp(x[0, 0])
    expected[0, 1:] = 2 * x0[1:]
    expected[0, 0] = 2 * np.exp(2 * x0[0])
    np.testing.assert_allclose(x.grad.numpy(), expected)


# ---------------------------------------------------------------------- parity with PyTorch
# name -> (fn(lib, *leaves), input shapes)
PARITY_CASES = {
    "add_": (lambda L, x, o: (x * 1).add_(o, alpha=3), [(3, 4), (4,)]),
    "mul_": (lambda L, x, o: (x * 1).mul_(o), [(3, 4), (3, 4)]),
    "div_": (lambda L, x, o: (x * 1).div_(o.abs() + 1), [(3, 4), (1, 4)]),
    "iadd_isub_imul": (lambda L, x, o: _augmented(x * 1, o), [(2, 3), (2, 3)]),
    "clamp_": (lambda L, x: (x * 1).clamp_(-0.5, 0.5), [(3, 4)]),
    "copy_": (lambda L, x, s: L.zeros(2, 3, dtype=x.dtype).copy_(s) * x, [(2, 3), (3,)]),
    "masked_fill_": (lambda L, x: (x * 1).masked_fill_(L.tensor(MASK), 2.0), [(3, 4)]),
    "zero_then_add": (lambda L, x, o: (x * 1).zero_().add_(o), [(2, 2), (2, 2)]),
    "in_place_on_views": (lambda L, x, o: _in_place_on_views(x, o), [(3, 3), (3,)]),
    "augmented_indexing": (lambda L, x, w: _augmented_indexing(L, x, w), [(2, 2), (2,)]),
    "setitem_on_view": (lambda L, x, o: setitem((x * 1)[:, 1:], (0, 1), o[0]) * o, [(3, 3), (2,)]),
}


def _augmented_indexing(L, x, w):
    y = x * 1
    y[0] += w
    y[:, 1] *= w
    y[L.tensor([1, 1])] -= 1
    return y * y


def _in_place_on_views(x, o):
    y = x * 1.5
    y[1:, 0].mul_(o[:2])
    y.t()[2].add_(o[2])
    y.view(-1)[4:6].clamp_(-0.2, 0.2)
    return y * x


def _augmented(t, o):
    t += o
    t *= o
    t -= 1
    t /= 2
    return t


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_CASES))
def test_op_matches_pytorch(name):
    assert_case_matches(name, *PARITY_CASES[name])


@pytest.mark.parity
def test_in_place_error_messages_match_pytorch(torch):
    def message(L, op):
        w = L.ones(3, requires_grad=True)
        try:
            op(L, w)
        except RuntimeError as e:
            return str(e).split("\n")[0]
        return None

    ops = [
        lambda L, w: w.add_(1),
        lambda L, w: w[0].mul_(2),
        lambda L, w: L.arange(3).add_(0.5),
        lambda L, w: L.zeros(3).add_(L.ones(2, 3)),
    ]
    for op in ops:
        assert message(dt, op) == message(torch, op)


@pytest.mark.parametrize("shape", [(), (3,)])
def test_in_place_change_of_a_quotient_keeps_its_backward(shape):
    """Div's backward needs its operands, not its result (as PyTorch's): scaling a loss in
    place after dividing it (transformers' Trainer does) still differentiates."""
    a = dt.full(shape, 3.0, dtype=dt.float64, requires_grad=True)
    b = dt.full(shape, 2.0, dtype=dt.float64, requires_grad=True)
    y = a / b
    y *= 4
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(shape, 2.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full(shape, -3.0))
    assert gradcheck(
        lambda p, q: p / q,
        (
            dt.rand(3, dtype=dt.float64, requires_grad=True),
            (dt.rand(3, dtype=dt.float64) + 1).requires_grad_(),
        ),
    )


@pytest.mark.parametrize("op", [lambda x: x**2, lambda x: x**0.5, lambda x: x.var()])
def test_in_place_change_of_a_result_its_backward_does_not_read(op):
    """Powers with a constant exponent and variances differentiate from their inputs (as in
    PyTorch), so their result may be changed in place before backward."""
    x = dt.tensor([1.0, 2.0, 4.0], dtype=dt.float64, requires_grad=True)
    y = op(x)
    want = dt.autograd.grad(op(x).sum() * 3, x)[0]
    y *= 3
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), want.numpy())


def _modified_messages(lib):
    """The errors of backward through tensors changed in place after they were saved."""
    messages = []
    for make, square in ((lambda u: u.exp(), False), (lambda u: lib.tanh(u), False), (lambda u: u * 1, True)):
        u = lib.randn(2, 3, requires_grad=True)
        t = make(u)
        s = t * t if square else t  # exp and tanh keep their output; a product its operands
        t.add_(1)
        with pytest.raises(RuntimeError) as info:
            s.sum().backward()
        messages.append(str(info.value))
    a, c = lib.randn(3, requires_grad=True), lib.randn(3)
    s = a * c
    c.add_(1)  # a tensor that is not the output of a node
    with pytest.raises(RuntimeError) as info:
        s.sum().backward()
    messages.append(str(info.value))
    w, x = lib.randn(2, 3, requires_grad=True), lib.randn(4, 3, requires_grad=True)
    lin = lib.nn.Linear(3, 2)
    for s in (x @ w.t(), lin(x)):  # a view changed since it was made: PyTorch regenerates its node
        with lib.no_grad():
            w.add_(1), lin.weight.add_(1)  # (the optimiser step of a GAN between two backwards)
        with pytest.raises(RuntimeError) as info:
            s.sum().backward()
        messages.append(str(info.value))
    return messages


def test_modified_message_names_type_node_and_versions():
    exp, tanh, mul, leaf, view, linear = _modified_messages(dt)
    assert "[torch.FloatTensor [2, 3]], which is output 0 of Exp, is at version 1; expected version 0" in exp
    assert "output 0 of Tanh," in tanh and "set_detect_anomaly(True, check_nan=False)" in tanh
    assert "output 0 of Add," in mul  # the node that made it now: the in-place add
    assert "[torch.FloatTensor [3]] is at version 1; expected version 0 instead. Hint" in leaf
    assert "[torch.FloatTensor [3, 2]], which is output 0 of AsStrided, is at version 1" in view
    assert "[torch.FloatTensor [3, 2]], which is output 0 of AsStrided, is at version" in linear


def test_modified_messages_match_pytorch(torch):
    assert _modified_messages(dt) == _modified_messages(torch)


def test_multi_output_view_changed_under_no_grad_cannot_be_used():
    """An ``unbind`` output whose memory changed in place (even under no_grad) cannot be
    re-derived: PyTorch's error at each use, not at the change."""
    a = dt.ones(3, requires_grad=True).clone()
    v = a.unbind(0)[0]
    with dt.no_grad():
        v.mul_(2)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="Output 0 of Unbind is a view and its base or another view"):
            v * 2
    w = a.unbind(0)[1]
    (w * 2).backward()  # (a fresh output is fine)
