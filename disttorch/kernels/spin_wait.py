"""Waiting loops for the op pool's threads (:mod:`disttorch.kernels.thread_pool`), compiled
by numba (the ``fast`` extra) and run without the GIL: a thread watches a counter that
another thread raises, yielding its core at every turn.

- ``spin(counters, index, value, turns)``: whether ``counters[index]`` reached ``value``
  within ``turns`` turns, each an atomic load and a ``sched_yield``.
- ``store_and_spin(counters, at, stored, index, value, turns)``: ``counters[at] = stored``
  (an atomic store), then ``spin``. A worker reports a finished part this way, after it
  has let go of the GIL, so the caller that sees the report finds the GIL free (had it to
  wait for the GIL, it would sleep in the kernel).

Importing this module without numba raises ``ImportError`` (see :mod:`disttorch.kernels.jit`).
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from disttorch.kernels.jit import njit

__all__ = ["spin", "store_and_spin"]

_sched_yield = types.ExternalFunction("sched_yield", types.int32())


def _pointer(context, builder, array_type, array, index):
    """The address of ``array[index]`` in generated code."""
    view = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, view, [index])


@intrinsic
def _load_acquire(typingctx, array, index):  # noqa: ARG001 - numba's signature
    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], *args)
        return builder.load_atomic(where, ordering="acquire", align=8)

    return types.int64(array, index), codegen


@intrinsic
def _store_release(typingctx, array, index, value):  # noqa: ARG001 - numba's signature
    def codegen(context, builder, signature, args):
        where = _pointer(context, builder, signature.args[0], args[0], args[1])
        builder.store_atomic(args[2], where, ordering="release", align=8)
        return context.get_dummy_value()

    return types.void(array, index, value), codegen


@njit()
def spin(counters, index, value, turns):  # pragma: no cover - compiled
    for _ in range(turns):
        if _load_acquire(counters, index) >= value:
            return True
        _sched_yield()
    return _load_acquire(counters, index) >= value


@njit()
def store_and_spin(counters, at, stored, index, value, turns):  # pragma: no cover - compiled
    _store_release(counters, at, stored)
    return spin(counters, index, value, turns)
