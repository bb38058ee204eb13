"""Choosing an algorithm for a collective, and running it.

:func:`choose` maps ``(collective, nbytes, world_size)`` to the name of an algorithm
family (a module of this package); :func:`resolve` returns that module's function. The
entry points at the bottom (``all_reduce(ch, buf, op)`` ...) choose and run in one call;
the process group calls them.

Automatic choice
----------------
When the channel knows its hosts and every host's ranks share memory (``ch.hosts``):

* the whole group on one host: ``shm`` (all_reduce, reduce_scatter, all_gather,
  broadcast, reduce, barrier), whatever the size: memory beats the sockets at every size;
* several hosts, one with several ranks: ``hierarchical`` for every collective (``shm``
  inside each host, the choice below between the hosts' leaders; for gather and scatter
  the leaders run an all_to_all).

Otherwise (and for gather, scatter and all_to_all on one host):

===============  ====================================  ======================================
collective       small (<= ``SMALL_MESSAGE_BYTES``)    larger
===============  ====================================  ======================================
all_reduce       tree (recursive doubling)             ring (reduce-scatter + all-gather)
reduce_scatter   tree (all-reduce, keep a block)       ring
reduce           tree (binomial)                       ring (reduce-scatter + gather)
broadcast        tree (binomial)                       ring (scatter + all-gather); 2 ranks: tree
all_gather       tree (recursive doubling)             ring
gather, scatter  star                                  star
all_to_all       pairwise                              pairwise
barrier          tree                                  tree
===============  ====================================  ======================================

Why a threshold: with per-message latency ``a`` and bandwidth ``B``, recursive doubling
all-reduce costs about ``log2(n) (a + N/B)`` and the ring ``2 (n - 1) (a + N/(n B))``.
On 4 ranks the ring catches up when ``N / B = 8 a``; with ``a`` about 40 us and ``B``
about 2 GB/s for local ZeroMQ that is near 640 KB. Measured over the ZeroMQ transport on
the 2-core development machine (best of 5, machine busy)::

    all_reduce float32   256 KiB   512 KiB   1 MiB     2 MiB     4 MiB
    2 ranks  tree        0.96 ms   1.17 ms   1.84 ms   3.35 ms   13.9 ms
             ring        1.38 ms   1.58 ms   2.12 ms   3.44 ms   5.85 ms
    4 ranks  tree        5.2 ms    3.8 ms    9.9 ms    13.7 ms   33.6 ms
             ring        6.2 ms    5.5 ms    8.1 ms    15.4 ms   19.6 ms

so the crossover lies between 512 KiB and 2 MiB on both; :data:`SMALL_MESSAGE_BYTES` is
1 MiB. ``benchmarks/collectives.py`` measures it again on a quiet machine; update the
constant from it.

Overrides
---------
* ``algorithm="ring" | "tree" | "shm" | "hierarchical" | ...`` argument: use that family;
  if it does not implement the collective, or cannot run on this group's hosts,
  ``ValueError`` says so.
* ``DISTTORCH_ALGORITHM=ring|tree|shm|hierarchical|...`` environment variable: used when no
  argument is given; collectives that family does not implement (or cannot run here)
  fall back to the automatic choice.
  ``auto`` (or unset) means the automatic choice.
* ``deterministic=True`` argument or ``DISTTORCH_DETERMINISTIC=1``: reductions
  (all_reduce, reduce_scatter, reduce) use ``deterministic.py`` whatever the algorithm
  setting, so their result does not depend on the algorithm or the world layout. Other
  collectives only copy data and are unaffected.
"""

from __future__ import annotations

import functools
import os
from types import ModuleType
from typing import Callable, Optional, Sequence

import numpy as np

from . import deterministic as _deterministic
from . import hierarchical, pairwise, ring, shm, star, tree
from .channel import Channel

#: Environment variable naming the preferred algorithm family (``auto`` if unset).
ALGORITHM_ENV = "DISTTORCH_ALGORITHM"
#: Environment variable that turns on rank-ordered reductions when set to ``1``.
DETERMINISTIC_ENV = "DISTTORCH_DETERMINISTIC"

#: Buffers up to this many bytes count as small: latency-optimal algorithms win. Measured;
#: see the module docstring.
SMALL_MESSAGE_BYTES = 1 << 20

#: Algorithm families by name.
FAMILIES: dict[str, ModuleType] = {
    "shm": shm,
    "hierarchical": hierarchical,
    "ring": ring,
    "tree": tree,
    "star": star,
    "pairwise": pairwise,
    "deterministic": _deterministic,
}

#: Collectives every family may implement, as function names.
COLLECTIVES = (
    "all_reduce",
    "reduce_scatter",
    "all_gather",
    "broadcast",
    "reduce",
    "gather",
    "scatter",
    "all_to_all",
    "barrier",
)

