"""Datasets built from datasets: ``StackDataset``, ``ChainDataset`` (and ``+`` of iterable
datasets), and batches fetched through ``__getitems__`` (a dataset's own, ``Subset``'s,
``StackDataset``'s), as PyTorch 2.13's ``torch.utils.data``."""

import pytest

import disttorch as dt
from disttorch.utils.data import (
    ChainDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
)


class Batched(Dataset):
    """A dataset that fetches a batch in one call, as Hugging Face datasets do."""

    def __getitem__(self, i):
        return ("one", i)

    def __getitems__(self, indices):
        return [("many", i) for i in indices]

    def __len__(self):
        return 5


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def _facts(L, lib_data):
    """What a program sees, in either library (``lib_data`` is its ``utils.data``)."""
    ten = lib_data.TensorDataset(L.arange(4))
    pair = lib_data.StackDataset(ten, lib_data.TensorDataset(L.arange(4) * 2))
    named = lib_data.StackDataset(x=ten, y=lib_data.TensorDataset(L.arange(4) * 3))
    loader = lib_data.DataLoader(named, batch_size=2)
    return [
        [t.tolist() for t in sum(pair[1], ())],
        sorted(named[2]),
        [{k: [t.tolist() for t in v] for k, v in b.items()} for b in loader],
        len(pair),
    ]


def test_stack_and_chain():
    assert _facts(dt, dt.utils.data) == [
        [1, 2],
        ["x", "y"],
        [{"x": [[0, 1]], "y": [[0, 3]]}, {"x": [[2, 3]], "y": [[6, 9]]}],
        4,
    ]
    chained = Stream(2) + Stream(3)
    assert isinstance(chained, ChainDataset) and list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([TensorDataset(dt.arange(2))]))
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(TensorDataset(dt.arange(2)), TensorDataset(dt.arange(3)))
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()


def test_batches_come_through_getitems():
    every = lambda b: b  # noqa: E731 - the batch as fetched
    assert list(DataLoader(Batched(), batch_size=2, collate_fn=every))[0] == [("many", 0), ("many", 1)]
    assert list(DataLoader(Subset(Batched(), [4, 1]), batch_size=2, collate_fn=every)) == [
        [("many", 4), ("many", 1)]
    ]
    stacked = StackDataset(a=Batched(), b=TensorDataset(dt.arange(5)))
    first = list(DataLoader(stacked, batch_size=2, collate_fn=every))[0]
    assert [s["a"] for s in first] == [("many", 0), ("many", 1)]
    unbatched = list(DataLoader(Batched(), batch_size=None))[:2]  # __getitem__, converted
    assert unbatched == [["one", 0], ["one", 1]]


@pytest.mark.parity
def test_as_pytorch(torch):
    import torch.utils.data as torch_data

    assert _facts(dt, dt.utils.data) == _facts(torch, torch_data)
