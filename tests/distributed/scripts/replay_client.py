"""Replay test, other side: a legitimate client reaches the server through a recording TCP
proxy and sends one message; then the recorded client-to-server bytes are replayed on a new
connection, as an eavesdropper who captured them would."""

import socket
import sys
import threading
import time

import zmq

from disttorch.distributed.base import auth

address, port = sys.argv[1], int(sys.argv[2])
recorded: list[bytes] = []
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)


def proxy() -> None:
    inside, _ = listener.accept()
    outside = socket.create_connection((address, port))

    def pump(src: socket.socket, dst: socket.socket, record: bool) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                return
            if not data:
                return
            if record:
                recorded.append(data)
            try:
                dst.sendall(data)
            except OSError:
                return

    threading.Thread(target=pump, args=(outside, inside, False), daemon=True).start()
    pump(inside, outside, True)


threading.Thread(target=proxy, daemon=True).start()
secret = auth.resolve_secret()
ctx = zmq.Context()
client = ctx.socket(zmq.DEALER)
auth.configure_client(client, secret, encrypt=auth.encrypt_connections_at(address))
client.connect(f"tcp://127.0.0.1:{listener.getsockname()[1]}")
client.send(b"legit")
time.sleep(1.5)
client.close(linger=0)
time.sleep(0.2)
with socket.create_connection((address, port)) as replay:
    for chunk in recorded:
        try:
            replay.sendall(chunk)
        except OSError:
            break
        time.sleep(0.1)
    time.sleep(1.0)
print("REPLAYED", sum(map(len, recorded)), "bytes", flush=True)
