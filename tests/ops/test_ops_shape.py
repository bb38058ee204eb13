"""Shape ops: values, view semantics (shared memory and version counter), gradients
(float64 finite-difference checks) and PyTorch's error messages; meshgrid; parity with
PyTorch when it is installed."""

import numpy as np
import pytest
from parity_helpers import PARITY_RNG, assert_case_matches, assert_values_and_gradients_match

import disttorch as dt
from disttorch.autograd import gradcheck, gradgradcheck


def dbl(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return dt.tensor(rng.standard_normal(shape), dtype=dt.float64, requires_grad=True)


# ---------------------------------------------------------------------- values
def test_view_and_reshape_infer_minus_one():
    x = dt.arange(24)
    assert x.view(2, -1, 4).shape == (2, 3, 4)
    assert x.reshape((4, -1)).shape == (4, 6)
    assert x.view(-1).shape == (24,)
    np.testing.assert_array_equal(x.view(4, 6).numpy(), np.arange(24).reshape(4, 6))


def test_view_errors():
    x = dt.arange(6)
    with pytest.raises(RuntimeError, match=r"shape '\[4, -1\]' is invalid for input of size 6"):
        x.view(4, -1)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.view(2, 3).t().view(6)


def test_views_share_memory_and_version_counter():
    x = dt.zeros(2, 3)
    for v in (
        x.view(6),
        x.reshape(3, 2),
        x.t(),
        x.transpose(0, 1),
        x.permute(1, 0),
        x[0],
        x.unsqueeze(0),
        x.squeeze(),
        x.narrow(1, 0, 2),
        x.select(0, 1),
        x.flatten(),
        x.unflatten(1, (3, 1)),
        x.movedim(0, 1),
        x.diagonal(),
    ):
        before = x._version
        assert np.shares_memory(v.numpy(), x.numpy())
        v.add_(1)
        assert x._version == before + 1
    # split / chunk / unbind pieces are views too
    for pieces in (x.split(1, 1), x.chunk(2, 1), x.unbind(0)):
        before = x._version
        pieces[-1].mul_(2)
        assert x._version == before + 1
        assert np.shares_memory(pieces[0].numpy(), x.numpy())


def test_reshape_of_non_viewable_tensor_copies():
    x = dt.arange(6.0).view(2, 3)
    y = x.t().reshape(6)
    assert not np.shares_memory(y.numpy(), x.numpy())
    np.testing.assert_array_equal(y.numpy(), [0, 3, 1, 4, 2, 5])
    y.add_(1)
    assert x._version == 0


def test_copies_do_not_share_memory():
    x = dt.arange(6.0).view(2, 3)
    for y in (
        x.flip(0),
        x.roll(1, 1),
        x.repeat(1, 1),
        x.clone(),
        x.tril(),
        x.triu(),
        dt.cat([x]),
        dt.stack([x])[0],
    ):
        assert not np.shares_memory(y.numpy(), x.numpy())


def test_flatten_unflatten_squeeze_unsqueeze():
    x = dt.zeros(2, 1, 3, 4)
    assert x.flatten().shape == (24,)
    assert x.flatten(1).shape == (2, 12)
    assert x.flatten(1, 2).shape == (2, 3, 4)
    assert dt.flatten(x, start_dim=-2).shape == (2, 1, 12)
    assert dt.tensor(3.0).flatten().shape == (1,)
    assert x.unflatten(3, (2, 2)).shape == (2, 1, 3, 2, 2)
    assert x.unflatten(-1, (-1, 2)).shape == (2, 1, 3, 2, 2)
    assert x.squeeze().shape == (2, 3, 4)
    assert x.squeeze(1).shape == (2, 3, 4)
    assert x.squeeze(0).shape == (2, 1, 3, 4)
    assert x.squeeze((0, 1)).shape == (2, 3, 4)
    assert x.unsqueeze(-1).shape == (2, 1, 3, 4, 1)
    assert x.unsqueeze(0).shape == (1, 2, 1, 3, 4)
    with pytest.raises(
        IndexError,
        match=r"Dimension out of range \(expected to be in range of "
        r"\[-5, 4\], but got 5\)",
    ):
        x.unsqueeze(5)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        x.flatten(2, 1)
    with pytest.raises(RuntimeError, match="don't multiply up to the size of dim"):
        x.unflatten(3, (3, 2))


def test_transpose_permute_movedim_t():
    x = dt.arange(24).view(2, 3, 4)
    assert x.transpose(0, 2).shape == (4, 3, 2)
    assert x.permute(2, 0, 1).shape == (4, 2, 3)
    assert x.permute((1, 2, 0)).shape == (3, 4, 2)
    assert x.movedim(0, -1).shape == (3, 4, 2)
    assert dt.movedim(x, (0, 1), (2, 0)).shape == (3, 4, 2)
    np.testing.assert_array_equal(
        dt.movedim(x, (0, 1), (2, 0)).numpy(), np.moveaxis(x.numpy(), (0, 1), (2, 0))
    )
    assert x.mT.shape == (2, 4, 3)
    assert x.T.shape == (4, 3, 2)
    assert dt.arange(3).t().shape == (3,)
    with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
        x.t()
    with pytest.raises(RuntimeError, match="duplicate dims are not allowed"):
        x.permute(0, 0, 1)
    with pytest.raises(RuntimeError, match="number of dimensions in the tensor input does not match"):
        x.permute(0, 1)


def test_expand_broadcast_to_repeat_tile():
    x = dt.tensor([[1], [2]])
    assert x.expand(2, 3).tolist() == [[1, 1, 1], [2, 2, 2]]
    assert x.expand(4, -1, 3).shape == (4, 2, 3)
    assert x.expand_as(dt.zeros(2, 5)).shape == (2, 5)
    assert dt.broadcast_to(x, (3, 2, 2)).shape == (3, 2, 2)
    assert x.repeat(2, 3).tolist() == [[1, 1, 1], [2, 2, 2], [1, 1, 1], [2, 2, 2]]
    assert x.repeat(2, 1, 1).shape == (2, 2, 1)
    assert dt.tensor([1, 2]).tile((2,)).tolist() == [1, 2, 1, 2]
    assert x.tile((2,)).shape == (2, 2)
    with pytest.raises(
        RuntimeError,
        match=r"The expanded size of the tensor \(3\) must match the "
        r"existing size \(2\) at non-singleton dimension 0",
    ):
        x.expand(3, 3)
    with pytest.raises(RuntimeError, match="the number of sizes provided"):
        x.expand(3)
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be smaller"):
        x.repeat(2)


def test_split_chunk_unbind_narrow_select():
    x = dt.arange(10)
    assert [p.tolist() for p in x.split(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [p.tolist() for p in dt.split(x, [2, 3, 5])] == [[0, 1], [2, 3, 4], [5, 6, 7, 8, 9]]
    assert [len(p) for p in x.chunk(3)] == [4, 4, 2]
    assert [len(p) for p in dt.arange(6).chunk(4)] == [2, 2, 2]  # fewer chunks, as PyTorch
    m = dt.arange(6).view(2, 3)
    assert [r.tolist() for r in m.unbind(1)] == [[0, 3], [1, 4], [2, 5]]
    assert m.narrow(1, 1, 2).tolist() == [[1, 2], [4, 5]]
    assert m.narrow(1, -2, 2).tolist() == [[1, 2], [4, 5]]
    assert m.select(1, -1).tolist() == [2, 5]
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly to 10"):
        x.split([3, 3])
    with pytest.raises(RuntimeError, match=r"start \(1\) \+ length \(3\) exceeds dimension size \(3\)"):
        m.narrow(1, 1, 3)
    with pytest.raises(IndexError, match="select\\(\\): index 3 out of range"):
        m.select(1, 3)


def test_cat_stack_hstack_vstack():
    a, b = dt.ones(2, 3), dt.zeros(2, 2)
    assert dt.cat([a, b], 1).shape == (2, 5)
    assert dt.cat((a, a), dim=-2).shape == (4, 3)
    assert dt.cat([a, dt.tensor([])], 0).shape == (2, 3)  # legacy empty tensors skipped
    assert dt.cat([dt.tensor([1]), dt.tensor([2.5])]).dtype == dt.float32
    assert dt.stack([a, a]).shape == (2, 2, 3)
    assert dt.stack([a, a], dim=2).shape == (2, 3, 2)
    assert dt.stack([a, a], -1).shape == (2, 3, 2)
    assert dt.hstack([dt.ones(2), dt.ones(3)]).shape == (5,)
    assert dt.vstack([dt.ones(3), dt.ones(3)]).shape == (2, 3)
    with pytest.raises(
        RuntimeError,
        match="Sizes of tensors must match except in dimension 0. "
        "Expected size 3 but got size 2 for tensor number 1",
    ):
        dt.cat([a, b], 0)
    with pytest.raises(RuntimeError, match="Tensors must have same number of dimensions: got 2 and 1"):
        dt.cat([a, dt.ones(3)])
    with pytest.raises(ValueError, match=r"torch\.cat\(\): expected a non-empty list of Tensors"):
        dt.cat([])
    for name, said in [
        ("stack", "stack"),
        ("hstack", "hstack"),
        ("dstack", "dstack"),
        ("row_stack", "vstack"),
    ]:
        with pytest.raises(RuntimeError, match=f"^{said} expects a non-empty TensorList$"):
            getattr(dt, name)([])
    with pytest.raises(
        RuntimeError,
        match=r"stack expects each tensor to be equal size, but got "
        r"\[2, 3\] at entry 0 and \[2, 2\] at entry 1",
    ):
        dt.stack([a, b])


def test_flip_roll_tril_triu():
    m = dt.arange(9).view(3, 3)
    assert m.flip(0).tolist() == [[6, 7, 8], [3, 4, 5], [0, 1, 2]]
    assert m.flip((0, 1)).tolist() == [[8, 7, 6], [5, 4, 3], [2, 1, 0]]
    assert dt.fliplr(m)[0].tolist() == [2, 1, 0]
    assert m.roll(1, 1).tolist() == [[2, 0, 1], [5, 3, 4], [8, 6, 7]]
    assert m.roll(1).tolist() == [[8, 0, 1], [2, 3, 4], [5, 6, 7]]
    assert m.roll((1, -1), (0, 1)).tolist() == [[7, 8, 6], [1, 2, 0], [4, 5, 3]]
    assert m.tril().tolist() == [[0, 0, 0], [3, 4, 0], [6, 7, 8]]
    assert m.triu(1).tolist() == [[0, 1, 2], [0, 0, 5], [0, 0, 0]]
    assert dt.tril(m, -1).tolist() == [[0, 0, 0], [3, 0, 0], [6, 7, 0]]
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        dt.arange(3).tril()


def test_unfold_windows():
    x = dt.arange(7.0)
    assert x.unfold(0, 3, 2).tolist() == [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0], [4.0, 5.0, 6.0]]
    m = dt.arange(12).view(2, 6)
    assert m.unfold(1, 2, 2).shape == (2, 3, 2)
    assert np.shares_memory(m.unfold(1, 2, 2).numpy(), m.numpy())
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1 is 6 but size is 7"):
        m.unfold(1, 7, 1)


def test_diag_and_triangle_indices():
    assert dt.diag(dt.tensor([1, 2])).tolist() == [[1, 0], [0, 2]]
    assert dt.diag(dt.tensor([1, 2]), -1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    m = dt.arange(6).view(2, 3)
    d = m.diag(1)
    assert d.tolist() == [1, 5] and not np.shares_memory(d.numpy(), m.numpy())
    assert dt.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert dt.triu_indices(2, 3, 1).tolist() == [[0, 0, 1], [1, 2, 2]]
    assert dt.triu_indices(2, 2).dtype == dt.int64


def test_clone_and_contiguous():
    x = dt.arange(6.0).view(2, 3)
    assert x.contiguous() is x and x.is_contiguous()
    t = x.t()
    assert not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.tolist() == t.tolist()
    y = dbl(2, 3)
    assert y.clone().grad_fn.name() == "CloneBackward0"
    assert y.t().contiguous().grad_fn.name() == "CloneBackward0"


# ---------------------------------------------------------------------- gradients
GRAD_CASES = {
    "view": (lambda x: x.view(3, 4), (4, 3)),
    "reshape_minus_one": (lambda x: x.reshape(-1, 2), (3, 4)),
    "reshape_copy": (lambda x: x.t().reshape(-1), (3, 4)),
    "flatten": (lambda x: x.flatten(1), (2, 3, 2)),
    "unflatten": (lambda x: x.unflatten(1, (2, 2)), (3, 4)),
    "squeeze": (lambda x: x.squeeze(1), (3, 1, 2)),
    "unsqueeze": (lambda x: x.unsqueeze(1), (3, 2)),
    "transpose": (lambda x: x.transpose(0, 2) * dt.arange(24.0).view(4, 3, 2).double(), (2, 3, 4)),
    "permute": (lambda x: x.permute(2, 0, 1), (2, 3, 4)),
    "movedim": (lambda x: x.movedim(0, 2), (2, 3, 4)),
    "expand": (lambda x: x.expand(4, 3, 2), (3, 1)),
    "expand_as": (lambda x: x.expand_as(dt.zeros(2, 3)), (3,)),
    "broadcast_to": (lambda x: dt.broadcast_to(x, (2, 3, 3)), (1, 3)),
    "repeat": (lambda x: x.repeat(2, 1, 3), (2, 3)),
    "tile": (lambda x: x.tile((2,)), (2, 3)),
    "split_int": (lambda x: x.split(2, 1)[1] * 3, (2, 5)),
    "split_sizes": (lambda x: dt.split(x, [1, 3], 0), (4, 2)),
    "chunk": (lambda x: x.chunk(3, 0)[2], (5, 2)),
    "unbind": (lambda x: x.unbind(1), (2, 3)),
    "narrow": (lambda x: x.narrow(0, 1, 2), (4, 2)),
    "select": (lambda x: x.select(1, 2), (3, 4)),
    "diagonal": (lambda x: x.diagonal(1), (3, 4)),
    "flip": (lambda x: x.flip((0, 1)), (3, 2)),
    "roll": (lambda x: x.roll((1, -2), (0, 1)), (3, 4)),
    "roll_flat": (lambda x: x.roll(2), (3, 2)),
    "tril": (lambda x: x.tril(), (3, 3)),
    "triu": (lambda x: x.triu(-1), (2, 3, 3)),
    "clone": (lambda x: x.clone(), (2, 3)),
    "contiguous": (lambda x: x.t().contiguous(), (2, 3)),
    "mT": (lambda x: x.mT, (2, 2, 3)),
    "T": (lambda x: x.T, (2, 3)),
    "t": (lambda x: x.t(), (2, 3)),
    "swapaxes": (lambda x: x.swapaxes(0, 1), (2, 3)),
    "ravel": (lambda x: x.t().ravel(), (2, 3)),
    "view_as": (lambda x: x.view_as(dt.zeros(3, 2)), (2, 3)),
    "reshape_as": (lambda x: x.t().reshape_as(dt.zeros(6)), (2, 3)),
    "fliplr_flipud": (lambda x: dt.flipud(dt.fliplr(x)), (2, 3)),
    "moveaxis": (lambda x: x.moveaxis(-1, 0), (2, 3, 2)),
    "diag_vector": (lambda x: dt.diag(x, 1), (3,)),
    "diag_matrix": (lambda x: x.diag(-1), (3, 4)),
    "unfold_overlapping": (lambda x: x.unfold(1, 3, 2), (2, 7)),
    "unfold_disjoint": (lambda x: x.unfold(0, 2, 2), (5, 2)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(name):
    fn, shape = GRAD_CASES[name]
    assert gradcheck(fn, (dbl(*shape),))


def test_gradcheck_cat_stack_several_inputs():
    a, b, c = dbl(2, 3), dbl(2, 1, seed=1), dbl(2, 2, seed=2)
    assert gradcheck(lambda a, b, c: dt.cat([a, b, c], 1), (a, b, c))
    assert gradcheck(lambda a, b: dt.stack([a, b * 2], 1), (a, dbl(2, 3, seed=3)))
    assert gradcheck(lambda a, b: dt.hstack([a, b]), (a, b))
    assert gradcheck(lambda a: dt.vstack([a, a]), (a,))


def test_second_order_through_shape_ops():
    x = dbl(2, 3)
    assert gradgradcheck(lambda x: (x.t().reshape(-1) ** 2).view(3, 2).flip(0) * x.t(), (x,))
    assert gradgradcheck(lambda x: dt.cat(x.split(1, 1)[::-1], 1) ** 3, (x,))


def test_unused_split_pieces_get_zero_gradient():
    x = dbl(6)
    a, b, c = x.split(2)
    (b * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 2, 2, 0, 0])


def test_grad_fn_names_follow_pytorch():
    x = dbl(2, 3)
    assert x.view(6).grad_fn.name() == "ViewBackward0"
    assert x.permute(1, 0).grad_fn.name() == "PermuteBackward0"
    assert x.expand(2, 2, 3).grad_fn.name() == "ExpandBackward0"
    assert x.unsqueeze(0).grad_fn.name() == "UnsqueezeBackward0"
    assert dt.cat([x, x]).grad_fn.name() == "CatBackward0"
    assert dt.stack([x, x]).grad_fn.name() == "StackBackward0"


# ---------------------------------------------------------------------- parity with PyTorch
# name -> (fn(lib, *leaves), input shapes)
PARITY_CASES = {
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
}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(PARITY_CASES))
def test_op_matches_pytorch(name):
    assert_case_matches(name, *PARITY_CASES[name])


# ---------------------------------------------------------------------- meshgrid
RNG = np.random.default_rng(7)


def leaf(arr):
    return dt.tensor(np.asarray(arr, dtype=np.float64), requires_grad=True)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_values(indexing):
    a, b, c = np.arange(3.0), np.arange(4.0) + 10, np.arange(2.0) - 5
    outs = dt.meshgrid(dt.tensor(a), dt.tensor(b), dt.tensor(c), indexing=indexing)
    refs = np.meshgrid(a, b, c, indexing=indexing)
    assert len(outs) == 3
    for o, r in zip(outs, refs):
        np.testing.assert_array_equal(o.numpy(), r)
    two = dt.meshgrid([dt.tensor(a), dt.tensor(b)], indexing=indexing)
    for o, r in zip(two, np.meshgrid(a, b, indexing=indexing)):
        np.testing.assert_array_equal(o.numpy(), r)


def test_meshgrid_views_0_dim_and_default_indexing():
    a, b = dt.tensor([1, 2, 3]), dt.tensor([4, 5])
    x, y = dt.meshgrid(a, b, indexing="ij")
    assert x._base is a and y._base is b and x.stride() == (1, 0)
    assert [t.shape for t in dt.meshgrid(dt.tensor(3), b, indexing="ij")] == [(1, 2), (1, 2)]
    assert dt.meshgrid(a, indexing="xy")[0].tolist() == [1, 2, 3]
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        x2, _ = dt.meshgrid(a, b)
    assert x2.shape == (3, 2)


def test_meshgrid_errors():
    a = dt.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match='indexing must be one of "xy" or "ij", but received: foo'):
        dt.meshgrid(a, a, indexing="foo")
    with pytest.raises(RuntimeError, match="meshgrid expects all tensors to have the same dtype"):
        dt.meshgrid(a, a.double(), indexing="ij")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        dt.meshgrid(a, dt.ones(2, 2, dtype=dt.int64), indexing="ij")
    with pytest.raises(RuntimeError, match="meshgrid expects a non-empty TensorList"):
        dt.meshgrid(indexing="ij")


def test_meshgrid_gradcheck():
    a, b, c = leaf(RNG.normal(size=3)), leaf(RNG.normal(size=4)), leaf(RNG.normal(size=2))
    for indexing in ("ij", "xy"):
        assert gradcheck(lambda u, v, w: dt.meshgrid(u, v, w, indexing=indexing), (a, b, c))


PARITY_GRAD = {  # name: (fn(lib, *float64 leaves), inputs)
    "meshgrid_xy": (
        lambda L, a, b: L.stack(L.meshgrid(a, b, indexing="xy")) * 1.0,
        [PARITY_RNG.normal(size=3), PARITY_RNG.normal(size=4)],
    ),
}


@pytest.mark.parity
@pytest.mark.parametrize("name", list(PARITY_GRAD))
def test_values_and_gradients_match_torch(name):
    assert_values_and_gradients_match(*PARITY_GRAD[name])


@pytest.mark.parity
def test_expand_strides_and_writes_as_pytorch(torch):
    """``expand`` has PyTorch's strides (a new size-1 dim strides over the rest, a stretched
    dim has stride 0); writing into it works unless an element shows twice."""
    seen = []
    for lib in (dt, torch):
        base = lib.arange(6).view(2, 3)
        views = [base.expand(1, 2, 3), base[:, :1].expand(2, 4, 2, -1), lib.arange(3).expand(2, 1, 3)]
        buf = lib.arange(5).expand((1, -1))
        buf.copy_(lib.ones(1, 5, dtype=lib.int64) * 7)  # no element repeats: allowed, written through
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            lib.zeros(3, 1).expand(3, 2).copy_(lib.ones(3, 2))
        seen.append(([v.stride() for v in views], buf.tolist()))
    assert seen[0] == seen[1]


@pytest.mark.parity
def test_repeated_and_missing_dims_are_refused_as_pytorch(torch):
    calls = [
        lambda L: L.ones(2, 1, 3).sum((0, -3)),
        lambda L: L.ones(2, 1, 3).squeeze((1, -2)),
        lambda L: L.ones(2, 3).flip((1, 1)),
        lambda L: L.ones(2, 3).rot90(1, (0, -2)),
        lambda L: L.ones(3).rot90(),
        lambda L: L.ones(2, 3).rot90(1, (0, 1, 1)),
        lambda L: L.tensor(2.0).size(0),
        lambda L: L.tensor(2.0).stride(-1),
        lambda L: L.tensor(2.0).unbind(0),
        lambda L: L.tensor(2.0).roll(1, 0),
    ]

    def answer(L, call):
        try:
            return call(L)
        except (RuntimeError, IndexError) as e:
            return type(e).__name__, str(e)

    for i, call in enumerate(calls):
        assert answer(dt, call) == answer(torch, call), i


def test_flip_method_takes_dims_by_keyword():
    """``t.flip(dims=...)`` (torchmetrics' signal-distortion ratio) as ``t.flip(...)``;
    no dims, or dims twice, raise PyTorch's TypeErrors."""
    m = dt.arange(6).reshape(2, 3)
    assert m.flip(dims=(-1,)).tolist() == [[2, 1, 0], [5, 4, 3]]
    assert m.flip(dims=[0, 1]).tolist() == m.flip(0, 1).tolist() == [[5, 4, 3], [2, 1, 0]]
    with pytest.raises(TypeError, match="missing 1 required positional arguments"):
        m.flip()
    with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
        m.flip(0, dims=1)


@pytest.mark.parity
def test_flip_dims_and_take_along_dim_errors_as_pytorch(torch):
    """``flip`` takes a sequence of dims (an int only among the method's varargs), by keyword
    too; ``take_along_dim`` of shapes that do not broadcast is PyTorch's RuntimeError."""
    calls = {
        "method_varargs": lambda L, x: x.flip(0, 1),
        "method_int": lambda L, x: x.flip(-1),
        "method_dims_kw": lambda L, x: x.flip(dims=[0]),
        "method_int_kw": lambda L, x: x.flip(dims=0),
        "function_int": lambda L, x: L.flip(x, 0),
        "function_tuple": lambda L, x: L.flip(x, (1,)),
        "take_along_dim": lambda L, x: L.take_along_dim(x, L.tensor([[0, 1], [1, 0]]), dim=1),
    }

    def answer(L, call):
        try:
            return call(L, L.arange(12.0).reshape(3, 4)).tolist()
        except (TypeError, RuntimeError) as e:
            return type(e).__name__

    for name, call in calls.items():
        assert answer(dt, call) == answer(torch, call), name


def test_cat_of_permuted_tensors_is_row_major_and_keeps_channels_last():
    """``cat``'s result is row-major unless every input is channels-last, as PyTorch's: a cat
    of permuted (einsum) results views as a contiguous tensor (Transformer-XL's relative shift)."""
    b = dt.randn(3, 4, 6, 2).permute(0, 2, 3, 1)
    out = dt.cat([dt.zeros(3, 1, 2, 4), b], dim=1)
    assert out.is_contiguous() and out.stride() == (56, 8, 4, 1)
    assert out.view(7, 3, 2, 4).shape == (7, 3, 2, 4)
    assert dt.cat([b, b], 1).is_contiguous()
    cl = dt.randn(2, 3, 4, 5).to(memory_format=dt.channels_last)
    assert dt.cat([cl, cl], 1).is_contiguous(memory_format=dt.channels_last)
    assert dt.cat([cl, dt.zeros(2, 3, 4, 5)], 1).is_contiguous()
