"""The wire, the floor under the group engine: bytes between ranks.

- ``transport.py``: one ZeroMQ connection per peer, authenticated before any frame is read;
  zero-copy sends of large buffers.
- ``frames.py``: the fixed header every message carries (sequence, op, dtype, shape, chunk).
- ``shm.py``: a shared-memory ring for large messages between ranks of one host.

Imports only the base (``..base``) below it.
"""
