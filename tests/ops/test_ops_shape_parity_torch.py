"""Parity with PyTorch (skipped without it): shape, indexing and in-place ops run on the
same random inputs in both libraries; values, dtypes, shapes, gradients and reprs must
agree."""
import numpy as np
import pytest

import disttorch

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

IDX = np.array([[0, 2, 1], [2, 2, 0]])
MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])

# name -> (fn(lib, *inputs), input shapes); fn may use lib-specific index tensors via `ix`.
CASES = {
    "view": (lambda L, x: x.view(4, 3), [(3, 4)]),
    "reshape": (lambda L, x: x.t().reshape(-1, 2), [(3, 4)]),
    "flatten": (lambda L, x: L.flatten(x, 1), [(2, 3, 2)]),
    "unflatten": (lambda L, x: x.unflatten(1, (2, -1)), [(3, 4)]),
    "squeeze_unsqueeze": (lambda L, x: x.squeeze(1).unsqueeze(-1), [(3, 1, 2)]),
    "transpose": (lambda L, x: x.transpose(0, 2), [(2, 3, 4)]),
    "permute": (lambda L, x: x.permute(1, 2, 0), [(2, 3, 4)]),
    "movedim": (lambda L, x: L.movedim(x, (0, 1), (2, 0)), [(2, 3, 4)]),
    "expand": (lambda L, x: x.expand(2, 3, 4), [(3, 1)]),
    "broadcast_to": (lambda L, x: L.broadcast_to(x, (2, 4)), [(4,)]),
    "repeat": (lambda L, x: x.repeat(2, 1, 3), [(2, 3)]),
    "tile": (lambda L, x: x.tile((2,)), [(2, 3)]),
    "split": (lambda L, x: x.split(2, 1)[1], [(2, 5)]),
    "split_sizes": (lambda L, x: L.split(x, [1, 3], 0)[1], [(4, 2)]),
    "chunk": (lambda L, x: x.chunk(3, 0)[2], [(5, 2)]),
    "unbind": (lambda L, x: x.unbind(1)[2], [(2, 3)]),
    "narrow": (lambda L, x: x.narrow(0, 1, 2), [(4, 2)]),
    "select": (lambda L, x: x.select(1, -1), [(3, 4)]),
    "diagonal": (lambda L, x: x.diagonal(-1), [(3, 4)]),
    "unfold": (lambda L, x: x.unfold(1, 3, 2), [(2, 8)]),
    "cat": (lambda L, a, b: L.cat([a, b], 1), [(2, 3), (2, 2)]),
    "stack": (lambda L, a, b: L.stack([a, b], -1), [(2, 3), (2, 3)]),
    "hstack": (lambda L, a, b: L.hstack([a, b]), [(2, 3), (2, 2)]),
    "vstack": (lambda L, a, b: L.vstack([a, b]), [(3,), (2, 3)]),
    "flip": (lambda L, x: x.flip((0, 1)), [(3, 2)]),
    "roll": (lambda L, x: x.roll((1, -2), (0, 1)), [(3, 4)]),
    "roll_flat": (lambda L, x: x.roll(2), [(3, 2)]),
    "tril": (lambda L, x: x.tril(1), [(3, 4)]),
    "triu": (lambda L, x: L.triu(x, -1), [(2, 3, 3)]),
    "clone": (lambda L, x: x.clone(), [(2, 3)]),
    "contiguous": (lambda L, x: x.t().contiguous(), [(2, 3)]),
    "mT": (lambda L, x: x.mT, [(2, 2, 3)]),
    "getitem_basic": (lambda L, x: x[1:, None, ..., ::2], [(3, 4)]),
    "getitem_int_list": (lambda L, x: x[[0, 0, 2], 1:], [(3, 4)]),
    "getitem_pairs": (lambda L, x: x[[0, 2, 0], [1, 1, 3]], [(3, 4)]),
    "getitem_int_then_list": (lambda L, x: x[1, :, [2, 0, 2]], [(2, 3, 4)]),
    "setitem_int_then_list": (lambda L, x, v: _setitem(x * 1, (0, slice(None), [1, 3]), v), [(2, 3, 4), (3, 2)]),
    "getitem_tensor": (lambda L, x: x[L.tensor(IDX)], [(3, 4)]),
    "getitem_mask": (lambda L, x: x[L.tensor(MASK)], [(3, 4)]),
    "getitem_row_mask": (lambda L, x: x[:, L.tensor(MASK[0])], [(3, 4)]),
    "gather": (lambda L, x: x.gather(0, L.tensor(IDX)), [(3, 3)]),
    "scatter_add": (lambda L, x, s: x.scatter_add(1, L.tensor(IDX), s), [(2, 3), (2, 3)]),
    "scatter_value": (lambda L, x: x.scatter(1, L.tensor([[0], [2]]), 1.5), [(2, 3)]),
    "index_select": (lambda L, x: x.index_select(1, L.tensor([3, 0, 3])), [(3, 4)]),
    "index_add": (lambda L, x, s: x.index_add(0, L.tensor([2, 0, 2]), s, alpha=2), [(3, 2), (3, 2)]),
    "index_fill": (lambda L, x: x.index_fill(1, L.tensor([0, 2]), -1.0), [(2, 3)]),
    "masked_fill": (lambda L, x: x.masked_fill(L.tensor(MASK), 0.5), [(3, 4)]),
    "masked_fill_bcast": (lambda L, x: x.masked_fill(L.tensor(MASK[0]), 0.5), [(3, 4)]),
    "masked_select": (lambda L, x: x.masked_select(L.tensor(MASK)), [(3, 4)]),
    "take": (lambda L, x: L.take(x, L.tensor([[0, 5], [5, 11]])), [(3, 4)]),
    "take_along_dim": (lambda L, x: L.take_along_dim(x, L.tensor([[1], [0]]), 1), [(2, 3)]),
    "setitem": (lambda L, x, v: _setitem(x * 1, (slice(None), 1), v) * x, [(3, 4), (3,)]),
    "setitem_mask": (lambda L, x, v: _setitem(x * 2, L.tensor(MASK), v), [(3, 4), ()]),
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
    "setitem_on_view": (lambda L, x, o: _setitem((x * 1)[:, 1:], (0, 1), o[0]) * o, [(3, 3), (2,)]),
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


def _setitem(t, index, value):
    t[index] = value
    return t


def _augmented(t, o):
    t += o
    t *= o
    t -= 1
    t /= 2
    return t


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_pytorch(name):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [disttorch.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_d, out_t = fn(disttorch, *ours), fn(torch, *theirs)
    assert tuple(out_d.shape) == tuple(out_t.shape)
    assert str(out_d.dtype).split(".")[-1] == str(out_t.dtype).split(".")[-1]
    np.testing.assert_allclose(out_d.detach().numpy(), out_t.detach().numpy(), rtol=1e-12, atol=1e-12)
    upstream = rng.standard_normal(tuple(out_t.shape))
    out_d.backward(disttorch.tensor(upstream))
    out_t.backward(torch.tensor(upstream))
    for i, (d, t) in enumerate(zip(ours, theirs)):
        if t.grad is None:
            assert d.grad is None or not d.grad.numpy().any(), f"input {i}"
        else:
            np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("name,make", [
    ("float_mixed", lambda L: L.tensor([[1.5, -2.25, 10.], [1e-3, 0., 7.]])),
    ("ints", lambda L: L.arange(-5, 30).view(5, 7)),
    ("bools", lambda L: L.tensor([[True, False], [False, True]])),
    ("sci", lambda L: L.tensor([1e-8, 1., 1e5])),
    ("big", lambda L: L.arange(5000.).view(50, 100) / 3),
    ("long_row", lambda L: L.linspace(-1, 1, 40)),
    ("float64_grad", lambda L: L.tensor([1., 2.], dtype=L.float64, requires_grad=True) * 2),
    ("int32", lambda L: L.tensor([1, 2], dtype=L.int32)),
    ("scalar", lambda L: L.tensor(-0.5)),
    ("empty", lambda L: L.zeros(3, 0, 2)),
    ("nan_inf", lambda L: L.tensor([float("nan"), -float("inf"), 2.])),
])
def test_repr_matches_pytorch(name, make):
    assert repr(make(disttorch)) == repr(make(torch)).replace("torch.", "disttorch.")


def test_in_place_error_messages_match_pytorch():
    def message(L, op):
        w = L.ones(3, requires_grad=True)
        try:
            op(L, w)
        except RuntimeError as e:
            return str(e).split("\n")[0]
        return None
    ops = [lambda L, w: w.add_(1), lambda L, w: w[0].mul_(2),
           lambda L, w: L.arange(3).add_(0.5), lambda L, w: L.zeros(3).add_(L.ones(2, 3))]
    for op in ops:
        assert message(disttorch, op) == message(torch, op)
