"""The RPC API: ``init_rpc``, ``rpc_sync``, ``rpc_async``, ``get_worker_info``, ``shutdown``
(``remote`` is in ``rref.py``), and how a worker runs the calls it receives.

A call is one request message: ``(kind, function, args, kwargs, rref id)`` pickled by
``serialization.py``, preceded by the id of the distributed autograd context it was made in
(or -1). ``kind`` is ``"call"`` (the reply carries the result) or ``"remote"`` (the result
stays with this worker, the owner, under the RRef id; the reply only confirms). The I/O
thread of ``agent.py`` unpickles each request in arrival order, so that the RRef bookkeeping
of ``rref.py`` sees the messages of one worker in the order they were sent; functions marked
:func:`inline` (that bookkeeping) run there too, everything else on the worker threads.

An exception raised by the function is re-raised in the caller with its type and a message
naming the worker, the exception and the remote traceback, as PyTorch does.

The futures of calls complete on the I/O thread, and so do the callbacks added to them
(``then``, ``add_done_callback``): a callback must not wait for another call's result.
"""

from __future__ import annotations

import functools
import json
import pickle
import re
import sys
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ...futures import Future
from .. import groups
from ..base import auth
from ..rendezvous import RendezvousConfig, parse_init_method, rendezvous
from ..store import PrefixStore, Store, TCPStore
from ..wire.transport import host_address
from . import dist_autograd_container as contexts
from . import owned, serialization
from .agent import Agent
from .functions import is_async_execution
from .options import UNSET_RPC_TIMEOUT, BackendType, TensorPipeRpcBackendOptions, WorkerInfo

__all__ = [
    "init_rpc",
    "shutdown",
    "rpc_sync",
    "rpc_async",
    "get_worker_info",
    "inline",
    "require_state",
]

_NAME = re.compile(r"^[A-Za-z0-9_:\-]{1,128}$")
#: How long each wait of shutdown's rounds lasts before looking for dead workers again (s).
_ROUND_POLL = timedelta(seconds=0.5)


@dataclass(frozen=True)
class RemoteError:
    """An exception raised by the called function, as it travels back: its type and text."""

    exception_type: type
    msg: str

    def rebuild(self) -> BaseException:
        try:
            return self.exception_type(self.msg)
        except BaseException as e:  # noqa: BLE001 - an exception class that needs other arguments
            return RuntimeError(
                f"Failed to create original exception type. Error msg was {e} Original exception on "
                f"remote side was {self.msg}"
            )


@dataclass
class _State:
    me: WorkerInfo
    workers: dict[str, WorkerInfo]
    by_id: dict[int, WorkerInfo]
    agent: Agent
    store: Store
    pool: ThreadPoolExecutor
    options: TensorPipeRpcBackendOptions
    owns_store: bool  # False when it is the default process group's

    def worker(self, to: str | int | WorkerInfo) -> WorkerInfo:
        if isinstance(to, WorkerInfo):
            to = to.name
        found = self.by_id.get(to) if isinstance(to, int) else self.workers.get(to)
        if found is None:  # PyTorch's words
            what = "rank" if isinstance(to, int) else "name"
            raise RuntimeError(
                f"name:{self.me.name},rank:{self.me.id} could not find destination {what} {to}"
            )
        return found


_state: _State | None = None
_init_lock = threading.Lock()


def require_state() -> _State:
    """The running agent's state; ``RuntimeError`` (PyTorch's words) before ``init_rpc``."""
    if _state is None:
        raise RuntimeError("RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.")
    return _state


def is_initialized() -> bool:
    """Whether ``init_rpc`` has run and ``shutdown`` has not."""
    return _state is not None


def inline(fn: Callable) -> Callable:
    """Mark a bookkeeping function to run on the I/O thread as its request arrives (in order).

    It must be quick and must not wait for anything.
    """
    fn._rpc_inline = True  # type: ignore[attr-defined]
    return fn


