"""Collective algorithms: pure functions over NumPy arrays and a :class:`Channel`.

One module per family, each explaining its steps and costs in its docstring:

* ``shm`` - the ranks of one host through one shared segment; the default there.
* ``hierarchical`` - ``shm`` inside each host, ring or tree between the hosts' leaders.
* ``ring`` - reduce-scatter + all-gather; bandwidth-optimal, for large buffers.
* ``tree`` - recursive doubling and binomial trees; latency-optimal, for small buffers.
* ``star`` - everything through one root; the teaching baseline; gather and scatter.
* ``pairwise`` - all-to-all.
* ``deterministic`` - reductions in rank order, independent of the algorithm.
* ``select`` - picks one by collective, size, world size and hosts (``DISTTORCH_ALGORITHM``,
  ``DISTTORCH_DETERMINISTIC``); the entry points re-exported here choose and run::

      from disttorch.distributed import algorithms
      algorithms.all_reduce(ch, buf, np.add)             # automatic choice
      algorithms.ring.all_reduce(ch, buf, np.add)        # a given algorithm

* ``join`` - ``Join``, ``Joinable``, ``JoinHook``: training with uneven inputs across ranks.
* ``channel`` - the :class:`Channel` protocol, the in-memory :class:`ThreadChannel` (whose
  ranks can share a board, as if on hosts) and :class:`SubChannel`.
"""

from . import channel, deterministic, hierarchical, pairwise, ring, select, shm, star, tree
from .channel import Channel, SubChannel, ThreadChannel, ThreadWorld, run_threads
from .join import Join, Joinable, JoinHook
from .select import (
    all_gather,
    all_reduce,
    all_to_all,
    barrier,
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
    "Join",
    "JoinHook",
    "Joinable",
    "ThreadChannel",
    "ThreadWorld",
    "SubChannel",
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
    "barrier",
    "channel",
    "deterministic",
    "hierarchical",
    "pairwise",
    "ring",
    "select",
    "shm",
    "star",
    "tree",
]
