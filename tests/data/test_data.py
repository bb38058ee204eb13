"""Datasets, samplers, collation and DataLoader (also with worker processes)."""

import linecache
import os
import time
import warnings

import numpy as np
import pytest

import disttorch as dt
from disttorch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    get_worker_info,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return {"x": np.array([i, i * i], dtype=np.float32), "y": i}


class Boom(Squares):
    def __getitem__(self, i):
        if i == 5:
            raise ValueError("bad sample 5")
        return super().__getitem__(i)


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        return iter(range(wid, self.n, nw))


def test_tensor_dataset_subset_concat_random_split():
    ds = TensorDataset(dt.arange(10), dt.arange(10) * 2)
    x, y = ds[3]
    assert x.item() == 3 and y.item() == 6 and len(ds) == 10
    assert len(Subset(ds, [1, 2])) == 2 and Subset(ds, [4])[0][0].item() == 4
    cat = ConcatDataset([ds, ds])
    assert len(cat) == 20 and cat[13][0].item() == 3
    a, b = random_split(ds, [7, 3], generator=dt.Generator().manual_seed(0))
    assert sorted(a.indices + b.indices) == list(range(10))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(dt.arange(3), dt.arange(4))
    with pytest.raises(RuntimeError, match=r"equal size, but got \[2\] at entry 0 and \[3\] at entry 1$"):
        next(iter(DataLoader([dt.ones(2), dt.ones(3)], batch_size=2)))  # (torch.stack's words)


def test_samplers_are_seeded_and_batched():
    g1, g2 = dt.Generator().manual_seed(5), dt.Generator().manual_seed(5)
    assert list(RandomSampler(range(10), generator=g1)) == list(RandomSampler(range(10), generator=g2))
    assert sorted(RandomSampler(range(10))) == list(range(10))
    assert list(BatchSampler(SequentialSampler(range(5)), 2, False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(5), 0, False)


def test_default_collate_structures():
    batch = default_collate(
        [(dt.ones(2), 1, 2.5, "a", {"k": np.zeros(3)}), (dt.zeros(2), 2, 3.5, "b", {"k": np.ones(3)})]
    )
    assert isinstance(batch, list)  # tuples collate into a list, as PyTorch's
    t, ints, floats, strs, d = batch
    assert t.shape == (2, 2) and ints.dtype == dt.int64 and floats.dtype == dt.float64
    assert strs == ("a", "b") and d["k"].shape == (2, 3)  # strings: the batch as zip gives it
    assert default_collate([{"s": "a"}, {"s": "b"}])["s"] == ["a", "b"]
    assert (
        default_collate([np.float32(1), np.float32(2)]).dtype == dt.float32
    )  # NumPy scalars keep their dtype


def test_collate_keeps_container_types():
    import collections

    class Batch(collections.UserDict):
        extra = "kept"

    out = default_collate([Batch(x=np.zeros(2)), Batch(x=np.ones(2))])
    assert type(out) is Batch and out["x"].shape == (2, 2)
    ordered = default_collate([collections.OrderedDict(b=1, a=2)] * 2)
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["b", "a"]
    from disttorch.utils.data import default_convert

    assert default_convert((np.float32(3), [np.arange(2)]))[0].dtype == dt.float32
    assert isinstance(default_convert((1, 2)), list)
    with pytest.raises(TypeError, match="found <class 'NoneType'>"):
        default_collate([None, None])


@pytest.mark.parity
def test_default_collate_matches_pytorch(torch):
    from torch.utils.data import default_collate as theirs

    def shape_of(x):
        if hasattr(x, "shape") and not isinstance(x, np.ndarray):
            return ("tensor", tuple(x.shape), str(x.dtype).split(".")[-1], x.tolist())
        if isinstance(x, dict):
            return (type(x).__name__, {k: shape_of(v) for k, v in x.items()})
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, [shape_of(v) for v in x])
        return x

    samples = [
        (np.float32(i), i, float(i), f"s{i}", {"k": np.arange(2) + i, "t": (i, "x")}, [True, i])
        for i in range(3)
    ]
    assert shape_of(default_collate(samples)) == shape_of(theirs(samples))


def test_dataloader_batches_shuffle_drop_last():
    dl = DataLoader(Squares(10), batch_size=4, drop_last=True)
    batches = list(dl)
    assert len(dl) == 2 and len(batches) == 2
    assert batches[0]["x"].shape == (4, 2) and batches[1]["y"].tolist() == [4, 5, 6, 7]
    dl = DataLoader(Squares(10), batch_size=3, shuffle=True, generator=dt.Generator().manual_seed(1))
    ys = [y for b in dl for y in b["y"].tolist()]
    assert sorted(ys) == list(range(10)) and ys != list(range(10))
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(Squares(4), sampler=range(4), shuffle=True)


@pytest.mark.timeout(60)
def test_workers_give_the_same_batches_in_order():
    single = [b["y"].tolist() for b in DataLoader(Squares(23), batch_size=4)]
    multi = [b["y"].tolist() for b in DataLoader(Squares(23), batch_size=4, num_workers=2)]
    assert multi == single


