"""Unit tests of the wire format (no processes started)."""

from __future__ import annotations

import numpy as np
import pytest

from disttorch.distributed.reduce_op import ReduceOp
from disttorch.distributed.wire import frames as wire


def header(**changes) -> wire.Header:
    h = wire.Header(
        wire.DATA, 0, 7, 0, wire.op_code("all_reduce"), wire.dtype_code(np.float32), -1, 10, 0, 1, 40
    )
    return h._replace(**changes)


def test_header_round_trip_and_description():
    h = header()
    assert wire.unpack(wire.pack(h), group=0, size=2) == h
    assert len(wire.pack(h)) == wire.HEADER_SIZE == 53
    assert wire.describe(h.op, h.dtype, h.numel, h.root) == "all_reduce(float32[10])"
    assert (
        wire.describe(h.op, h.dtype, h.numel, h.root, wire.REDOPS.index("MAX"))
        == "all_reduce(float32[10], op=MAX)"
    )
    with_op = h._replace(redop=wire.REDOPS.index("AVG"))
    assert wire.unpack(wire.pack(with_op), group=0, size=2) == with_op
    assert wire.describe(wire.op_code("broadcast"), h.dtype, 3, 1) == "broadcast(float32[3], root=1)"


@pytest.mark.parametrize(
    "frame,message",
    [
        (b"x" * 10, "header frame of 10 bytes"),
        (b"XX" + wire.pack(header())[2:], "bad magic"),
        (wire.pack(header(kind=9)), "unknown message kind"),
        (wire.pack(header(group=3)), "group 3 arrived at group 0"),
        (wire.pack(header(sender=5)), "sender rank 5 outside a group of 2"),
        (wire.pack(header(op=200)), "unknown op"),
    ],
)
def test_malformed_headers_are_rejected(frame, message):
    with pytest.raises(wire.MalformedHeader, match=message):
        wire.unpack(frame, group=0, size=2)


def test_unsupported_dtype_names_the_supported_ones():
    with pytest.raises(TypeError, match="not supported.*float32"):
        wire.dtype_code(np.dtype("U3"))


def test_reduce_op_ufuncs():
    assert ReduceOp.SUM.ufunc(np.float32) is np.add
    assert ReduceOp.MAX.ufunc(np.bool_) is np.logical_or
    with pytest.raises(TypeError, match="AVG needs a floating-point"):
        ReduceOp.AVG.ufunc(np.int64)
    with pytest.raises(TypeError, match="BAND needs an integer"):
        ReduceOp.BAND.ufunc(np.float64)
