"""The ``*_copy`` forms of the view ops (timm calls ``torch.expand_copy``): the view's values in
fresh contiguous memory, differentiable (float64 gradcheck), and parity with PyTorch."""

import numpy as np
import pytest

import disttorch as dt
from disttorch.autograd import gradcheck

X = np.arange(24.0).reshape(2, 3, 4)

#: name, arguments after the input, for a (2, 3, 4) input
CASES = [
    ("alias_copy", ()),
    ("as_strided_copy", ((2, 2), (1, 2))),
    ("diagonal_copy", (0, 1, 2)),
    ("expand_copy", ((3, 2, 3, 4),)),
    ("narrow_copy", (2, 1, 2)),
    ("permute_copy", ((2, 0, 1),)),
    ("select_copy", (1, 2)),
    ("slice_copy", (2, 1, None, 2)),
    ("split_copy", (1, 1)),
    ("split_with_sizes_copy", ([1, 3], 2)),
    ("squeeze_copy", ()),
    ("t_copy", ()),
    ("transpose_copy", (0, 2)),
    ("unbind_copy", (1,)),
    ("unfold_copy", (2, 2, 1)),
    ("unsqueeze_copy", (1,)),
    ("view_copy", ((4, 6),)),
]


def _input(lib, name):
    x = lib.tensor(X)
    return x[0, :2, :2] if name == "t_copy" else x


@pytest.mark.parametrize("name, args", CASES)
def test_copies_hold_the_views_values_in_fresh_memory_and_pass_gradients(name, args):
    x = _input(dt, name)
    fn = getattr(dt, name)
    out = fn(x, *args)
    view = getattr(x, name[: -len("_copy")])(*args) if name not in ("alias_copy", "slice_copy") else None
    for o in out if isinstance(out, tuple) else (out,):
        assert o.is_contiguous() and o.data_ptr() != x.data_ptr()
    if view is not None and not isinstance(out, tuple):
        np.testing.assert_array_equal(out.numpy(), view.numpy())
    leaf = dt.tensor(X if name != "t_copy" else X[0, :2, :2], requires_grad=True)
    assert gradcheck(lambda t: fn(t, *args), (leaf,))


def test_special_forms():
    x = dt.tensor(X, requires_grad=True)
    assert dt.slice_copy(x, 2, 1, None, 2).shape == (2, 3, 2)
    assert dt.expand_copy(dt.ones(3), (2, 3), implicit=True).stride() == (3, 1)
    assert dt.view_copy(dt.tensor(X, dtype=dt.float32), dt.int32).dtype == dt.int32
    assert not dt.detach_copy(x).requires_grad and dt.detach_copy(x).data_ptr() != x.data_ptr()
    real = dt.view_as_real_copy(dt.ones(2, dtype=dt.complex64))
    assert real.shape == (2, 2) and dt.view_as_complex_copy(real).dtype == dt.complex64
    assert dt.tensor([1.0, 2.0, 3.0]).narrow_copy(0, 1, 2).tolist() == [2.0, 3.0]
    with pytest.raises(AttributeError, match="has no attribute 'reshape_copy'"):
        dt.reshape_copy  # noqa: B018 (reshape is not a view op)


@pytest.mark.parity
@pytest.mark.parametrize("name, args", CASES)
def test_copies_match_pytorch(torch, name, args):
    ours, theirs = (
        getattr(dt, name)(_input(dt, name), *args),
        getattr(torch, name)(_input(torch, name), *args),
    )
    assert type(ours) is type(theirs) or not isinstance(theirs, tuple)
    for o, t in zip(
        ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)
    ):
        assert o.stride() == t.stride()
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def _node_names(lib):
    x = lib.tensor(X, requires_grad=True)
    names = {}
    for name, args in CASES:
        out = getattr(lib, name)(x[0, :2, :2] if name == "t_copy" else x, *args)
        names[name] = (out[0] if isinstance(out, tuple) else out).grad_fn.name()
    return names


def test_copy_nodes_are_named_after_their_views():
    names = _node_names(dt)
    assert names["view_copy"] == "ViewBackward0_copy" and names["alias_copy"] == "AliasBackward0_copy"
    assert names["narrow_copy"] == "NarrowCopyBackward0"


@pytest.mark.parity
def test_copy_node_names_match_pytorch(torch):
    assert _node_names(dt) == _node_names(torch)