# ---------------------------------------------------------------------------- start and stop
def init_rpc(
    name: str,
    backend: BackendType | None = None,
    rank: int = -1,
    world_size: int | None = None,
    rpc_backend_options: TensorPipeRpcBackendOptions | None = None,
) -> None:
    """Start this process's RPC agent as worker ``name`` and meet the other workers.

    Args:
        name: this worker's name, unique in the job (letters, digits, ``_``, ``-``, ``:``).
        backend: ``BackendType.TENSORPIPE`` or ``None`` (the only backend).
        rank: this worker's id, 0 to ``world_size - 1`` (-1: from the environment).
        world_size: the number of workers (``None``: from the environment).
        rpc_backend_options: a :class:`TensorPipeRpcBackendOptions` (its ``init_method``
            says where to meet: ``env://`` reads ``MASTER_ADDR``/``MASTER_PORT``, as
            ``init_process_group``; use another port than a process group's).

    Returns once every worker has joined; connections need the job secret
    (``DISTTORCH_JOB_SECRET``) or, without one, stay on this host.
    """
    global _state
    if not isinstance(name, str) or not _NAME.match(name):
        raise RuntimeError(
            f"Worker name must match ^[A-Za-z0-9-_:]*$ and be 1 to 128 characters, got {name!r}"
        )
    if backend is not None and backend != BackendType.TENSORPIPE:
        raise ValueError(f"unknown RPC backend {backend!r}; disttorch has BackendType.TENSORPIPE")
    options = rpc_backend_options or TensorPipeRpcBackendOptions()
    if not isinstance(options, TensorPipeRpcBackendOptions):
        raise TypeError(
            f"rpc_backend_options must be a TensorPipeRpcBackendOptions, got {type(options).__name__}"
        )
    with _init_lock:
        if _state is not None:
            raise RuntimeError("RPC is already initialized")
        size = -1 if world_size is None else world_size
        config = parse_init_method(options.init_method, rank, size)
        shared = _process_group_store(config)
        if shared is None:
            store, rank, world_size = rendezvous(options.init_method, rank, size)
        else:
            store, rank, world_size = shared, config.rank, config.world_size
        store = PrefixStore("rpc/", store)
        secret = auth.resolve_secret()
        context, router, endpoint = Agent.bind(host_address(config.host or None), secret)
        store.set(f"worker/{rank}", json.dumps({"name": name, "endpoint": endpoint}))
        found = {r: json.loads(store.get(f"worker/{r}")) for r in range(world_size)}
        store.set(f"read/{rank}", "1")
        if rank == 0:  # it may host the store: everyone reads the table before it can go
            store.wait([f"read/{r}" for r in range(world_size)])
            if shared is None:
                _all_joined(store.underlying_store, world_size)
        names: dict[str, int] = {}
        for r, entry in found.items():
            if entry["name"] in names:
                router.close(linger=0)
                context.term()
                raise RuntimeError(
                    f"RPC worker name {entry['name']} is not unique. Workers {names[entry['name']]} and {r} "
                    "share the same name."
                )
            names[entry["name"]] = r
        me = WorkerInfo(name, rank)
        agent = Agent(rank, context, router, _serve)
        pool = ThreadPoolExecutor(options.num_worker_threads, thread_name_prefix=f"disttorch-rpc-{name}")
        by_id = {r: WorkerInfo(entry["name"], r) for r, entry in found.items()}
        contexts.init(rank)
        _state = _State(
            me, {w.name: w for w in by_id.values()}, by_id, agent, store, pool, options, shared is None
        )
        agent.connect({r: (entry["name"], entry["endpoint"]) for r, entry in found.items()}, secret)


def _all_joined(store: Store, world_size: int) -> None:
    """Tell the store this process hosts that every worker has joined: from now on a refused
    handshake comes from an outsider and is ignored, instead of failing the job's waits (as
    it does while a worker may still be missing)."""
    if isinstance(store, TCPStore) and store._server is not None:
        store.workers_joined(world_size, timedelta(seconds=5))


def _process_group_store(config: RendezvousConfig) -> Store | None:
    """The default process group's store, when the RPC job meets at the same address (as
    PyTorch's multi-tenant store lets a script call ``init_process_group`` and ``init_rpc``
    with the same ``MASTER_ADDR``/``MASTER_PORT``)."""
    store = groups._state.store
    if (
        config.kind == "tcp"
        and isinstance(store, TCPStore)
        and (store.host, store.port) == (config.host, config.port)
    ):
        return store
    return None


def shutdown(graceful: bool = True, timeout: float = 0) -> None:
    """Stop this worker's RPC agent.

    With ``graceful`` (the default) it first waits until no worker of the job has a call
    outstanding: every worker shuts down together, after all the work of every worker
    (including calls made by functions that other calls ran) is done. A worker that died
    meanwhile is reported, not waited for. Then the RRefs this worker owns are freed.

    Args:
        graceful: wait for the job's outstanding work (and for every worker to shut down).
        timeout: seconds to wait for it (0: as long as it takes).
    """
    global _state
    state = require_state()
    quiet = False
    try:
        if graceful:
            _wait_for_quiet_job(state, timeout)
            quiet = True
    finally:
        with _init_lock:
            _state = None
        state.agent.stop()
        state.pool.shutdown(wait=False)
        owned.forget_all()
        contexts.init(state.me.id)
        if quiet:
            _leave_store(state)
        if state.owns_store:
            state.store.close()