#: Collectives that combine values (and so depend on the order of reduction).
REDUCTIONS = frozenset({"all_reduce", "reduce_scatter", "reduce"})


def available(collective: str) -> list[str]:
    """Names of the algorithm families that implement ``collective``."""
    _check_collective(collective)
    return [name for name, module in FAMILIES.items() if hasattr(module, collective)]


def _check_collective(collective: str) -> None:
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; expected one of {COLLECTIVES}")


def _deterministic_from_env() -> bool:
    value = os.environ.get(DETERMINISTIC_ENV, "0").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{DETERMINISTIC_ENV} must be 0 or 1, got {value!r}")


Hosts = Optional[Sequence[Sequence[int]]]


def _fits(name: str, collective: str, hosts: Hosts) -> bool:
    """Whether family ``name`` implements ``collective`` and can run on this layout (``shm``:
    one host sharing memory; ``hierarchical``: hosts known, one of them with several ranks)."""
    if not hasattr(FAMILIES[name], collective):
        return False
    if name == "shm":
        return bool(hosts) and len(hosts) == 1
    if name == "hierarchical":
        return bool(hosts) and len(hosts) > 1 and max(len(h) for h in hosts) > 1
    return True


def _automatic(collective: str, nbytes: int, world_size: int, hosts: Hosts = None) -> str:
    for name in ("shm", "hierarchical"):
        if _fits(name, collective, hosts):
            return name
    small = nbytes <= SMALL_MESSAGE_BYTES
    if collective in ("all_reduce", "reduce_scatter", "reduce"):
        return "tree" if small else "ring"
    if collective == "broadcast":
        return "tree" if small or world_size <= 2 else "ring"
    if collective == "all_gather":
        return "tree" if small else "ring"
    if collective in ("gather", "scatter"):
        return "star"
    if collective == "barrier":
        return "tree"
    return "pairwise"


def choose(
    collective: str,
    nbytes: int,
    world_size: int,
    *,
    algorithm: Optional[str] = None,
    deterministic: Optional[bool] = None,
    hosts: Hosts = None,
) -> str:
    """Name the algorithm family that runs ``collective`` on ``nbytes`` over ``world_size``.

    Args:
        collective (str): one of :data:`COLLECTIVES`.
        nbytes (int): size of the buffer in bytes (per rank).
        world_size (int): number of ranks in the group.
        algorithm (str, optional): family to use; ``None`` reads ``DISTTORCH_ALGORITHM``,
            ``"auto"`` chooses automatically.
        deterministic (bool, optional): rank-ordered reductions; ``None`` reads
            ``DISTTORCH_DETERMINISTIC``.
        hosts (list of lists of int, optional): the group ranks of every host, when every
            host's ranks share memory (``ch.hosts``); ``None`` if not.

    Example::

        >>> choose("all_reduce", 64 << 20, 4)
        'ring'
        >>> choose("all_reduce", 4096, 4)
        'tree'
        >>> choose("all_reduce", 4096, 4, hosts=[[0, 1, 2, 3]])
        'shm'
        >>> choose("all_reduce", 4096, 4, hosts=[[0, 1], [2, 3]])
        'hierarchical'
    """
    _check_collective(collective)
    if deterministic is None:
        deterministic = _deterministic_from_env()
    if deterministic and collective in REDUCTIONS:
        return "deterministic"
    explicit = algorithm is not None
    if not explicit:
        algorithm = os.environ.get(ALGORITHM_ENV, "auto").strip().lower() or "auto"
    if algorithm != "auto":
        if algorithm not in FAMILIES:
            source = "algorithm" if explicit else ALGORITHM_ENV
            raise ValueError(
                f"{source}={algorithm!r} is not an algorithm; expected 'auto' or one of {sorted(FAMILIES)}"
            )
        if _fits(algorithm, collective, hosts):
            return algorithm
        if explicit and not hasattr(FAMILIES[algorithm], collective):
            raise ValueError(
                f"algorithm {algorithm!r} does not implement {collective}; use one of "
                f"{available(collective)} or 'auto'"
            )
        if explicit:
            raise ValueError(
                f"algorithm {algorithm!r} cannot run {collective} on this group: 'shm' needs "
                "every rank on one host, 'hierarchical' several hosts, all sharing memory "
                f"(hosts: {hosts}); use 'auto'"
            )
    return _automatic(collective, nbytes, world_size, hosts)


