"""Functions the RPC tests call on other workers: they travel by reference, so they live in a
module every rank imports under the same name (the test files' own modules do not)."""

from __future__ import annotations

import threading
import time

import disttorch as dt
from disttorch.distributed import rpc

#: What ``record`` has seen on this worker (read back by ``recorded``).
_seen: list = []


def add(a, b):
    return a + b


def raise_value_error(text: str) -> None:
    raise ValueError(text)


def sleep_then(seconds: float, value):
    time.sleep(seconds)
    return value


def record(value) -> None:
    _seen.append(value)


def recorded() -> list:
    return list(_seen)


@rpc.functions.async_execution
def add_later(a, b, delay: float) -> dt.futures.Future:
    """Answers from another thread, after ``delay`` seconds, without holding a worker thread."""
    fut = dt.futures.Future()
    threading.Timer(delay, lambda: fut.set_result(a + b)).start()
    return fut


class Counter:
    """A value to hold behind an RRef."""

    def __init__(self, start: int) -> None:
        self.n = start

    def increment(self, by: int) -> int:
        self.n += by
        return self.n

    @rpc.functions.async_execution
    def increment_later(self, by: int) -> dt.futures.Future:
        fut = dt.futures.Future()
        threading.Timer(0.05, lambda: fut.set_result(self.increment(by))).start()
        return fut


def sum_of_rref(rref) -> float:
    """Fetch an RRef's tensor (from its owner, wherever that is) and sum it."""
    return float(rref.to_here().sum())


def owned_count() -> int:
    from disttorch.distributed.rpc import owned

    return owned.count()


# ------------------------------------------------------------------ distributed autograd
_weight: list = []


def make_weight(values: list) -> rpc.RRef:
    """A parameter of this worker, behind an RRef."""
    _weight[:] = [dt.tensor(values, dtype=dt.float64, requires_grad=True)]
    return rpc.RRef(_weight[0])


def times_weight(x):
    """``x * w`` with this worker's parameter ``w``."""
    return x * _weight[0]


def weight_grad(context_id: int):
    return dt.distributed.autograd.get_gradients(context_id).get(_weight[0])


def weight_value():
    return _weight[0].detach().clone()


# ------------------------------------------------------------------ answers completed on the I/O thread
_kept: list = []


def keep_remote_rref(owner: str) -> None:
    """Hold, on this worker, a user RRef to a tensor that ``owner`` keeps."""
    _kept.append(rpc.remote(owner, dt.ones, args=(3,)))


@rpc.functions.async_execution
def kept_rref_after_call(other: str) -> dt.futures.Future:
    """Answer with the kept RRef once a call to ``other`` returns (its future completes on
    the I/O thread; sending the RRef on to the caller needs a call to its owner)."""
    return rpc.rpc_async(other, add, args=(1, 2)).then(lambda _f: _kept[0])


# ------------------------------------------------------------------ objects handed to a worker
_held: list = []


def hold(obj) -> None:
    """Keep ``obj`` (e.g. a RemoteModule that arrived by RPC) on this worker."""
    _held.append(obj)


def held() -> list:
    return list(_held)


def remote_module_forward(module, x):
    """Run a RemoteModule that arrived by RPC, on this worker."""
    return module.forward(x)