def _wait_for_quiet_job(state: _State, timeout: float) -> None:
    """Rounds over the store: each worker publishes, once idle, how many messages it has
    sent and received so far; when two consecutive rounds publish the same numbers
    everywhere, no message moved between them and nothing is outstanding: the job is quiet."""
    deadline = time.monotonic() + timeout if timeout > 0 else None
    world = len(state.by_id)
    previous: list[bytes] | None = None
    round_no = 0
    while True:
        while not state.agent.idle():
            _check_deadline(state, deadline)
            time.sleep(0.005)
        state.store.set(f"quiet/{round_no}/{state.me.id}", str(state.agent.activity))
        keys = [f"quiet/{round_no}/{r}" for r in range(world)]
        _wait_keys(state, keys, deadline)
        counts = state.store.multi_get(keys)
        if counts == previous:
            return
        previous = counts
        round_no += 1


def _wait_keys(state: _State, keys: list[str], deadline: float | None, what: str = "RPC shutdown") -> None:
    while True:
        asked = time.monotonic()
        try:
            state.store.wait(keys, _ROUND_POLL)
            return
        except Exception as e:  # noqa: BLE001 - the store's timeout: look at the workers, wait again
            _check_deadline(state, deadline, what)
            if time.monotonic() - asked < _ROUND_POLL.total_seconds() / 2:  # not a timeout: no retry
                raise RuntimeError(f"{what} cannot wait for the other workers: {e}") from e


def _check_deadline(state: _State, deadline: float | None, what: str = "RPC shutdown") -> None:
    dead = state.agent.failures()
    if dead:
        raise RuntimeError(f"{what} cannot wait for the other workers: {'; '.join(dead)}")
    if deadline is not None and time.monotonic() > deadline:
        raise RuntimeError(f"{what} timed out waiting for the other workers")


def _leave_store(state: _State) -> None:
    """Every worker says it has left; worker 0, which may host the store, waits for them all."""
    state.store.set(f"left/{state.me.id}", "1")
    if state.me.id == 0:
        try:
            state.store.wait([f"left/{r}" for r in state.by_id], timedelta(seconds=30))
        except Exception:  # noqa: BLE001 - a worker that died after the quiet rounds: nothing to wait for
            pass


# ---------------------------------------------------------------------------- helpers libraries call
_gathers: dict[str, int] = {}  # how many ``_all_gather`` calls each set of workers has made


