"""PyTorch's file format both ways: files torch.save wrote load in disttorch with identical
values (committed fixtures, plus files generated here when PyTorch is installed), and
disttorch's files load in PyTorch with weights_only=True."""

import io
import os
import zipfile

import numpy as np
import pytest

import disttorch as dt

FIX = os.path.join(os.path.dirname(__file__), "fixtures")


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIX, "expected.npz")) as z:
        return {k: z[k] for k in z.files}


def _np(t):
    return np.asarray(t._data, dtype=np.float32) if t._data.dtype.name == "bfloat16" else t._data


@pytest.mark.parametrize("name", ["torch_state_dict.pt", "torch_state_dict_legacy.pt"])
def test_torch_state_dict_fixture_loads_with_identical_values(name, expected):
    sd = dt.load(os.path.join(FIX, name))
    assert list(sd) == [k[3:] for k in expected if k.startswith("sd.")]
    for k, v in sd.items():
        assert isinstance(v, dt.Tensor)
        np.testing.assert_array_equal(v.numpy(), expected["sd." + k])
        assert v.numpy().dtype == expected["sd." + k].dtype
    assert sd._metadata[""] == {"version": 1}
    assert sd._metadata["1"]["version"] == 2  # BatchNorm's version, as PyTorch records it
    model = dt.nn.Sequential(dt.nn.Linear(4, 3), dt.nn.BatchNorm1d(3), dt.nn.Linear(3, 2))
    model.load_state_dict(sd)
    np.testing.assert_array_equal(model[1].running_var.numpy(), expected["sd.1.running_var"])


def test_dtypes_and_views_fixture(expected):
    t = dt.load(os.path.join(FIX, "torch_dtypes_views.pt"))
    for k, v in t.items():
        np.testing.assert_array_equal(_np(v), expected["t." + k])
    want = {
        "f32": dt.float32,
        "f64": dt.float64,
        "f16": dt.float16,
        "i64": dt.int64,
        "i32": dt.int32,
        "i16": dt.int16,
        "i8": dt.int8,
        "u8": dt.uint8,
        "b": dt.bool,
    }
    for k, d in want.items():
        assert t[k].dtype == d
    assert t["bf16"].dtype == getattr(dt, "bfloat16", dt.float32)  # float32 until the tree has bf16
    assert t["scalar"].shape == () and t["scalar"].item() == 2.5
    assert t["empty"].shape == (0, 3)
    # views of one storage share memory after loading, as in PyTorch
    assert t["col"].stride() == (4,) and t["tr"].stride() == (1, 4)
    t["base"][1, 2] = 100.0
    assert t["row"][2].item() == 100.0 and t["col"][1].item() == 100.0 and t["tr"][2, 1].item() == 100.0


def test_checkpoint_fixture_with_optimizer_scheduler_and_nesting(expected):
    ck = dt.load(os.path.join(FIX, "torch_checkpoint.pt"))
    assert ck["epoch"] == 3
    assert ck["nested"][0] == (1, "a")
    np.testing.assert_array_equal(ck["nested"][1]["k"].numpy(), np.ones(2, np.float32))
    opt = ck["optimizer"]
    assert set(opt) == {"state", "param_groups"}
    assert opt["param_groups"][0]["params"] == [0, 1, 2, 3, 4, 5]
    assert opt["param_groups"][0]["lr"] == pytest.approx(0.005)
    for i, st in opt["state"].items():
        for k, v in st.items():
            np.testing.assert_array_equal(v.numpy(), expected[f"opt.{i}.{k}"])
    assert opt["state"][0]["step"].shape == () and opt["state"][0]["step"].item() == 3.0
    assert ck["scheduler"]["last_epoch"] == 3 and ck["scheduler"]["step_size"] == 2


def test_map_location_forms():
    path = os.path.join(FIX, "torch_state_dict.pt")
    seen = []
    for loc in [
        "cpu",
        dt.device("cpu"),
        {"cpu": "cpu"},
        lambda s, where: seen.append(where) or s,
        lambda s, where: None,
    ]:
        assert set(dt.load(path, map_location=loc)) == set(dt.load(path))
    assert seen and set(seen) == {"cpu"}
    with pytest.raises(RuntimeError, match=r"CUDA device but torch.cuda.is_available\(\) is False"):
        dt.load(path, map_location="cuda:0")
    with pytest.raises(RuntimeError, match="CUDA device"):
        dt.load(path, map_location={"cpu": "cuda:1"})
    with pytest.raises(TypeError, match="map_location"):
        dt.load(path, map_location=3)


def test_mmap_load_shares_nothing_with_the_file(tmp_path):
    path = tmp_path / "m.pt"
    dt.save({"w": dt.arange(1000.0), "v": dt.arange(10)}, path)
    ck = dt.load(path, mmap=True)
    np.testing.assert_array_equal(ck["w"].numpy(), np.arange(1000.0, dtype=np.float32))
    ck["w"][0] = 5.0  # copy-on-write: the file keeps its bytes
    assert dt.load(path)["w"][0].item() == 0.0
    with pytest.raises(ValueError, match="file path"):
        dt.load(io.BytesIO(path.read_bytes()), mmap=True)


