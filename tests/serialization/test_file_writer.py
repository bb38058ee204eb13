"""``torch._C.PyTorchFileWriter``: a checkpoint written record by record (a storage from its
``data_ptr()``, then ``data.pkl``) loads with ``torch.load`` and reads back record by record."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import disttorch as dt
from disttorch._C import PyTorchFileReader, PyTorchFileWriter


def _write(path) -> None:
    values = dt.arange(6, dtype=dt.float32)
    writer = PyTorchFileWriter(str(path))
    writer.write_record("data/0", values.untyped_storage().data_ptr(), 24)
    data = pickle.dumps({"step": 3, "name": "x"}, protocol=2)
    writer.write_record("data.pkl", data, len(data))
    with pytest.raises(RuntimeError, match="twice"):
        writer.write_record("data.pkl", data, len(data))
    writer.write_end_of_file()
    assert writer.archive_name() == "ckpt"
    assert writer.get_all_written_records() == {"data/0", "data.pkl", "version", ".data/serialization_id"}


def test_records_written_one_by_one_load_back(tmp_path):
    path = tmp_path / "ckpt.pt"
    _write(path)
    assert dt.load(path) == {"step": 3, "name": "x"}
    reader = PyTorchFileReader(str(path))
    got = reader.get_storage_from_record("data/0", 6, dt.float32)
    np.testing.assert_array_equal(got.numpy(), np.arange(6, dtype=np.float32))
    assert len(reader.serialization_id()) == 40


def test_pytorch_reads_the_archive(tmp_path, torch):
    path = tmp_path / "ckpt.pt"
    _write(path)
    assert torch.load(path) == {"step": 3, "name": "x"}
    buf = io.BytesIO()
    writer = PyTorchFileWriter(buf)
    data = pickle.dumps([1, 2], protocol=2)
    writer.write_record("data.pkl", data, len(data))
    writer.write_end_of_file()
    assert writer.archive_name() == "archive"
    assert torch.load(io.BytesIO(buf.getvalue())) == [1, 2]
