"""torch.utils.swap_tensors: contents, classes, attributes and autograd state change places;
weak references, unequal slots and a graph recorded before the swap raise as in PyTorch."""

import weakref

import numpy as np
import pytest

import disttorch as dt
from disttorch.utils import swap_tensors


def test_swap_exchanges_data_class_attributes_and_gradients():
    a, b = dt.arange(2), dt.arange(3.0, requires_grad=True)
    a.note = "a"
    (b * 2).sum().backward()
    ida, idb = id(a), id(b)
    swap_tensors(a, b)
    assert (id(a), id(b)) == (ida, idb)
    np.testing.assert_array_equal(a.detach().numpy(), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(b.numpy(), [0, 1])
    assert a.requires_grad and not b.requires_grad and b.note == "a" and not hasattr(a, "note")
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0, 2.0])
    (a * 3).sum().backward()  # a fresh graph accumulates into a
    np.testing.assert_array_equal(a.grad.numpy(), [5.0, 5.0, 5.0])
    p, t = dt.nn.Parameter(dt.zeros(2)), dt.ones(2)
    swap_tensors(p, t)
    assert type(p) is dt.Tensor and type(t) is dt.nn.Parameter and t.requires_grad


def test_swap_refuses_weakrefs_and_poisons_an_earlier_graph():
    a, b = dt.zeros(2), dt.ones(2)
    ref = weakref.ref(a)
    with pytest.raises(RuntimeError, match="t1 because it has weakref"):
        swap_tensors(a, b)
    del ref
    with pytest.raises(TypeError, match="two Tensors"):
        swap_tensors(a, 3)
    leaf = dt.zeros(2, requires_grad=True)
    y = (leaf * 2).sum()
    swap_tensors(leaf, dt.ones(2))
    with pytest.raises(RuntimeError, match="poisoned by swap_tensors"):
        y.backward()


@pytest.mark.parity
def test_swap_matches_pytorch(torch):
    def run(lib):
        a, b = lib.arange(2), lib.arange(3.0)
        lib.utils.swap_tensors(a, b)
        p = lib.nn.Parameter(lib.zeros(2))
        q = lib.ones(3)
        lib.utils.swap_tensors(p, q)
        return [repr(a), repr(b), type(p).__name__, type(q).__name__, repr(p), repr(q)]

    assert run(dt) == run(torch)
