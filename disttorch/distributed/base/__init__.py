"""The ground floor of ``disttorch.distributed``, shared by the wire and the stores.

- ``errors.py``: every exception the package raises (``DistError`` and its subclasses).
- ``auth.py``: the job-secret handshake (ZeroMQ ZAP: PLAIN or CURVE) that a store's server
  and every peer connection require before reading a byte.
- ``addresses.py``: loopback and listen-address decisions (one ``is_loopback``).
- ``log.py``: a rate-limited warning log, so bad input cannot flood the log.

Imports nothing else of disttorch.
"""