def test_saved_file_layout_is_pytorchs(tmp_path):
    base = dt.arange(12.0).reshape(3, 4)
    dt.save(
        {"a": base, "row": base[1], "p": dt.nn.Parameter(dt.ones(2)), "i": dt.arange(3)}, tmp_path / "x.pt"
    )
    with zipfile.ZipFile(tmp_path / "x.pt") as zf:
        names = set(zf.namelist())
        assert {
            "archive/data.pkl",
            "archive/byteorder",
            "archive/version",
            "archive/.format_version",
        } <= names
        data = sorted(n for n in names if n.startswith("archive/data/"))
        assert len(data) == 3  # base and its row share one storage
        assert zf.read("archive/byteorder") == b"little"
        pkl = zf.read("archive/data.pkl")
        assert b"torch._utils\n_rebuild_tensor_v2" in pkl and b"_rebuild_parameter" in pkl
        assert b"disttorch" not in pkl
        with open(tmp_path / "x.pt", "rb") as f:
            for info in zf.infolist():
                if info.filename.startswith("archive/data/"):
                    f.seek(info.header_offset + 26)
                    n, m = np.frombuffer(f.read(4), np.uint16)
                    assert (info.header_offset + 30 + n + m) % 64 == 0  # aligned for mmap


def test_dtck_files_of_earlier_versions_still_load():
    ck = dt.load(os.path.join(FIX, "disttorch_dtck_v1.pt"))
    with np.load(os.path.join(FIX, "disttorch_dtck_v1_expected.npz")) as z:
        np.testing.assert_array_equal(ck["model"]["weight"].numpy(), z["w"])
        np.testing.assert_array_equal(ck["model"]["bias"].numpy(), z["b"])
    assert ck["step"] == 7 and ck["names"] == ("a", "b") and ck["dtype"] is dt.float64
    assert isinstance(ck["p"], dt.nn.Parameter) and ck["p"].requires_grad
    np.testing.assert_array_equal(ck["arr"], np.arange(4, dtype=np.int32))


def test_round_trip_keeps_types_and_sharing(tmp_path):
    base = dt.randn(4, 5)
    obj = {
        "base": base,
        "t": base.t(),
        "slice": base[1:3, ::2],
        "p": dt.nn.Parameter(dt.randn(3)),
        "frozen": dt.nn.Parameter(dt.randn(2), requires_grad=False),
        "size": dt.Size([2, 3]),
        "dtype": dt.int16,
        "dev": dt.device("cpu"),
        "b": b"\x00\xff",
        "s": {1, 2},
        "c": 1 + 2j,
    }
    dt.save(obj, tmp_path / "r.pt")
    r = dt.load(tmp_path / "r.pt")
    for k in ("base", "t", "slice"):
        np.testing.assert_array_equal(r[k].numpy(), obj[k].numpy())
    assert isinstance(r["p"], dt.nn.Parameter) and r["p"].requires_grad
    assert isinstance(r["frozen"], dt.nn.Parameter) and not r["frozen"].requires_grad
    assert r["size"] == dt.Size([2, 3]) and isinstance(r["size"], dt.Size)
    assert r["dtype"] is dt.int16 and r["dev"] == dt.device("cpu")
    assert r["b"] == b"\x00\xff" and r["s"] == {1, 2} and r["c"] == 1 + 2j
    r["base"][2, 2] = -1.0
    assert r["t"][2, 2].item() == -1.0 and r["slice"][1, 1].item() == -1.0


def test_non_leaf_tensor_requiring_grad_saves_as_a_leaf_that_requires_grad(tmp_path):
    """As PyTorch's torch.save (the saved-tensor hooks tutorial saves what pack_hook gets)."""
    x = dt.randn(3, requires_grad=True)
    y = x * 2
    dt.save({"y": y}, tmp_path / "y.pt")
    back = dt.load(tmp_path / "y.pt")["y"]
    assert back.requires_grad and back.is_leaf and back.equal(y.detach())


@pytest.mark.parity
def test_non_leaf_tensor_requiring_grad_loads_in_pytorch_as_saved_there(tmp_path):
    torch = pytest.importorskip("torch")
    dt.save(dt.tensor([1.0, 2.0], requires_grad=True) * 3, tmp_path / "ours.pt")
    torch.save(torch.tensor([1.0, 2.0], requires_grad=True) * 3, tmp_path / "theirs.pt")
    ours, theirs = torch.load(tmp_path / "ours.pt"), torch.load(tmp_path / "theirs.pt")
    assert (ours.requires_grad, ours.is_leaf, ours.tolist()) == (
        theirs.requires_grad,
        theirs.is_leaf,
        theirs.tolist(),
    )


# ------------------------------------------------------------------ with PyTorch installed
_DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
    "uint16",
    "uint32",
    "uint64",
]