def _init_fails(worker_id):
    raise KeyError("no such key")


@pytest.mark.timeout(60)
def test_worker_exception_is_reraised_as_its_class_with_its_traceback():
    # as PyTorch's: the worker's exception class (it was RuntimeError; worker_init_fn's 'Exception')
    with pytest.raises(
        ValueError, match=r"(?s)^Caught ValueError in DataLoader worker process \d\.\nOriginal .*bad sample 5"
    ):
        list(DataLoader(Boom(10), batch_size=2, num_workers=2))
    with pytest.raises(KeyError) as raised:
        list(DataLoader(Squares(2), num_workers=1, worker_init_fn=_init_fails))
    assert str(raised.value).startswith("Caught KeyError in DataLoader worker process 0.\nOriginal Traceback")


class Dies(Dataset):
    """Its worker ends (``how``: SIGKILL, os._exit or SIGSTOP) or hangs ("hang") when it
    reaches sample 4."""

    def __init__(self, how):
        self.how = how

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == 4:
            import os
            import signal

            if self.how == "exit":
                os._exit(7)
            if self.how == "hang":
                time.sleep(600)
            os.kill(os.getpid(), signal.SIGKILL if self.how == "kill" else signal.SIGSTOP)
        return i


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("kill", r"DataLoader worker \(pid \d+\) is killed by signal: Killed\."),
        ("exit", r"DataLoader worker \(pid \d+\) exited unexpectedly with exit code 7\. Details are lost"),
    ],
    ids=["SIGKILL", "os._exit"],
)
def test_a_dead_worker_is_named_at_once_as_pytorch_names_it(how, message):
    import time

    start = time.monotonic()
    with pytest.raises(RuntimeError, match=message):
        list(DataLoader(Dies(how), batch_size=2, num_workers=2))
    assert time.monotonic() - start < 3  # before: the next 5-second check


@pytest.mark.timeout(60)
def test_a_stopped_worker_times_out_and_is_killed(monkeypatch):
    """SIGTERM never ends a stopped process: ending the iterator hung in its join."""
    import disttorch.utils.data.dataloader as loader

    monkeypatch.setattr(loader, "_WORKER_JOIN_S", 0.2)
    it = iter(DataLoader(Dies("stop"), batch_size=2, num_workers=2, timeout=0.5))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(it)


@pytest.mark.timeout(60)
def test_a_hung_worker_fails_the_pass_at_its_timeout_not_five_seconds_later():
    """The failing pass stopped its workers waiting 5 s for the hung one to leave."""
    it = iter(DataLoader(Dies("hang"), batch_size=2, num_workers=2, timeout=0.5))
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(it)
    assert time.monotonic() - start < 2.5


