"""The message format between peers: one fixed-size header frame, then one raw payload frame.

Every message a rank sends to a peer is a two-frame ZeroMQ message::

    [header: 69 bytes, little-endian struct]  [payload: raw bytes of a contiguous array]

Header fields (``HEADER`` below):

==========  =====  ================================================================
field       type   meaning
==========  =====  ================================================================
magic       2s     ``b"DT"``
version     u8     ``VERSION``; a message of another version fails loudly (its sender
                   runs another disttorch)
kind        u8     ``DATA`` (collective), ``P2P``, ``ERROR`` (payload: utf-8 text), ``BYE``,
                   ``SYNC`` (after a reconnect)
group       u32    process-group id (0 = default group, then 1, 2, ... in creation order)
seq         u64    sequence number of the collective in its group (``DATA``/``ERROR``)
tag         i64    user tag of a point-to-point message (``P2P``)
op          u8     collective op code (index in ``OPS``); error class for ``ERROR``
dtype       u8     dtype code (index in ``DTYPES``) of the collective's tensor
root        i16    root (group rank) of a rooted collective, -1 otherwise
numel       i64    element count per rank of the collective's tensor, -1 when ranks may differ
chunk       u32    index of this message among those from this sender in this collective
sender      u32    group rank of the sender
nbytes      u64    payload size in bytes; the payload frame's length
redop       u8     reduce op of the collective (index in ``REDOPS``; 0 when it has none)
link        u32    number of this message among all sent on this connection (from 0,
                   modulo 2**32): checked by the receiver, so a lost, duplicated or
                   reordered message fails loudly (``SYNC`` after a reconnect proves that
                   nothing was lost)
check       u64    :func:`checksum` of the payload on connections without encryption (CURVE
                   authenticates every byte itself); 0 otherwise
crc         u32    CRC-32 of the header bytes before it
==========  =====  ================================================================

A header that fails its CRC, a payload that fails its checksum or a message out of
sequence raises :class:`DamagedStream` in the receiver: the connections are authenticated,
so such a message is damage (or tampering), never noise to drop.

Tensor data is never pickled: the payload is the array's memory. Only the object
collectives put cloudpickle bytes in a payload, and every peer connection has been
authenticated with the job secret before its frames are read.
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

__all__ = [
    "Header",
    "pack",
    "unpack",
    "HEADER_SIZE",
    "DATA",
    "P2P",
    "ERROR",
    "BYE",
    "OPS",
    "REDOPS",
    "op_code",
    "dtype_code",
    "dtype_of",
    "describe",
    "MalformedHeader",
    "DamagedStream",
    "SYNC",
    "checksum",
]

MAGIC = b"DT"
VERSION = 3
DATA, P2P, ERROR, BYE, SYNC = 1, 2, 3, 4, 6  # 5 was a payload in a shared-memory ring (version 2)
KINDS = (DATA, P2P, ERROR, BYE, SYNC)

_STRUCT = struct.Struct("<2sBBIQqBBhqIIQBIQ")
_CRC = struct.Struct("<I")
HEADER_SIZE = _STRUCT.size + _CRC.size
_WORD = np.dtype("<u8")

OPS = (
    "none",
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "monitored_barrier",
    "broadcast_object_list",
    "all_gather_object",
    "gather_object",
    "scatter_object_list",
    "send",
    "recv",
    "new_group",
    "all_reduce_coalesced",
    "all_gather_coalesced",
)
_OP_CODES = {name: i for i, name in enumerate(OPS)}
#: Reduce ops by wire code: ``ReduceOp.X`` travels as ``REDOPS.index("X")`` (0: none).
REDOPS = ("", "SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")

DTYPES = tuple(
    np.dtype(d)
    for d in (
        np.bool_,
        np.uint8,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
        np.uint16,
        np.uint32,
        np.uint64,
    )
)
_DTYPE_CODES = {d: i for i, d in enumerate(DTYPES)}


class MalformedHeader(ValueError):
    """A frame that is not a valid disttorch header (dropped and logged by the transport)."""


class VersionMismatch(ValueError):
    """A header of another wire version: its sender runs another disttorch."""


class DamagedStream(ValueError):
    """A header or payload that fails its check: the stream between two ranks was damaged."""


class Header(NamedTuple):
    kind: int
    group: int
    seq: int
    tag: int
    op: int
    dtype: int
    root: int
    numel: int
    chunk: int
    sender: int
    nbytes: int
    redop: int = 0
    link: int = 0
    check: int = 0


def pack(h: Header) -> bytes:
    """The header frame for ``h`` (its CRC appended)."""
    body = _STRUCT.pack(MAGIC, VERSION, *h)
    return body + _CRC.pack(zlib.crc32(body))


def checksum(frames: Iterable) -> int:
    """The sum of a payload's little-endian 64-bit words, modulo 2**64 (the last word padded
    with zeros), over buffers that split the payload at multiples of 8 bytes.

    Any single flipped bit changes it. It costs about one read of the payload through NumPy,
    several times faster than ``zlib.crc32`` on the development machine (see README), and
    it cannot see two swapped words: order between messages is the sequence number's job.
    """
    total = 0
    for frame in frames:
        data = np.frombuffer(frame, np.uint8)
        whole = data.size - data.size % 8
        if whole:
            total += int(data[:whole].view(_WORD).sum(dtype=np.uint64))
        if whole < data.size:
            total += int.from_bytes(bytes(data[whole:]).ljust(8, b"\0"), "little")
    return total % (1 << 64)


def unpack(frame: bytes, group: int, size: int) -> Header:
    """Parse and validate a header frame received in group ``group`` of ``size`` ranks.

    Raises:
        DamagedStream: the header fails its CRC.
        VersionMismatch: the magic of a header of another version (any length).
        MalformedHeader: wrong length or magic, unknown kind, op or dtype, a
            foreign group, or a sender outside ``0 .. size-1``.
    """
    # another version's header may have another size; one of this size is checked for damage first
    other = len(frame) > len(MAGIC) and frame[: len(MAGIC)] == MAGIC and frame[len(MAGIC)] != VERSION
    if len(frame) == HEADER_SIZE:
        (crc,) = _CRC.unpack_from(frame, _STRUCT.size)
        if zlib.crc32(memoryview(frame)[: _STRUCT.size]) != crc:
            raise DamagedStream("a message header fails its CRC-32")
    if other:
        raise VersionMismatch(f"wire version {frame[len(MAGIC)]} where this rank speaks {VERSION}")
    if len(frame) != HEADER_SIZE:
        raise MalformedHeader(f"header frame of {len(frame)} bytes, expected {HEADER_SIZE}")
    magic, _, *fields = _STRUCT.unpack_from(frame)
    h = Header(*fields)
    if magic != MAGIC:
        raise MalformedHeader(f"bad magic {magic!r}, expected {MAGIC!r}")
    if h.kind not in KINDS:
        raise MalformedHeader(f"unknown message kind {h.kind}")
    if h.group != group:
        raise MalformedHeader(f"message for group {h.group} arrived at group {group}")
    if h.sender >= size:
        raise MalformedHeader(f"sender rank {h.sender} outside a group of {size}")
    if h.op >= len(OPS) or h.dtype >= len(DTYPES) or not -1 <= h.root < size or h.redop >= len(REDOPS):
        raise MalformedHeader(f"unknown op {h.op}, dtype {h.dtype}, root {h.root} or reduce op {h.redop}")
    return h


def op_code(name: str) -> int:
    return _OP_CODES[name]


def dtype_code(dtype: np.dtype) -> int:
    """The wire code of a NumPy dtype.

    Raises:
        TypeError: the dtype cannot travel (object, structured or unknown dtypes).
    """
    try:
        return _DTYPE_CODES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(
            f"dtype {dtype} is not supported by disttorch.distributed; supported: "
            f"{', '.join(str(d) for d in DTYPES)}"
        ) from None


def dtype_of(code: int) -> np.dtype:
    return DTYPES[code]


@functools.lru_cache(maxsize=4096)
def describe(op: int, dtype: int, numel: int, root: int, redop: int = 0) -> str:
    """Human-readable collective signature, e.g. ``all_reduce(float32[10], op=SUM)``."""
    size = "?" if numel < 0 else str(numel)
    where = f", root={root}" if root >= 0 else ""
    how = f", op={REDOPS[redop]}" if redop else ""
    return f"{OPS[op]}({DTYPES[dtype]}[{size}]{where}{how})"
