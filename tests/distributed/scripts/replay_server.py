"""Replay test, server side: a ROUTER at ADDRESS:PORT protected as a rank's peer socket is
there (auth.configure_server with the job secret; CURVE off loopback). Counts successful
handshakes and messages for SECONDS, then prints them."""

import sys
import time

import zmq

from disttorch.distributed.base import auth

address, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
secret = auth.resolve_secret()
ctx = zmq.Context()
server = ctx.socket(zmq.ROUTER)
auth.configure_server(server, secret, encrypt=auth.encrypt_connections_at(address))
monitor = server.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
server.bind(f"tcp://{address}:{port}")
print("LISTENING", "CURVE" if auth.encrypt_connections_at(address) else "PLAIN", flush=True)
succeeded, received = 0, []
deadline = time.monotonic() + seconds
poller = zmq.Poller()
poller.register(server, zmq.POLLIN)
poller.register(monitor, zmq.POLLIN)
while time.monotonic() < deadline:
    for sock, _ in poller.poll(100):
        if sock is monitor:
            monitor.recv_multipart()
            succeeded += 1
        else:
            received.append(server.recv_multipart()[-1])
print("SUCCEEDED", succeeded, "RECEIVED", b",".join(received).decode(), flush=True)