def _require_initialized(func: Callable) -> Callable:
    """``func``, raising PyTorch's error when called before ``init_rpc`` (a decorator that
    libraries put on their RPC helpers)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        require_state()
        return func(*args, **kwargs)

    return wrapper


def _all_gather(obj: Any, worker_names: list[str] | None = None, timeout: float = UNSET_RPC_TIMEOUT) -> dict:
    """``{name: obj}`` of every worker named (default: all), returned on each of them. Each
    of them calls it, with the same names, in the same order (PyTorch's private helper, with
    which libraries agree on something at start-up). The objects travel through the job's
    store, which only workers that proved the job secret reach."""
    state = require_state()
    names = sorted(worker_names or state.workers)
    if state.me.name not in names:
        raise ValueError(f"_all_gather: this worker ({state.me.name}) is not among the workers named {names}")
    group = ",".join(names)
    with _init_lock:
        number = _gathers.get(group, 0)
        _gathers[group] = number + 1
    keys = [f"all_gather/{group}/{number}/{name}" for name in names]
    state.store.set(keys[names.index(state.me.name)], pickle.dumps(obj))
    limit = _timeout(state, timeout)
    _wait_keys(state, keys, time.monotonic() + limit if limit > 0 else None, "_all_gather")
    return {name: pickle.loads(value) for name, value in zip(names, state.store.multi_get(keys))}


# ---------------------------------------------------------------------------- the caller's side
def get_worker_info(worker_name: str | None = None) -> WorkerInfo:
    """The :class:`WorkerInfo` of the worker named ``worker_name`` (this worker's if ``None``)."""
    state = require_state()
    return state.me if worker_name is None else state.worker(worker_name)


def _timeout(state: _State, timeout: float) -> float:
    return state.options.rpc_timeout if timeout == UNSET_RPC_TIMEOUT else float(timeout)


def send(
    to: str | int | WorkerInfo, request: tuple, timeout: float, ctx: contexts.DistAutogradContext | None
) -> Future:
    """Send ``request`` to worker ``to`` within ``ctx``; the future gets the (ok, value) reply.

    ``ok`` is False when the callee raised: ``value`` is then a :class:`RemoteError`.
    """
    state = require_state()
    peer = state.worker(to).id
    session = ctx.session(peer) if ctx is not None else serialization.Session(peer)
    parts = serialization.dumps(request, session)
    head = (ctx.context_id if ctx is not None else -1).to_bytes(8, "big", signed=True)
    raw = state.agent.request(peer, [head, *parts], _timeout(state, timeout))

    def decode(done: Future) -> tuple[bool, Any]:
        ok, reply = done.wait()
        return ok, serialization.loads(reply, session)

    return raw.then(decode)


def _result(reply: Future) -> Any:
    ok, value = reply.wait()
    if not ok:
        raise value.rebuild()
    return value


def rpc_async(
    to: str | int | WorkerInfo,
    func: Callable,
    args: tuple | list | None = None,
    kwargs: dict | None = None,
    timeout: float = UNSET_RPC_TIMEOUT,
) -> Future:
    """Run ``func(*args, **kwargs)`` on worker ``to``; return a ``torch.futures.Future`` of its result.

    Args:
        to: the worker's name, id or :class:`WorkerInfo`.
        func: a function importable by the callee (pickled by reference, as in PyTorch).
        timeout: seconds (0: none; left out: the ``rpc_timeout`` of the options).
    """
    reply = send(to, ("call", func, tuple(args or ()), dict(kwargs or {}), None), timeout, contexts.current())
    return reply.then(_result)


def rpc_sync(
    to: str | int | WorkerInfo,
    func: Callable,
    args: tuple | list | None = None,
    kwargs: dict | None = None,
    timeout: float = UNSET_RPC_TIMEOUT,
) -> Any:
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return its result (see :func:`rpc_async`)."""
    return rpc_async(to, func, args, kwargs, timeout).wait()


# ---------------------------------------------------------------------------- the callee's side
def _serve(peer: int, msg_id: int, parts: list) -> None:
    """Called on the I/O thread with each request: unpickle it, then run it (see the header)."""
    state = _state
    if state is None:
        return
    context_id = int.from_bytes(parts[0], "big", signed=True)
    ctx = contexts.get_or_create(context_id) if context_id >= 0 else None
    session = ctx.session(peer) if ctx is not None else serialization.Session(peer)
    try:
        kind, func, args, kwargs, rref_id = serialization.loads(parts[1:], session)
    except BaseException as e:  # noqa: BLE001 - e.g. a function the callee cannot import
        _answer(state, peer, msg_id, session, _remote_error(state, e), ok=False)
        return
    value = owned.expect_value(rref_id) if kind == "remote" else None
    if getattr(func, "_rpc_inline", False):
        _run(state, peer, msg_id, session, ctx, func, args, kwargs, value)
    else:
        state.pool.submit(_run, state, peer, msg_id, session, ctx, func, args, kwargs, value)


def _remote_error(state: _State, e: BaseException) -> RemoteError:
    text = f"On {state.me}:\n{e!r}\n{''.join(traceback.format_exception(e))}"
    print(text, file=sys.stderr)
    return RemoteError(type(e), text)


def _run(
    state: _State,
    peer: int,
    msg_id: int,
    session: serialization.Session,
    ctx: contexts.DistAutogradContext | None,
    func: Callable,
    args: tuple,
    kwargs: dict,
    value: Future | None,
) -> None:
    """Run one call in its caller's autograd context; answer when its result is known."""

    def finish(result: Any, error: BaseException | None) -> None:
        if value is not None:  # remote(): the owner keeps the value, the caller gets a confirmation
            if error is None:
                value.set_result(result)
            else:
                value.set_exception(error)
            result = None
        with contexts.running_in(ctx):
            if error is None:
                _answer(state, peer, msg_id, session, result, ok=True)
            else:
                _answer(state, peer, msg_id, session, _remote_error(state, error), ok=False)

    with contexts.running_in(ctx):
        try:
            result = func(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - it travels back to the caller
            finish(None, e)
            return
    if is_async_execution(func):
        if not isinstance(result, Future):
            finish(
                None,
                TypeError(
                    f"{func} is decorated by @rpc.functions.async_execution and must "
                    f"return a torch.futures.Future, got {type(result).__name__}"
                ),
            )
            return

        def done(fut: Future) -> None:
            try:
                finish(fut.wait(), None)
            except Exception as e:  # noqa: BLE001
                finish(None, e)

        # answered from a worker thread: the future may complete on the I/O thread, where
        # pickling the answer must not happen (an RRef in it may need a call of its own)
        result.add_done_callback(lambda fut: state.pool.submit(done, fut))
    else:
        finish(result, None)


def _answer(
    state: _State, peer: int, msg_id: int, session: serialization.Session, value: Any, ok: bool
) -> None:
    try:
        parts = serialization.dumps(value, session)
    except Exception as e:  # noqa: BLE001 - a result that cannot be pickled is the caller's error
        ok, parts = False, serialization.dumps(_remote_error(state, e), session)
    state.agent.reply(peer, msg_id, parts, ok)