@pytest.mark.parity
@pytest.mark.parametrize("legacy", [False, True])
def test_every_dtype_written_by_torch_loads_identically(legacy, tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    src = {}
    for name in _DTYPES:
        if legacy and name.startswith("uint") and name != "uint8":
            continue  # PyTorch's legacy format cannot hold the newer unsigned types
        values = torch.randn(3, 4) * 100
        src[name] = (values.abs() if name.startswith("uint") else values).to(getattr(torch, name))
    src["view"] = src["float32"][:, 1]
    torch.save(src, tmp_path / "t.pt", _use_new_zipfile_serialization=not legacy)
    got = dt.load(tmp_path / "t.pt")
    for k, v in src.items():
        want = v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy()
        np.testing.assert_array_equal(_np(got[k]), want)
    got["float32"][0, 1] = 42.0
    assert got["view"][0].item() == 42.0


@pytest.mark.parity
def test_disttorch_files_load_in_torch_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    base = dt.randn(3, 4)
    model = dt.nn.Sequential(dt.nn.Linear(4, 3), dt.nn.BatchNorm1d(3))
    obj = {
        "model": model.state_dict(),
        "base": base,
        "col": base[:, 1],
        "i": dt.arange(5),
        "b": dt.tensor([True, False]),
        "h": dt.randn(2).half(),
        "d": dt.randn(2, dtype=dt.float64),
        "p": dt.nn.Parameter(dt.randn(2)),
        "dtype": dt.float16,
        "size": dt.Size([3]),
        "n": [1, 2.5, "x"],
    }
    dt.save(obj, tmp_path / "d.pt")
    t = torch.load(tmp_path / "d.pt", weights_only=True)
    for k in ("base", "col", "i", "b", "h", "d"):
        assert isinstance(t[k], torch.Tensor)
        np.testing.assert_array_equal(t[k].numpy(), obj[k].numpy())
        assert str(t[k].dtype) == "torch." + obj[k].dtype.name
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(t["model"][k].numpy(), v.numpy())
    assert isinstance(t["p"], torch.nn.Parameter) and t["p"].requires_grad
    assert t["dtype"] is torch.float16 and t["size"] == torch.Size([3]) and t["n"] == [1, 2.5, "x"]
    t["base"][2, 1] = 7.0
    assert t["col"][2].item() == 7.0  # one storage in the file
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    tm.load_state_dict(t["model"])
    ts = torch.load(tmp_path / "d.pt", mmap=True, weights_only=True)  # storages aligned for mmap
    np.testing.assert_array_equal(ts["base"].numpy(), obj["base"].numpy())


@pytest.mark.parity
def test_bfloat16_round_trip_with_torch(tmp_path):
    torch = pytest.importorskip("torch")
    src = torch.randn(7).bfloat16()
    torch.save({"x": src}, tmp_path / "b.pt")
    x = dt.load(tmp_path / "b.pt")["x"]
    np.testing.assert_array_equal(np.asarray(x._data, np.float32), src.float().numpy())
    dt.save({"x": x}, tmp_path / "c.pt")
    back = torch.load(tmp_path / "c.pt")["x"]
    assert back.dtype == (torch.bfloat16 if hasattr(dt, "bfloat16") else torch.float32)
    np.testing.assert_array_equal(back.float().numpy(), src.float().numpy())


def _gpu_file():
    """A file whose storages were saved on 'cuda:0' (as a GPU run writes them)."""
    from disttorch.serialization import zip_writer

    class OnGpu(zip_writer._Pickler):
        def persistent_id(self, obj):
            pid = super().persistent_id(obj)
            return pid if pid is None else pid[:3] + ("cuda:0",) + pid[4:]

    buf = io.BytesIO()
    real = zip_writer._Pickler
    zip_writer._Pickler = OnGpu
    try:
        zip_writer.write({"w": dt.arange(3.0)}, buf)
    finally:
        zip_writer._Pickler = real
    return buf.getvalue()


def test_file_saved_on_a_gpu_needs_map_location():
    data = _gpu_file()
    with pytest.raises(RuntimeError, match="map_location"):
        dt.load(io.BytesIO(data))
    for loc in ("cpu", {"cuda:0": "cpu"}, lambda s, where: s.cpu()):
        assert dt.load(io.BytesIO(data), map_location=loc)["w"].tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parity
def test_tensor_attributes_saved_by_torch_are_restored(tmp_path):
    torch = pytest.importorskip("torch")
    t = torch.arange(3.0)
    t.note = "scaled"
    torch.save({"t": t}, tmp_path / "a.pt")
    got = dt.load(tmp_path / "a.pt")["t"]
    assert got.tolist() == [0.0, 1.0, 2.0] and got.note == "scaled"


@pytest.mark.parity
def test_torchscript_archive_is_named_as_such(tmp_path):
    torch = pytest.importorskip("torch")
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 1)), tmp_path / "ts.pt")
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        dt.load(tmp_path / "ts.pt")
