"""ZeroMQ sockets made with a clear error when the process is out of file descriptors:
libzmq raises ``EMFILE`` for the socket itself, but aborts the whole process (SIGABRT,
"Too many open files (src/epoll.cpp)") when its I/O thread then cannot get one."""

from __future__ import annotations

import errno

import zmq

from ... import _fd_limit

# a socket, its mailbox, the context's I/O thread and reaper (epoll + mailboxes), a connection
_HEADROOM = 16


def new_socket(context: zmq.Context, kind: int) -> zmq.Socket:
    """``context.socket(kind)``, refused with an ``OSError(EMFILE)`` naming ``RLIMIT_NOFILE``
    and the number open when fewer than a few descriptors are left."""
    what = f"cannot make a ZeroMQ {zmq.SocketType(kind).name} socket"
    _fd_limit.ensure_headroom(what, _HEADROOM)
    try:
        return context.socket(kind)
    except zmq.ZMQError as error:
        if error.errno in (errno.EMFILE, errno.ENFILE):
            raise _fd_limit.exhaustion_error(what) from error
        raise
