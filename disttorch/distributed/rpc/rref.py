"""``RRef``, a reference to a value that lives on one worker (its owner), and ``remote``.

* ``RRef(value)`` makes this worker the owner of ``value``; ``remote(to, f)`` makes worker
  ``to`` the owner of ``f()``'s result and returns at once with a *user* RRef.
* Passed inside the arguments or the result of an RPC, an RRef arrives as a reference to the
  same value: on its owner as the owner's RRef, elsewhere as a user RRef (a *fork*).
* ``to_here()`` fetches a copy of the value (on the owner: the value itself);
  ``local_value()`` is the value, on the owner only; ``rpc_sync()``, ``rpc_async()`` and
  ``remote()`` return proxies that call a method of the value on its owner.

The owner keeps the value while any other worker holds an RRef to it (``owned.py`` counts
them). Inside a distributed autograd context ``to_here()`` is an RPC like any other: the
tensors it brings record the autograd functions that let gradients flow back to the owner.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from ...futures import Future
from . import api, owned, serialization
from . import dist_autograd_container as contexts
from .functions import async_execution, is_async_execution
from .options import UNSET_RPC_TIMEOUT, WorkerInfo

__all__ = ["RRef", "remote"]

T = TypeVar("T")
_serials = itertools.count()


class RRef(Generic[T]):
    """A reference to a value owned by one worker. ``RRef(value)`` makes this worker its owner.

    Args:
        value: the value to own.
        type_hint: accepted for compatibility (the type is read from the value).
    """

    def __init__(self, value: T, type_hint: type | None = None) -> None:
        state = api.require_state()
        future: Future = Future()
        future.set_result(value)
        self._setup(state.me.id, (state.me.id, next(_serials)), future, user=False)
        self._confirmed = True

    def _setup(self, owner: int, rref_id: owned.RRefId, value: Future | None, user: bool) -> None:
        self._owner_id = owner
        self._rref_id = rref_id
        self._value = value  # the owner's value future; None on users
        self._user = user  # a fork this worker must release when it is deleted
        self._confirmed = False
        self._error: api.RemoteError | None = None  # why remote() failed (rebuilt at each raise)
        self._lock = threading.Lock()

    @classmethod
    def _user(cls, owner: int, creator: int) -> RRef:
        """The RRef ``remote()`` returns: a fork the owner counts as soon as the call arrives."""
        rref = object.__new__(cls)
        rref._setup(owner, (creator, next(_serials)), None, user=True)
        return rref

    def _confirm(self, reply: Future) -> None:
        """The owner answered the ``remote()`` call: the value exists (or the call failed)."""
        try:
            ok, value = reply.wait()
            if not ok:
                self._error = value
        except BaseException as e:  # noqa: BLE001 - e.g. the creation timed out or the owner died
            msg = str(e)
            if msg.startswith("RPC ran for more than set timeout"):
                msg = (
                    "RRef creation via rpc.remote() timed out, and it is possible that the RRef on the owner "
                    f"node does not exist. ({msg})"
                )
            self._error = api.RemoteError(RuntimeError, msg)
        self._confirmed = True

    # --------------------------------------------------------------------- who and where
    def owner(self) -> WorkerInfo:
        """The :class:`WorkerInfo` of the owner."""
        return api.require_state().by_id[self._owner_id]

    def owner_name(self) -> str:
        """The owner's worker name."""
        return self.owner().name

    def is_owner(self) -> bool:
        """Whether this worker owns the value."""
        return self._value is not None

    def confirmed_by_owner(self) -> bool:
        """Whether the owner knows of this RRef (always, except for a ``remote()`` not yet answered)."""
        return self._confirmed

    # --------------------------------------------------------------------- the value
    def local_value(self) -> T:
        """The value itself; only on its owner."""
        if self._value is None:
            raise RuntimeError(
                f"Can't call RRef.local_value() on a non-owner RRef. The owner is {self.owner()}."
            )
        return self._value.wait()

    def to_here(self, timeout: float = UNSET_RPC_TIMEOUT) -> T:
        """A copy of the value fetched from its owner (the value itself on the owner).

        Raises the exception of the ``remote()`` call that made the value, if it raised.
        """
        if self._value is not None:
            return self._value.wait()
        if self._error is not None:
            raise self._error.rebuild()
        return api.rpc_sync(self._owner_id, _fetch, args=(self._rref_id,), timeout=timeout)

    # --------------------------------------------------------------------- proxies
    def rpc_sync(self, timeout: float = UNSET_RPC_TIMEOUT) -> Any:
        """``rref.rpc_sync().method(*args)`` runs ``method`` of the value on its owner and returns its result."""
        return _Proxy(self, api.rpc_sync, timeout)

    def rpc_async(self, timeout: float = UNSET_RPC_TIMEOUT) -> Any:
        """``rref.rpc_async().method(*args)``: as :meth:`rpc_sync`, returning a future."""
        return _Proxy(self, api.rpc_async, timeout)

    def remote(self, timeout: float = UNSET_RPC_TIMEOUT) -> Any:
        """``rref.remote().method(*args)``: an RRef to the result, which stays on the owner."""
        return _Proxy(self, remote, timeout)

    # --------------------------------------------------------------------- travel
    def __reduce__(self) -> tuple:
        to = serialization.current_peer()
        if self._value is not None:  # the owner counts a fork even to itself, until it arrives
            owned.add_fork(self._rref_id, self._value)
        elif to != self._owner_id:
            api.rpc_sync(self._owner_id, _add_fork, args=(self._rref_id,))
        return (_rebuild, (self._owner_id, self._rref_id, self._value is not None))

    def __del__(self) -> None:
        if not getattr(self, "_user", False) or not api.is_initialized():
            return
        try:
            api.send(self._owner_id, ("call", _release, (self._rref_id,), {}, None), 0, None)
        except RuntimeError:
            pass  # the agent is stopping: shutdown frees everything

    def __repr__(self) -> str:
        kind = "OwnerRRef" if self._value is not None else "UserRRef"
        return (
            f"{kind}(RRefId = GloballyUniqueId(created_on={self._rref_id[0]}, local_id={self._rref_id[1]}))"
        )