def _thread_states(pid):
    """The state letter of each thread of ``pid`` (``T``: stopped by a signal); none once it ended."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:  # the process ended
        return []
    states = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:  # the thread ended
            pass
    return states


def stop_every_thread(pid):
    """SIGSTOP ``pid`` and return once all its threads have stopped. ``kill`` only queues the
    stop: one thread takes it when it next runs and only then stops the others, so a thread
    woken meanwhile (the resource sharer, by the receiver's connection) could still hand
    over a tensor on a loaded machine."""
    import signal

    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 10
    while any(s != "T" for s in _thread_states(pid)) and time.monotonic() < deadline:
        time.sleep(0.001)


class StopsItsSender:
    """Unpickled in the main process, it stops (SIGSTOP) the worker that pickled it."""

    def __init__(self):
        self.pid = os.getpid()

    def __reduce__(self):
        return (stop_every_thread, (self.pid,))


def stop_then_tensor(batch):
    return StopsItsSender(), dt.tensor(batch)


@pytest.mark.timeout(30)
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads thread states from /proc")
def test_a_worker_stopped_before_its_tensor_is_received_still_times_out(monkeypatch):
    """A tensor crosses in shared memory, which the receiver asks its sender for: a worker
    stopped between sending a batch and that request froze the loader in ``Queue.get``,
    past its timeout (seen in CI: the worker stopped itself at its next sample)."""
    import disttorch.multiprocessing  # noqa: F401  (tensors cross in shared memory)
    import disttorch.utils.data.dataloader as loader

    monkeypatch.setattr(loader, "_WORKER_JOIN_S", 0.2)
    loader_ = DataLoader(
        list(range(4)), batch_size=2, num_workers=1, timeout=0.5, collate_fn=stop_then_tensor
    )
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(loader_)


@pytest.mark.timeout(30)
@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads process states from /proc")
def test_dropping_an_iterator_whose_workers_are_stopped_ends_them_at_once():
    """Each stopped worker was given 5 s to leave, one after the other: 10 s for two."""
    import signal
    import time

    it = iter(DataLoader(list(range(64)), batch_size=2, num_workers=2))
    next(it)
    me = os.getpid()
    kids = [int(c) for c in open(f"/proc/{me}/task/{me}/children").read().split()]
    for pid in kids:
        os.kill(pid, signal.SIGSTOP)
    while not all(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "T" for pid in kids):
        time.sleep(0.01)
    start = time.monotonic()
    del it
    assert time.monotonic() - start < 2
    assert open(f"/proc/{me}/task/{me}/children").read().split() == []


class ThreadCounts(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return dt.get_num_threads()


@pytest.mark.timeout(60)
def test_workers_run_their_ops_on_one_thread_as_pytorchs():
    before = dt.get_num_threads()
    dt.set_num_threads(2)
    try:
        counts = [b.tolist() for b in DataLoader(ThreadCounts(), batch_size=2, num_workers=1)]
        assert counts == [[1, 1]]
        assert dt.get_num_threads() == 2  # the main process keeps its own
    finally:
        dt.set_num_threads(before)


@pytest.mark.timeout(60)
def test_iterable_dataset_with_workers_uses_worker_info():
    out = sorted(x for b in DataLoader(Stream(10), batch_size=3, num_workers=2) for x in b.tolist())
    assert out == list(range(10))


class Pids(Stream):
    def __iter__(self):
        return ((os.getpid(), x) for x in super().__iter__())


@pytest.mark.timeout(60)
def test_persistent_workers_outlive_a_pass_even_one_stopped_early():
    loader = DataLoader(Pids(6), batch_size=None, num_workers=2, persistent_workers=True)
    first = next(iter(loader))  # stopped early: its prefetched batches are dropped on the next pass
    passes = [list(loader) for _ in range(2)]
    assert all(sorted(x for _, x in p) == list(range(6)) for p in passes)  # each pass restarts the stream
    pids = {pid for p in passes for pid, _ in p}
    assert len(pids) == 2 and first[0] in pids  # the same two processes throughout
    it = iter(loader)
    it._shutdown_workers()
    assert loader._pool is None and sorted(x for _, x in loader) == list(range(6))


def test_distributed_sampler_pads_shards_and_reshuffles_per_epoch():
    ds = list(range(10))
    shards = [list(DistributedSampler(ds, num_replicas=4, rank=r, shuffle=False)) for r in range(4)]
    assert [len(s) for s in shards] == [3] * 4
    assert sorted(sum(shards, [])) == sorted(list(range(10)) + [0, 1])
    s = DistributedSampler(ds, num_replicas=2, rank=0, seed=3)
    e0 = list(s)
    s.set_epoch(1)
    e1 = list(s)
    assert e0 != e1 and len(e0) == 5
    both = list(DistributedSampler(ds, 2, 0, seed=3)) + list(DistributedSampler(ds, 2, 1, seed=3))
    assert sorted(both) == ds
    assert len(DistributedSampler(ds, 4, 0, drop_last=True)) == 2
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(ds, 2, 2)


def _before_init_process_group(L) -> list:
    """What DistributedSampler and DDP raise when no process group exists yet."""
    out = []
    for make in (
        lambda: L.utils.data.DistributedSampler([0, 1]),
        lambda: L.nn.parallel.DistributedDataParallel(L.nn.Linear(2, 2)),
    ):
        with pytest.raises(Exception) as info:
            make()
        out.append((type(info.value), str(info.value)))
    return out


def test_sampler_and_ddp_before_init_process_group_raise_valueerror():
    for kind, text in _before_init_process_group(dt):
        assert kind is ValueError and text.startswith("Default process group has not been initialized")


@pytest.mark.parity
def test_sampler_and_ddp_before_init_process_group_as_pytorch(torch):
    for (kind, text), (torch_kind, torch_text) in zip(
        _before_init_process_group(dt), _before_init_process_group(torch)
    ):
        assert kind is torch_kind and text.startswith(torch_text), (text, torch_text)


class _DyingWorker:
    """A worker process as the loader sees it, alive until ``dies_at`` (then killed)."""

    def __init__(self, dies_at: float) -> None:
        self.dies_at, self.pid = dies_at, 4242

    def is_alive(self) -> bool:
        import time

        return time.monotonic() < self.dies_at

    @property
    def exitcode(self):
        return None if self.is_alive() else -9


def test_a_result_broken_off_waits_for_its_senders_death_to_be_visible():
    """A killed worker's connection resets a moment before it can be waited for: the loader
    raised the bare ConnectionResetError instead of naming the killed worker (seen in CI)."""
    import time

    import disttorch.utils.data.dataloader as loader

    workers = [_DyingWorker(float("inf")), _DyingWorker(time.monotonic() + 0.05)]
    loader._check_workers(workers)  # both still alive: nothing to name yet
    loader._await_a_death(workers, 5.0)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid 4242\) is killed by signal: Killed\."):
        loader._check_workers(workers)


def test_pin_memory_warning_shows_pytorchs_line_once_per_kind_of_iterator():
    loader = dt.utils.data.DataLoader(dt.utils.data.TensorDataset(dt.arange(4)), pin_memory=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):
            for _ in loader:
                pass
    assert len(caught) == 1 and "pin_memory" in str(caught[0].message)
    assert linecache.getline(caught[0].filename, caught[0].lineno).strip() == "super().__init__(loader)"
