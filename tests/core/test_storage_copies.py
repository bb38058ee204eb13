"""Copies of tensors that share memory, as PyTorch makes them: ``copy.deepcopy`` copies each
storage once and rebuilds every tensor over it at its offset and strides (so views still share
one storage, a stepped slice keeps its strides); a ``Parameter`` is cloned alone, without its
``.grad``; ``pickle`` keeps a tensor's whole storage, offset and strides; ``torch.save`` /
``torch.load`` keep the sharing too. Each case runs in disttorch and, when installed, PyTorch."""

import copy
import io
import pickle

import pytest

import disttorch as dt


def _layout(tensors: list) -> list:
    """Each tensor's shape, strides, storage offset and storage size, the first tensor of the
    list over the same storage (by index), and its values."""
    ptrs = [t.untyped_storage().data_ptr() for t in tensors]
    return [
        (
            tuple(t.shape),
            t.stride(),
            t.storage_offset(),
            t.untyped_storage().nbytes(),
            ptrs.index(p),
            t.tolist(),
        )
        for t, p in zip(tensors, ptrs)
    ]


def _base_and_views(L):
    base = L.arange(20.0).reshape(4, 5)
    return [base, base[1:, ::2], base[2], L.arange(100.0).reshape(10, 10)[:, ::2], L.arange(5.0).expand(3, 5)]


def _deepcopy_together(L) -> list:
    return copy.deepcopy(_base_and_views(L))


def _deepcopy_each(L) -> list:
    return [copy.deepcopy(t) for t in _base_and_views(L)]


def _grad_views(L) -> list:
    g = L.zeros(6)
    x = L.ones(3, requires_grad=True)
    x.grad = g[::2]
    x2, g2 = copy.deepcopy([x, g])
    return [x2, x2.grad, g2, copy.deepcopy(x).grad]


def _parameter_views(L) -> list:
    flat = L.arange(12.0)
    lin = L.nn.Linear(3, 3)
    lin.weight = L.nn.Parameter(flat[:9].view(3, 3))
    lin.bias = L.nn.Parameter(flat[9:])
    lin.weight.grad = L.ones(3, 3)
    lin.register_buffer("stats", flat[::3])
    twin = copy.deepcopy(L.nn.Sequential(lin, lin))
    assert twin[0] is twin[1] and twin[0].weight.grad is None
    return [twin[0].weight, twin[0].bias, twin[0].stats]


def _pickled(L) -> list:
    return pickle.loads(pickle.dumps(_base_and_views(L)))


def _saved(L) -> list:
    f = io.BytesIO()
    L.save(_base_and_views(L), f)
    f.seek(0)
    return L.load(f)


def _storage_with_tensor(L) -> list:
    base = L.arange(4.0)
    storage, view = copy.deepcopy([base.untyped_storage(), base[1:]])
    assert storage.data_ptr() == view.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()
    return [view]


CASES = [
    _deepcopy_together,
    _deepcopy_each,
    _grad_views,
    _parameter_views,
    _pickled,
    _saved,
    _storage_with_tensor,
]

# what each case gives (in PyTorch too): shape, strides, offset, storage bytes, sharing
EXPECTED = {
    _deepcopy_together: [
        ((4, 5), (5, 1), 0, 80, 0),
        ((3, 3), (5, 2), 5, 80, 0),
        ((5,), (1,), 10, 80, 0),
        ((10, 5), (10, 2), 0, 400, 3),
        ((3, 5), (0, 1), 0, 20, 4),
    ],
    _deepcopy_each: [
        ((4, 5), (5, 1), 0, 80, 0),
        ((3, 3), (5, 2), 5, 80, 1),
        ((5,), (1,), 10, 80, 2),
        ((10, 5), (10, 2), 0, 400, 3),
        ((3, 5), (0, 1), 0, 20, 4),
    ],
    _grad_views: [
        ((3,), (1,), 0, 12, 0),
        ((3,), (2,), 0, 24, 1),
        ((6,), (1,), 0, 24, 1),
        ((3,), (2,), 0, 24, 3),
    ],
    _parameter_views: [((3, 3), (3, 1), 0, 36, 0), ((3,), (1,), 0, 12, 1), ((4,), (3,), 0, 48, 2)],
    _storage_with_tensor: [((3,), (1,), 1, 16, 0)],
}
EXPECTED[_pickled] = EXPECTED[_deepcopy_each]  # kept layouts, no sharing across tensors
EXPECTED[_saved] = EXPECTED[_deepcopy_together]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_copies_keep_layouts_and_sharing(case):
    assert [g[:5] for g in _layout(case(dt))] == EXPECTED[case]


@pytest.mark.parity
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_copies_match_pytorch(torch, case):
    assert _layout(case(dt)) == _layout(case(torch))


def test_deepcopied_views_write_through_one_copy():
    base = dt.zeros(2, 3)
    b2, row = copy.deepcopy([base, base[1]])
    row.fill_(7.0)  # the copy's memory, not the original's
    assert b2.tolist() == [[0.0, 0.0, 0.0], [7.0, 7.0, 7.0]] and base.sum().item() == 0.0
    assert b2.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()


def test_copied_tensors_save_and_load():
    # a copy lies in the bytes of its storage's copy: torch.save of a 0-dim one (a Lightning
    # checkpoint's best score, deep-copied) wrote stride (1,) for size () and load refused it
    for t in (dt.tensor(3.0), dt.arange(5.0)[2], dt.randn(3, 4).t()):
        for copied in (copy.deepcopy(t), pickle.loads(pickle.dumps(t))):
            buffer = io.BytesIO()
            dt.save({"x": copied}, buffer)
            buffer.seek(0)
            loaded = dt.load(buffer)["x"]
            assert loaded.shape == t.shape and loaded.tolist() == t.tolist()


def test_pickles_of_the_former_form_still_load():
    import numpy as np

    from disttorch._tensor import _rebuild_tensor
    from disttorch.nn.parameter import _rebuild_parameter

    t = _rebuild_tensor(np.arange(3.0), True)
    p = _rebuild_parameter(np.ones((2, 2)), False, {"tag": 1})
    assert t.tolist() == [0.0, 1.0, 2.0] and t.requires_grad
    assert type(p) is dt.nn.Parameter and p.tag == 1 and not p.requires_grad


def test_deepcopy_of_a_graph_result_raises_as_pytorchs():
    x = dt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user \(graph leaves\)"):
        copy.deepcopy([x, x * 2])
    assert copy.deepcopy((x * 2).detach()).tolist() == [2.0, 2.0]


@pytest.mark.parity
def test_deepcopy_of_a_graph_result_raises_pytorchs_message(torch):
    messages = []
    for L in (dt, torch):
        with pytest.raises(RuntimeError) as info:
            copy.deepcopy(L.ones(2, requires_grad=True) * 2)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
