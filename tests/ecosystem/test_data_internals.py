"""``torch.utils.data`` internals libraries use: the loader's iterator classes, generic
classes, ``_utils.collate`` and the ``pin_memory_device``/``in_order`` arguments."""

from __future__ import annotations

import pytest

import disttorch as dt
from disttorch.utils.data import DataLoader, Dataset, IterableDataset, Sampler, TensorDataset
from disttorch.utils.data._utils.collate import default_collate
from disttorch.utils.data.dataloader import (
    _BaseDataLoaderIter,
    _MultiProcessingDataLoaderIter,
    _SingleProcessDataLoaderIter,
)


def test_classes_are_generic():
    assert Sampler[int].__origin__ is Sampler and Dataset[int].__origin__ is Dataset
    assert DataLoader[tuple].__origin__ is DataLoader and IterableDataset[int].__origin__ is IterableDataset

    class Squares(Dataset[int]):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 3

    assert [b.tolist() for b in DataLoader(Squares(), batch_size=2)] == [[0, 1], [4]]


def test_iterating_gives_the_iterator_classes():
    loader = DataLoader(TensorDataset(dt.arange(5.0)), batch_size=2, pin_memory_device="", in_order=False)
    it = iter(loader)
    assert isinstance(it, _SingleProcessDataLoaderIter) and isinstance(it, _BaseDataLoaderIter)
    assert len(it) == 3 and [b[0].tolist() for b in it] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert it._num_yielded == 3 and loader._iterator is None
    assert default_collate([dt.ones(2), dt.zeros(2)]).shape == (2, 2)


@pytest.mark.timeout(120)
def test_worker_iterator_can_be_shut_down():
    loader = DataLoader(TensorDataset(dt.arange(8.0)), batch_size=2, num_workers=2)
    it = iter(loader)
    assert isinstance(it, _MultiProcessingDataLoaderIter)
    assert next(it)[0].tolist() == [0.0, 1.0]
    it._shutdown_workers()
    with pytest.raises(StopIteration):
        next(it)


def test_callable_type_names_of_the_loader_module():
    """``_collate_fn_t``/``_worker_init_fn_t`` (opacus imports them) are PyTorch's types."""
    from disttorch.utils.data.dataloader import _collate_fn_t, _worker_init_fn_t

    assert repr(_worker_init_fn_t) == "collections.abc.Callable[[int], None]"
    assert repr(_collate_fn_t) == "collections.abc.Callable[[list[~_T]], typing.Any]"
