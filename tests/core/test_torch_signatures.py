"""PyTorch's call signatures: argument names, keyword-only arguments, the NumPy aliases
(``axis``/``keepdims``) its parser accepts, keyword forms of the size-taking methods and the
factories' ``layout``/``pin_memory``. Each call must be accepted (or refused) as PyTorch does."""

import numpy as np
import pytest

import disttorch as dt

# Calls written with keywords as users write them; X is a float (2, 3) tensor of ones.
CALLS = [
    "lib.sum(X, axis=0)",
    "X.sum(axis=0, keepdims=True)",
    "lib.mean(X, axis=1, keepdims=True)",
    "X.mean(dim=1, keepdims=True)",
    "lib.cat([X, X], axis=0)",
    "X.max(axis=0)",
    "lib.argmax(X, axis=0)",
    "X.softmax(axis=0)",
    "lib.std(X, axis=0)",
    "lib.cumsum(X, axis=0)",
    "lib.amax(X, axis=0)",
    "lib.stack([X, X], axis=1)",
    "lib.var(X, dim=0, correction=0)",
    "lib.var(X, 0, unbiased=False)",
    "X.permute(dims=(1, 0))",
    "lib.permute(X, dims=(1, 0))",
    "lib.reshape(X, shape=(3, 2))",
    "X.reshape(shape=(3, 2))",
    "X.view(size=(3, 2))",
    "X.view(lib.int32)",
    "X.expand(size=(2, 2, 3))",
    "lib.broadcast_to(X, size=(2, 2, 3))",
    "lib.swapaxes(X, axis0=0, axis1=1)",
    "X.new_zeros(size=(2,))",
    "X.new_ones(2, 3)",
    "X.new_full(size=(2,), fill_value=1.0)",
    "lib.zeros(2, layout=lib.strided)",
    "lib.zeros(size=(2,), dtype=lib.float64, requires_grad=True)",
    "lib.full((2,), 1.0, layout=lib.strided, pin_memory=False)",
    "lib.eye(2, layout=lib.strided)",
    "lib.arange(3, layout=lib.strided)",
    "lib.linspace(0, 1, steps=3, layout=lib.strided)",
    "lib.ones(2, pin_memory=False)",
    "lib.empty(2, memory_format=lib.contiguous_format)",
    "lib.rand(2, layout=lib.strided)",
    "lib.randperm(4, layout=lib.strided)",
    "lib.randint(0, 5, size=(2,))",
    "lib.zeros_like(X, dtype=lib.float64, layout=lib.strided, memory_format=lib.preserve_format)",
    "lib.squeeze(X, dim=0)",
    "X.unsqueeze(dim=0)",
    "lib.flatten(X, start_dim=0, end_dim=-1)",
    "X.transpose(dim0=0, dim1=1)",
    "lib.add(X, other=X, alpha=2)",
    "lib.clamp(X, min=0)",
    "lib.topk(X, k=1, dim=1, largest=True, sorted=True)",
    "lib.split(X, split_size_or_sections=1, dim=0)",
    "lib.chunk(X, chunks=2, dim=1)",
    "lib.sort(X, dim=0, descending=True, stable=True)",
    "lib.max(X, dim=1, keepdim=True)",
    "lib.masked_fill(X, mask=X > 0, value=0.0)",
    "X.index_select(dim=0, index=lib.tensor([0]))",
    "lib.allclose(X, X, rtol=1e-5, atol=1e-8, equal_nan=False)",
    "lib.logsumexp(X, dim=1, keepdim=False)",
    "lib.quantile(X, q=0.5, dim=0, keepdim=False, interpolation='linear')",
    "lib.div(X, X, rounding_mode='floor')",
    "lib.sum(X, dim=(0, 1), keepdim=False, dtype=lib.float64)",
    "lib.gradient(X, spacing=2.0, dim=1, edge_order=1)",
    "lib.scatter_reduce(X, 0, lib.zeros(2, 3, dtype=lib.long), X, reduce='amax', include_self=False)",
    "X.fill_diagonal_(fill_value=0.0, wrap=False)",
    "X.float(memory_format=lib.preserve_format)",
    "X.long(memory_format=lib.preserve_format)",
    "X.repeat(repeats=(2, 1))",
    "X.sum_to_size(size=(1, 3))",
    "X.new_full((2,), 1.0, layout=lib.strided)",
    "lib.promote_types(type1=lib.float32, type2=lib.int64)",
    "lib.tril_indices(3, 3, layout=lib.strided)",
    "lib.dropout(X, p=0.5, train=True)",
    "lib.alpha_dropout(X, p=0.5, train=False)",
    "lib.tensor_split(X, sections=2, dim=1)",
    "lib.tensor_split(X, indices=[1], dim=1)",
    "lib.tensor_split(X, 2, 1)",
    "X.split(split_size=1)",
    "lib.split(X, split_size_or_sections=1)",
    "X.where(X > 0, other=0.0)",
    # refused by both
    "lib.sum(X, 0, dim=0)",
    "X.reshape(3, 2, shape=(6,))",
    "lib.ones(2, pin_memory=True)",
    "lib.zeros(2, memory_format=lib.contiguous_format)",
    "lib.tensor_split(X, 2, sections=2)",
    "X.split(split_size_or_sections=1)",
    "lib.gradient(X, spacing=lib.tensor([1.0, 2.0, 3.0]))",
]


def _outcome(lib, call):
    try:
        eval(call, {"lib": lib, "X": lib.ones(2, 3)})
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception's type
        return type(e).__name__
    return "ok"


@pytest.mark.parametrize("call", CALLS)
def test_call_is_accepted_as_documented(call):
    expected = "ok" if CALLS.index(call) < CALLS.index("lib.sum(X, 0, dim=0)") else "error"
    got = _outcome(dt, call)
    assert (got == "ok") == (expected == "ok"), f"{call}: {got}"


@pytest.mark.parity
@pytest.mark.parametrize("call", CALLS)
def test_call_is_accepted_as_pytorch_accepts_it(call):
    torch = pytest.importorskip("torch")
    theirs, ours = _outcome(torch, call), _outcome(dt, call)
    assert (ours == "ok") == (theirs == "ok"), f"{call}: torch {theirs}, disttorch {ours}"


def test_numpy_aliases_give_the_same_values():
    x = dt.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(dt.sum(x, axis=0).numpy(), dt.sum(x, dim=0).numpy())
    assert tuple(x.mean(axis=1, keepdims=True).shape) == (2, 1)
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        dt.sum(x, dim=0, axis=0)


def test_layout_and_pinned_memory_errors_are_clear():
    with pytest.raises(RuntimeError, match="not implemented for layout disttorch.sparse_coo"):
        dt.zeros(2, layout=dt.sparse_coo)
    with pytest.raises(RuntimeError, match="pin_memory=True requires a CUDA or other accelerator"):
        dt.empty(2, pin_memory=True)
    with pytest.raises(TypeError, match="multiple values for argument 'size'"):
        dt.ones(2).new_zeros(2, size=(2,))
