"""How RPC arguments and results become bytes, and back.

An object is pickled (the standard library's pickle, as PyTorch's RPC: functions and classes
travel by reference, so a lambda cannot be sent) with every dense tensor taken out of the
stream: the pickle holds its dtype, shape and flags, and its raw buffer travels as a frame of
its own, never copied into the pickle. Objects are unpickled only from connections that
proved the job secret (``base/auth.py``).

Two things happen on the way, through the hooks of :class:`Session`:

* Distributed autograd (``disttorch.distributed.autograd``): inside a context, a tensor that
  requires grad is recorded as *sent* (the sender keeps it, to run backward from it later),
  and the receiver makes a leaf that requires grad, recorded as *received from* the sender.
* ``RRef`` objects pickle themselves as a reference to their owner
  (``rref.py``); they ask :func:`current_peer` where they are going or coming from.
"""

from __future__ import annotations

import io
import pickle
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._tensor import Tensor

__all__ = ["Session", "dumps", "loads", "current_peer", "in_message"]

_local = threading.local()


@dataclass
class Session:
    """Who is at the other end of one message, and the autograd context it belongs to.

    Args:
        peer: the worker id the message goes to (``dumps``) or comes from (``loads``).
        record_send: ``tensor -> send id`` for a tensor that requires grad, or ``None``
            outside a distributed autograd context.
        record_recv: ``(leaf, peer, send id) -> None``: the leaf made for such a tensor.
    """

    peer: int
    record_send: Callable[[Tensor], int] | None = None
    record_recv: Callable[[Tensor, int, int], None] | None = None


def current_peer() -> int:
    """The worker at the other end of the message being pickled or unpickled in this thread."""
    session = getattr(_local, "session", None)
    if session is None:
        raise RuntimeError(
            "RRef objects can only be pickled and unpickled by RPC (as arguments or results of rpc_sync, "
            "rpc_async, remote or to_here)"
        )
    return session.peer


def in_message() -> bool:
    """Whether this thread is pickling or unpickling an RPC message (objects that may travel
    only by RPC, such as ``RemoteModule``, ask)."""
    return getattr(_local, "session", None) is not None


def _is_dense(obj: Any) -> bool:
    return isinstance(obj, Tensor) and not obj.is_sparse and type(obj._data) is np.ndarray


def _torch_function(name: str) -> Any:
    """``torch.<name>`` (a function of the package's facade, rebuilt by name)."""
    return getattr(sys.modules["disttorch"], name)  # the facade: loaded before any RPC


def _by_facade_name(obj: Any) -> tuple | None:
    """How to pickle a function of the ``torch`` namespace (``torch.add``) that its module does
    not hold under its name (a wrapper the facade made): by its name there."""
    if not isinstance(obj, types.FunctionType):
        return None
    module = sys.modules.get(obj.__module__)
    if module is not None and getattr(module, obj.__qualname__, None) is obj:
        return None
    facade = sys.modules.get("disttorch")
    if facade is not None and getattr(facade, obj.__name__, None) is obj:
        return (_torch_function, (obj.__name__,))
    return None


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, session: Session) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.session = session
        self.buffers: list[np.ndarray] = []

    def reducer_override(self, obj: Any) -> Any:
        return _by_facade_name(obj) or NotImplemented

    def persistent_id(self, obj: Any) -> Any:
        if not _is_dense(obj):
            return None
        send_id = None
        if obj.requires_grad and self.session.record_send is not None:
            send_id = self.session.record_send(obj)
        self.buffers.append(np.ascontiguousarray(obj._data))
        return ("tensor", len(self.buffers) - 1, obj._data.dtype, obj._data.shape, obj.requires_grad, send_id)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, buffers: list, session: Session) -> None:
        super().__init__(file)
        self.frames = buffers
        self.session = session

    def persistent_load(self, pid: Any) -> Any:
        kind, index, dtype, shape, requires_grad, send_id = pid
        if kind != "tensor" or not 0 <= index < len(self.frames):
            raise pickle.UnpicklingError(f"malformed tensor reference {pid!r} in an RPC message")
        data = np.frombuffer(bytearray(self.frames[index]), dtype=dtype).reshape(shape)
        tensor = Tensor._make(data)
        if requires_grad:
            tensor.requires_grad_(True)
            if send_id is not None and self.session.record_recv is not None:
                self.session.record_recv(tensor, self.session.peer, send_id)
        return tensor


def dumps(obj: Any, session: Session) -> list:
    """``obj`` as frames: the pickle first, then one raw buffer per tensor."""
    file = io.BytesIO()
    pickler = _Pickler(file, session)
    previous, _local.session = getattr(_local, "session", None), session
    try:
        pickler.dump(obj)
    finally:
        _local.session = previous
    return [file.getvalue(), *pickler.buffers]


def loads(frames: list, session: Session) -> Any:
    """The object :func:`dumps` made ``frames`` from (buffers: anything with the buffer protocol)."""
    previous, _local.session = getattr(_local, "session", None), session
    try:
        return _Unpickler(io.BytesIO(frames[0]), list(frames[1:]), session).load()
    finally:
        _local.session = previous
