"""Unit tests of the wire format (no processes started)."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from disttorch.distributed.reduce_ops import ReduceOp
from disttorch.distributed.wire import frames as wire


def header(**changes) -> wire.Header:
    h = wire.Header(
        wire.DATA, 0, 7, 0, wire.op_code("all_reduce"), wire.dtype_code(np.float32), -1, 10, 0, 1, 40
    )
    return h._replace(**changes)


def test_header_round_trip_and_description():
    h = header()
    assert wire.unpack(wire.pack(h), group=0, size=2) == h
    assert len(wire.pack(h)) == wire.HEADER_SIZE == 69
    assert wire.describe(h.op, h.dtype, h.numel, h.root) == "all_reduce(float32[10])"
    assert (
        wire.describe(h.op, h.dtype, h.numel, h.root, wire.REDOPS.index("MAX"))
        == "all_reduce(float32[10], op=MAX)"
    )
    with_op = h._replace(redop=wire.REDOPS.index("AVG"))
    assert wire.unpack(wire.pack(with_op), group=0, size=2) == with_op
    assert wire.describe(wire.op_code("broadcast"), h.dtype, 3, 1) == "broadcast(float32[3], root=1)"


def _with_crc(body: bytes) -> bytes:
    return body + struct.pack("<I", zlib.crc32(body))


@pytest.mark.parametrize(
    "frame,message",
    [
        (b"x" * 10, "header frame of 10 bytes"),
        (_with_crc(b"XX" + wire.pack(header())[2:-4]), "bad magic"),
        (wire.pack(header(kind=9)), "unknown message kind"),
        (wire.pack(header(group=3)), "group 3 arrived at group 0"),
        (wire.pack(header(sender=5)), "sender rank 5 outside a group of 2"),
        (wire.pack(header(op=200)), "unknown op"),
    ],
)
def test_malformed_headers_are_rejected(frame, message):
    with pytest.raises(wire.MalformedHeader, match=message):
        wire.unpack(frame, group=0, size=2)


def test_a_header_of_another_version_names_both_versions():
    """A rank of another disttorch: its messages fail loudly (they were dropped, and the
    ranks waited out their timeout)."""
    frame = wire.pack(header())
    same_size = _with_crc(frame[:2] + bytes([wire.VERSION + 1]) + frame[3:-4])
    for other in (same_size, frame[:2] + bytes([wire.VERSION - 1]) + b"a shorter layout"):
        with pytest.raises(
            wire.VersionMismatch, match=f"wire version \\d+ where this rank speaks {wire.VERSION}"
        ):
            wire.unpack(other, group=0, size=2)


def test_a_flipped_bit_anywhere_in_a_header_fails_its_crc():
    frame = wire.pack(header())
    for bit in range(len(frame) * 8):
        damaged = bytearray(frame)
        damaged[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises((wire.DamagedStream, wire.MalformedHeader)):
            wire.unpack(bytes(damaged), group=0, size=2)


@pytest.mark.parametrize("nbytes", [0, 1, 7, 8, 9, 4096 + 3])
def test_a_flipped_bit_anywhere_in_a_payload_changes_its_checksum(nbytes):
    payload = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    good = wire.checksum([payload])
    assert wire.checksum([payload[:8], payload[8:]]) == good  # split at a word boundary
    for bit in range(0, nbytes * 8, 7):
        damaged = payload.copy()
        damaged[bit // 8] ^= 1 << (bit % 8)
        assert wire.checksum([damaged]) != good


def test_unsupported_dtype_names_the_supported_ones():
    with pytest.raises(TypeError, match="not supported.*float32"):
        wire.dtype_code(np.dtype("U3"))


def test_reduce_op_ufuncs():
    assert ReduceOp.SUM.ufunc(np.float32) is np.add
    assert ReduceOp.MAX.ufunc(np.bool_) is np.logical_or
    with pytest.raises(RuntimeError, match="AVG needs a floating-point"):
        ReduceOp.AVG.ufunc(np.int64)
    # PyTorch's gloo words first (its all_reduce of a bool or integer tensor with AVG)
    with pytest.raises(
        RuntimeError, match="^result type Float can't be cast to the desired output type Bool: "
    ):
        ReduceOp.AVG.ufunc(np.bool_)
    with pytest.raises(RuntimeError, match="Cannot use ReduceOp.BAND with non-integral"):
        ReduceOp.BAND.ufunc(np.float64)
