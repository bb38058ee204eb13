"""``torch.serialization.get_unsafe_globals_in_checkpoint``: the globals a checkpoint names
that a ``weights_only`` load refuses, read without unpickling (timm asks it to explain a
refused load)."""

from __future__ import annotations

import argparse
import collections
import io
import pickle

import pytest

import disttorch as dt
from disttorch import serialization


class _Box:
    def __init__(self) -> None:
        self.v = 1


def _checkpoint(protocol: int = 2) -> io.BytesIO:
    buf = io.BytesIO()
    obj = {
        "args": argparse.Namespace(lr=1),
        "w": dt.ones(2),
        "od": collections.OrderedDict(a=1),
        "box": _Box(),
        "dtype": dt.float16,
        "size": dt.Size([2]),
    }
    dt.save(obj, buf, pickle_protocol=protocol)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("protocol", [2, 4])
def test_lists_the_globals_a_weights_only_load_refuses(protocol):
    found = serialization.get_unsafe_globals_in_checkpoint(_checkpoint(protocol))
    assert found == ["argparse.Namespace", f"{__name__}._Box"]
    with serialization.safe_globals([argparse.Namespace]):
        assert serialization.get_unsafe_globals_in_checkpoint(_checkpoint(protocol)) == [f"{__name__}._Box"]


def test_a_whole_module_is_named_as_pytorch_names_it(tmp_path):
    path = tmp_path / "linear.pt"
    dt.save(dt.nn.Linear(2, 2), path)
    assert serialization.get_unsafe_globals_in_checkpoint(str(path)) == ["torch.nn.modules.linear.Linear"]


def test_refuses_what_is_no_checkpoint():
    with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
        serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(pickle.dumps([1])))


def test_same_list_as_pytorch(torch):
    theirs = torch.serialization.get_unsafe_globals_in_checkpoint(_checkpoint())
    assert sorted(theirs) == serialization.get_unsafe_globals_in_checkpoint(_checkpoint())