def resolve(
    collective: str,
    nbytes: int,
    world_size: int,
    *,
    algorithm: Optional[str] = None,
    deterministic: Optional[bool] = None,
    hosts: Hosts = None,
) -> Callable[..., None]:
    """Return the function that runs ``collective``; arguments as for :func:`choose`.

    A hierarchical function comes with its ``across`` bound: the automatic choice for a
    group of the hosts' leaders."""
    name = choose(
        collective, nbytes, world_size, algorithm=algorithm, deterministic=deterministic, hosts=hosts
    )
    run = getattr(FAMILIES[name], collective)
    if name != "hierarchical":
        return run
    leaders = len(hosts)
    if collective == "barrier":
        return functools.partial(run, across=tree.barrier)
    between = "all_to_all" if collective in ("gather", "scatter") else collective
    return functools.partial(run, across=resolve(between, nbytes, leaders, deterministic=deterministic))


# Entry points: choose by size and layout and run. Signatures follow the Channel contract;
# the extra keyword arguments are those of choose().


def _hosts(ch: Channel) -> Hosts:
    return getattr(ch, "hosts", None)


def all_reduce(
    ch: Channel,
    buf: np.ndarray,
    op: Callable,
    *,
    algorithm: Optional[str] = None,
    deterministic: Optional[bool] = None,
) -> None:
    """Reduce ``buf`` over all ranks in place; every rank ends with identical bits."""
    resolve(
        "all_reduce", buf.nbytes, ch.size, algorithm=algorithm, deterministic=deterministic, hosts=_hosts(ch)
    )(ch, buf, op)


def reduce_scatter(
    ch: Channel,
    buf: np.ndarray,
    op: Callable,
    counts: Sequence[int],
    *,
    algorithm: Optional[str] = None,
    deterministic: Optional[bool] = None,
) -> None:
    """Reduce ``buf`` (blocks laid out by ``counts``); block ``ch.rank`` holds the result."""
    resolve(
        "reduce_scatter",
        buf.nbytes,
        ch.size,
        algorithm=algorithm,
        deterministic=deterministic,
        hosts=_hosts(ch),
    )(ch, buf, op, counts)


def all_gather(
    ch: Channel,
    buf: np.ndarray,
    counts: Sequence[int],
    *,
    algorithm: Optional[str] = None,
) -> None:
    """Fill every block of ``buf`` (laid out by ``counts``) from the rank that owns it."""
    resolve("all_gather", buf.nbytes, ch.size, algorithm=algorithm, hosts=_hosts(ch))(ch, buf, counts)


def broadcast(
    ch: Channel,
    buf: np.ndarray,
    root: int,
    *,
    algorithm: Optional[str] = None,
) -> None:
    """Copy ``buf`` from ``root`` to every rank."""
    resolve("broadcast", buf.nbytes, ch.size, algorithm=algorithm, hosts=_hosts(ch))(ch, buf, root)


def reduce(
    ch: Channel,
    buf: np.ndarray,
    op: Callable,
    root: int,
    *,
    algorithm: Optional[str] = None,
    deterministic: Optional[bool] = None,
) -> None:
    """Reduce ``buf`` over all ranks into ``buf`` on ``root`` (scratch elsewhere)."""
    resolve(
        "reduce", buf.nbytes, ch.size, algorithm=algorithm, deterministic=deterministic, hosts=_hosts(ch)
    )(ch, buf, op, root)


def gather(
    ch: Channel,
    send: np.ndarray,
    recv: Optional[Sequence[np.ndarray]],
    root: int,
    *,
    algorithm: Optional[str] = None,
) -> None:
    """Collect every rank's ``send`` into ``recv[rank]`` on ``root``."""
    resolve("gather", send.nbytes, ch.size, algorithm=algorithm, hosts=_hosts(ch))(ch, send, recv, root)


def scatter(
    ch: Channel,
    send: Optional[Sequence[np.ndarray]],
    recv: np.ndarray,
    root: int,
    *,
    algorithm: Optional[str] = None,
) -> None:
    """Send ``send[i]`` from ``root`` into ``recv`` on rank ``i``."""
    resolve("scatter", recv.nbytes, ch.size, algorithm=algorithm, hosts=_hosts(ch))(ch, send, recv, root)


def all_to_all(
    ch: Channel,
    send_blocks: Sequence[np.ndarray],
    recv_blocks: Sequence[np.ndarray],
    *,
    algorithm: Optional[str] = None,
) -> None:
    """Send ``send_blocks[i]`` to rank ``i``; receive rank ``i``'s into ``recv_blocks[i]``."""
    nbytes = sum(b.nbytes for b in send_blocks)
    resolve("all_to_all", nbytes, ch.size, algorithm=algorithm, hosts=_hosts(ch))(
        ch, send_blocks, recv_blocks
    )


def barrier(ch: Channel, *, algorithm: Optional[str] = None) -> None:
    """Return once every rank has called it."""
    resolve("barrier", 0, ch.size, algorithm=algorithm, hosts=_hosts(ch))(ch)