def _rebuild(owner: int, rref_id: owned.RRefId, from_owner: bool) -> RRef:
    """An RRef that arrived in a message: the owner's view on the owner, a fork elsewhere.

    One the owner sent to itself brings the fork it counted for the trip, released here.
    """
    rref = object.__new__(RRef)
    if owner == api.require_state().me.id:
        rref._setup(owner, rref_id, owned.lookup(rref_id), user=False)
        if from_owner:
            owned.release_fork(rref_id)
    else:
        rref._setup(owner, rref_id, None, user=True)
    rref._confirmed = True
    return rref


@api.inline
def _add_fork(rref_id: owned.RRefId) -> None:
    owned.add_fork(rref_id)


@api.inline
def _release(rref_id: owned.RRefId) -> None:
    owned.release_fork(rref_id)


def _fetch(rref_id: owned.RRefId) -> Any:
    return owned.lookup(rref_id).wait()


def remote(
    to: str | int | WorkerInfo,
    func: Callable,
    args: tuple | list | None = None,
    kwargs: dict | None = None,
    timeout: float = UNSET_RPC_TIMEOUT,
) -> RRef:
    """Run ``func(*args, **kwargs)`` on worker ``to``, which keeps the result; return an ``RRef`` to it.

    Returns at once; ``to_here()`` waits for the value (and raises the function's exception,
    or the creation's timeout).
    """
    state = api.require_state()
    owner = state.worker(to)
    rref = RRef._user(owner.id, state.me.id)
    request = ("remote", func, tuple(args or ()), dict(kwargs or {}), rref._rref_id)
    if owner == state.me:  # an owner's RRef, its entry counted until the call is done
        rref._value, rref._user = owned.expect_value(rref._rref_id), False
    reply = api.send(owner, request, timeout, contexts.current())
    reply.add_done_callback(rref._confirm)
    if owner == state.me:
        reply.add_done_callback(lambda _: owned.release_fork(rref._rref_id))
    return rref


@async_execution
def _local_invoke(rref: RRef, name: str, args: tuple, kwargs: dict) -> Future:
    """On the owner: call method ``name`` of the value (its future, if it is ``async_execution``)."""
    method = getattr(rref.local_value(), name)
    result = method(*args, **kwargs)
    if is_async_execution(method):
        return result
    done: Future = Future()
    done.set_result(result)
    return done


class _Proxy:
    """What ``rref.rpc_sync()`` and its twins return: attribute ``m`` calls method ``m`` on the owner."""

    def __init__(self, rref: RRef, call: Callable, timeout: float) -> None:
        self._rref, self._call, self._timeout = rref, call, timeout

    def __getattr__(self, name: str) -> Callable:
        def invoke(*args: Any, **kwargs: Any) -> Any:
            return self._call(
                self._rref._owner_id,
                _local_invoke,
                args=(self._rref, name, args, kwargs),
                timeout=self._timeout,
            )

        return invoke
