"""A TCP proxy for tests of links that go quiet or drop: it forwards connections from a port of
its own to ``target``; while :attr:`silent` is set it forwards nothing either way (closing
nothing: the target keeps its side of a connection the client gave up on), after :meth:`hold`
it swallows what clients send (or what the target answers), and :meth:`drop` closes every
connection and forwards again."""

from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, target: int) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.silent = threading.Event()
        self._held = {True: False, False: False}  # upstream (client to target) -> swallowed
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self._target))
            self._open += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, upstream: bool) -> None:
        try:
            while data := source.recv(65536):
                if not self.silent.is_set() and not self._held[upstream]:
                    sink.sendall(data)
        except OSError:
            pass

    def hold(self, replies: bool = False) -> None:
        """Swallow what clients send (``replies``: what the target sends) from now on, until
        :meth:`drop`."""
        self._held[not replies] = True

    def drop(self) -> None:
        """Close every connection made so far; later ones are forwarded again."""
        for s in self._open:
            s.close()
        self._open.clear()
        self._held = {True: False, False: False}

    def close(self) -> None:
        self._listener.close()
        self.drop()
