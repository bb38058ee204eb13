"""``torch.autograd.graph.allow_mutation_on_saved_tensors``: backward reads a saved tensor's
values from before an in-place change made inside the block."""

import numpy as np
import pytest

import disttorch as dt

START = np.array([0.5, -1.5, 2.0], dtype=np.float32)


def _mutations(L):
    """Gradients of graphs whose saved tensors are changed in place before backward."""
    grads = []
    graph = L.autograd.graph
    for mutate in (
        lambda b, e: b.sin_(),
        lambda b, e: b[:2].mul_(10),  # through a view
        lambda b, e: e.zero_(),  # a saved output
    ):
        a = L.tensor(START, requires_grad=True)
        with graph.allow_mutation_on_saved_tensors():
            b = a.clone()
            e = b.exp()
            out = (b**3).sum() + e.sum()
            mutate(b, e)
            out.backward()
        grads.append(a.grad.numpy().copy())
    a = L.tensor(START, requires_grad=True)
    with graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        out = (b * b).sum()
        with L.no_grad():
            b.add_(1)
        out.backward()
    grads.append(a.grad.numpy().copy())
    return grads


def test_backward_reads_the_values_saved_before_the_mutation():
    *mutated, under_no_grad = _mutations(dt)
    for g in mutated:
        np.testing.assert_allclose(g, 3 * START**2 + np.exp(START), rtol=1e-5)
    np.testing.assert_allclose(under_no_grad, 2 * START, rtol=1e-6)


def test_gradients_match_pytorch(torch):
    for ours, theirs in zip(_mutations(dt), _mutations(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_without_the_block_a_mutated_saved_tensor_still_raises():
    a = dt.tensor(START, requires_grad=True)
    b = a.clone()
    out = (b**2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_blocks_do_not_nest_and_backward_after_the_block_raises():
    graph = dt.autograd.graph
    with pytest.raises(RuntimeError, match="allow_mutation_on_saved_tensors contexts cannot be nested"):
        with graph.allow_mutation_on_saved_tensors():
            with graph.allow_mutation_on_saved_tensors():
                pass
    a = dt.tensor(START, requires_grad=True)
    with graph.allow_mutation_on_saved_tensors() as ctx:
        assert type(ctx).__name__ == "_AllowMutationOnSavedContext"
        b = a.clone()
        out = (b**2).sum()
        b.add_(1)
    with pytest.raises(
        AssertionError, match="Trying to backward outside of the 'allow_mutation_on_saved_tensors'"
    ):
        out.backward()
    with graph.allow_mutation_on_saved_tensors():  # usable again after an error
        pass
