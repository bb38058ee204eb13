"""``utils.data.datapipes`` (``IterDataPipe``, ``IterableWrapper``, the buffer ``Shuffler``) and
``graph_settings``: PyTorch's shuffle order for a seed, the DataLoader's ``shuffle=`` switch and
per-epoch seeding, and the class accelerate's batch dispatcher imports."""

import pytest

import disttorch as dt
from disttorch.utils.data import DataLoader, IterableDataset, graph_settings
from disttorch.utils.data.datapipes.iter import IterableWrapper, Shuffler
from disttorch.utils.data.datapipes.iter.combinatorics import ShufflerIterDataPipe


def test_shuffler_gives_pytorchs_order_and_passes_through_when_off():
    dt.manual_seed(0)
    pipe = IterableWrapper(range(20)).shuffle(buffer_size=5)
    assert isinstance(pipe, ShufflerIterDataPipe) and isinstance(pipe, IterableDataset) and len(pipe) == 20
    # PyTorch 2.13's orders: each pass reseeds from the global generator
    assert list(pipe) == [1, 2, 0, 7, 6, 8, 3, 10, 9, 13, 5, 14, 4, 11, 16, 15, 17, 12, 19, 18]
    assert list(pipe) == [1, 5, 3, 2, 7, 8, 9, 0, 10, 4, 12, 15, 6, 11, 13, 16, 19, 14, 17, 18]
    assert list(Shuffler(IterableWrapper(range(8))).set_seed(3)) == [3, 5, 6, 1, 4, 7, 2, 0]
    assert graph_settings.apply_shuffle_settings(pipe, shuffle=False) is pipe and list(pipe) == list(
        range(20)
    )
    with pytest.raises(AssertionError, match="buffer_size should be larger than 0"):
        Shuffler(IterableWrapper([]), buffer_size=0)


def test_dataloader_switches_and_seeds_the_shufflers():
    dt.manual_seed(0)
    loader = DataLoader(IterableWrapper(range(6)).shuffle(), batch_size=4, shuffle=True)
    assert [b.tolist() for b in loader] == [[4, 0, 3, 5], [2, 1]]  # PyTorch 2.13's, reseeded
    assert [b.tolist() for b in loader] == [[3, 4, 0, 2], [5, 1]]  # every epoch
    plain = DataLoader(IterableWrapper(range(6)).shuffle(), batch_size=6, shuffle=False)
    assert [b.tolist() for b in plain] == [[0, 1, 2, 3, 4, 5]]
    with pytest.warns(UserWarning, match="does not contain a `Shuffler`. Adding one at the end"):
        added = DataLoader(IterableWrapper(range(3)), shuffle=True)
    assert isinstance(added.dataset, ShufflerIterDataPipe)
    nested = IterableWrapper([Shuffler(IterableWrapper([1])), {"k": Shuffler(IterableWrapper([2]))}])
    assert sum(isinstance(p, ShufflerIterDataPipe) for p in graph_settings.get_all_graph_pipes(nested)) == 2
