"""disttorch.utils.safetensors: the names and checks of safetensors.torch, bf16 included,
round trips with safetensors.torch both ways."""

import json
import os
import struct

import numpy as np
import pytest

import disttorch as dt

st = pytest.importorskip("disttorch.utils.safetensors")
pytest.importorskip("safetensors")


def _tensors():
    g = dt.Generator().manual_seed(0)
    return {
        "w": dt.randn(3, 4, generator=g),
        "d": dt.randn(2, dtype=dt.float64, generator=g),
        "h": dt.randn(5, generator=g).half(),
        "i": dt.arange(6).reshape(2, 3),
        "i8": dt.tensor([-1, 2], dtype=dt.int8),
        "u8": dt.tensor([0, 255], dtype=dt.uint8),
        "b": dt.tensor([True, False]),
        "s": dt.tensor(1.5),
    }


def test_round_trip_file_and_bytes(tmp_path):
    src = _tensors()
    st.save_file(src, tmp_path / "m.safetensors", metadata={"format": "pt"})
    for got in (st.load_file(tmp_path / "m.safetensors"), st.load(st.save(src))):
        assert set(got) == set(src)
        for k, v in src.items():
            assert got[k].dtype == v.dtype and got[k].shape == v.shape
            np.testing.assert_array_equal(got[k].numpy(), v.numpy())
    got = st.load_file(tmp_path / "m.safetensors")
    got["w"][0, 0] = 3.0  # writable


def test_checks_of_safetensors_torch(tmp_path):
    base = dt.randn(4, 4)
    with pytest.raises(RuntimeError, match="share memory"):
        st.save_file({"a": base, "b": base[1]}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="non contiguous"):
        st.save_file({"a": base.t()}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="expected disttorch.Tensor"):
        st.save_file({"a": np.zeros(2)}, tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="dict"):
        st.save([base])
    assert not (tmp_path / "x.safetensors").exists()
    (tmp_path / "bad.safetensors").write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{nope")
    with pytest.raises(RuntimeError, match="bad.safetensors: not a valid safetensors file"):
        st.load_file(tmp_path / "bad.safetensors")
    with pytest.raises(RuntimeError, match="safetensors"):
        dt.load(tmp_path / "bad.safetensors")  # disttorch.load points to load_file


def test_file_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        st.save_file({"a": dt.ones(2)}, tmp_path / "u.safetensors")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "u.safetensors").st_mode & 0o777 == 0o644


@pytest.mark.parity
def test_both_ways_with_safetensors_torch(tmp_path):
    torch = pytest.importorskip("torch")
    sttorch = pytest.importorskip("safetensors.torch")
    src = _tensors()
    st.save_file(src, tmp_path / "d.safetensors")
    t = sttorch.load_file(tmp_path / "d.safetensors")
    for k, v in src.items():
        np.testing.assert_array_equal(t[k].numpy(), v.numpy())
        assert str(t[k].dtype) == "torch." + v.dtype.name
    torch.manual_seed(0)
    tsrc = {
        "w": torch.randn(3, 2),
        "bf": torch.randn(4).bfloat16(),
        "i": torch.arange(3, dtype=torch.int32),
        "u16": torch.arange(3).to(torch.uint16),
    }
    sttorch.save_file(tsrc, tmp_path / "t.safetensors")
    got = st.load_file(tmp_path / "t.safetensors")
    for k, v in tsrc.items():
        want = v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy()
        np.testing.assert_array_equal(np.asarray(got[k]._data, dtype=want.dtype), want)
    assert got["bf"].dtype == getattr(dt, "bfloat16", dt.float32)
    assert got["u16"].dtype == dt.uint16  # disttorch keeps uint16 as it is
    st.save_file({"bf": got["bf"]}, tmp_path / "bf.safetensors")
    back = sttorch.load_file(tmp_path / "bf.safetensors")["bf"]
    np.testing.assert_array_equal(back.float().numpy(), tsrc["bf"].float().numpy())


def test_bfloat16_written_as_bf16(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    arr = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    t = dt.Tensor._make(arr)
    data = st.save({"x": t})
    assert b'"BF16"' in data
    got = st.load(data)["x"]
    np.testing.assert_array_equal(np.asarray(got._data, np.float32), arr.astype(np.float32))


def _crafted(header: dict, data: bytes = bytes(8), length: int | None = None) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def _one(dtype="F32", shape=(2,), offsets=(0, 8)) -> dict:
    return {"a": {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}}


CRAFTED = {
    "offsets past the end": _crafted(_one(offsets=(0, 800))),
    "offsets reversed": _crafted(_one(offsets=(8, 0))),
    "a shape larger than its bytes": _crafted(_one(shape=(3,))),
    "a shape of 2**80 elements": _crafted(_one(shape=(2**40, 2**40))),
    "a negative dimension": _crafted(_one(shape=(-1,))),
    "a header length of 2**62": _crafted({}, b"", length=2**62),
    "two tensors on the same bytes": _crafted({**_one(), "b": _one()["a"]}),
    "an unknown dtype": _crafted(_one(dtype="X9")),
    "eight bytes short": b"\x01\x02",
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_a_crafted_header_is_refused_naming_the_file(tmp_path, case):
    path = tmp_path / "crafted.safetensors"
    path.write_bytes(CRAFTED[case])
    with pytest.raises(RuntimeError, match="crafted.safetensors: not a valid safetensors file"):
        st.load_file(path)
