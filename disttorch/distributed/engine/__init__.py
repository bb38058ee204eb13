"""The group engine, the floor under the API: one ``ProcessGroup`` per group of ranks.

- ``process_group.py``: the communication thread that runs operations in issue order,
  deadlines, dead-peer and mismatch detection, progress published to the store.
- ``work.py``: ``Work`` and ``Future``, what an ``async_op=True`` call returns.
- ``peer_channel.py``: the algorithms' ``Channel`` over the wire for one collective; it
  stamps and checks every message and owns the receive loop.

Imports only the wire (``..wire``) and the base (``..base``) below it.
"""
