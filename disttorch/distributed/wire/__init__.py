"""The wire, the floor under the group engine: bytes between ranks.

- ``transport.py``: one ZeroMQ connection per peer, authenticated before any frame is read;
  zero-copy sends of large buffers.
- ``frames.py``: the fixed header every message carries (sequence, op, dtype, shape, chunk).
- ``shm.py``: the segment a host's ranks share (anonymous, handed over by descriptor) and
  the per-rank counters they synchronise with.

Imports only the base (``..base``) below it.
"""
