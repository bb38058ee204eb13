"""Collective algorithms: pure functions over NumPy arrays and a :class:`Channel`.

One module per family, each explaining its steps and costs in its docstring:

* ``ring`` - reduce-scatter + all-gather; bandwidth-optimal, for large buffers.
* ``tree`` - recursive doubling and binomial trees; latency-optimal, for small buffers.
* ``star`` - everything through one root; the teaching baseline; gather and scatter.
* ``pairwise`` - all-to-all.
* ``deterministic`` - reductions in rank order, independent of the algorithm.
* ``select`` - picks one by collective, size and world size (``DISTTORCH_ALGORITHM``,
  ``DISTTORCH_DETERMINISTIC``); the entry points re-exported here choose and run::

      from disttorch.distributed import algorithms
      algorithms.all_reduce(ch, buf, np.add)             # automatic choice
      algorithms.ring.all_reduce(ch, buf, np.add)        # a given algorithm

* ``channel`` - the :class:`Channel` protocol and the in-memory :class:`ThreadChannel`.
"""

from . import channel, deterministic, pairwise, ring, select, star, tree
from .channel import Channel, ThreadChannel, ThreadWorld, run_threads
from .select import (
    all_gather,
    all_reduce,
    all_to_all,
    broadcast,
    choose,
    gather,
    reduce,
    reduce_scatter,
    resolve,
    scatter,
)

__all__ = [
    "Channel",
    "ThreadChannel",
    "ThreadWorld",
    "run_threads",
    "choose",
    "resolve",
    "all_reduce",
    "reduce_scatter",
    "all_gather",
    "broadcast",
    "reduce",
    "gather",
    "scatter",
    "all_to_all",
    "channel",
    "deterministic",
    "pairwise",
    "ring",
    "select",
    "star",
    "tree",
]
