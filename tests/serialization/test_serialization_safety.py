"""No file runs code, and a load's memory is bounded by the file: malicious pickles in
every format and field are refused before anything runs; one storage referenced 2,000
times is held once; compressed records are refused; writes follow the umask and name the
path when they fail."""

import collections
import errno
import hashlib
import io
import os
import pickle
import struct
import sys
import tracemalloc
import zipfile

import numpy as np
import pytest

import disttorch as dt
from disttorch.serialization import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

MARKER = []


def _mark(*args):
    MARKER.append(args)
    return 0


class _Evil:
    """Unpickling calls os.system(cmd) that creates a file, and the test-local _mark."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (os.system, (f"touch {self.target}",))


@pytest.fixture
def target(tmp_path):
    path = tmp_path / "pwned"
    yield path
    assert not path.exists(), "code from the file ran"


def _dtck(structure: bytes, arrays: bytes = b"") -> bytes:
    payload = struct.pack("<4sIQ", b"DTCK", 1, len(structure)) + structure + arrays
    return payload + hashlib.sha256(payload).digest()


def _legacy(obj_pickle: bytes, keys=()) -> bytes:
    return (
        pickle.dumps(0x1950A86A20F9469CFC6C, 2)
        + pickle.dumps(1001, 2)
        + pickle.dumps({"protocol_version": 1001, "little_endian": True}, 2)
        + obj_pickle
        + pickle.dumps(list(keys), 2)
    )


@pytest.mark.parametrize("field", ["model", "optimizer", "rng", "extra"])
def test_malicious_object_in_any_checkpoint_field_is_refused(field, target, tmp_path):
    ck = {"model": {"w": dt.randn(2)}, "optimizer": {"state": {}}, "rng": [{"numpy": 1}], "extra": None}
    ck[field] = {"deep": [1, (_Evil(target),)]}
    dt.save(ck, tmp_path / "ck.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)Weights only load failed.*posix.system|os.system"):
        dt.load(tmp_path / "ck.pt")
    with pytest.raises(pickle.UnpicklingError):
        dt.load(tmp_path / "ck.pt", weights_only=None)


def test_malicious_pickle_in_every_format_is_refused(target):
    evil = pickle.dumps({"w": _Evil(target)}, 2)
    files = {"dtck": _dtck(evil), "legacy": _legacy(evil)}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", evil)
        zf.writestr("archive/byteorder", "little")
    files["zip"] = buf.getvalue()
    for name, data in files.items():
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            dt.load(io.BytesIO(data))
        assert not target.exists(), name


def test_globals_of_unimported_modules_are_not_imported():
    name = "dt_never_imported_module_xyz"
    data = b"\x80\x02c" + name.encode() + b"\nthing\n."
    with pytest.raises(pickle.UnpicklingError, match=name):
        dt.load(io.BytesIO(_dtck(data)))
    assert name not in sys.modules


@pytest.mark.parity
def test_malicious_torch_files_are_refused(target, tmp_path):
    torch = pytest.importorskip("torch")
    for legacy in (False, True):
        path = tmp_path / f"evil{legacy}.pt"
        torch.save({"w": torch.ones(2), "x": _Evil(target)}, path, _use_new_zipfile_serialization=not legacy)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            dt.load(path)


def test_bytearray_of_a_huge_count_is_refused():
    data = b"\x80\x02c__builtin__\nbytearray\n(J\x00\x00\x00@tR."  # bytearray(2**30)
    with pytest.raises(pickle.UnpicklingError, match="must be built from bytes"):
        dt.load(io.BytesIO(_dtck(data)))


def _peak_mib(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_one_storage_referenced_2000_times_is_held_once(tmp_path):
    base = dt.zeros(2**18)  # 1 MiB
    dt.save([base[:] for _ in range(2000)], tmp_path / "amp.pt")  # 2,000 views of one storage
    size = os.path.getsize(tmp_path / "amp.pt")
    assert size < 2 * 2**20
    out = []
    peak = _peak_mib(lambda: out.append(dt.load(tmp_path / "amp.pt")))
    assert len(out[0]) == 2000 and out[0][1999].shape == (2**18,)
    assert peak < 16, f"loading a {size} byte file peaked at {peak:.0f} MiB"
    out[0][0][5] = 1.0
    assert out[0][1999][5].item() == 1.0


def test_amplification_in_the_dtck_format_is_bounded():
    pid = ("tensor", "<f4", (2**18,), 0, 2**20, False)

    class P(pickle.Pickler):
        def persistent_id(self, obj):
            return pid if obj == "ref" else None

    buf = io.BytesIO()
    P(buf, 4).dump(["ref"] * 2000)
    data = _dtck(buf.getvalue(), bytes(2**20))
    out = []
    peak = _peak_mib(lambda: out.append(dt.load(io.BytesIO(data))))
    assert len(out[0]) == 2000 and peak < 16


def test_legacy_storage_claiming_more_than_the_file_is_refused():
    from disttorch.serialization.zip_writer import TorchGlobal, _Pickler

    class P(_Pickler):
        def persistent_id(self, obj):
            if obj == "ref":
                return ("storage", TorchGlobal("torch", "FloatStorage"), "k", "cpu", 2**40, None)
            return None

    buf = io.BytesIO()
    P(buf, 2).dump(["ref"])
    data = _legacy(buf.getvalue(), ["k"]) + struct.pack("<q", 2**40) + bytes(64)
    out = []
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        _peak_mib(lambda: out.append(dt.load(io.BytesIO(data))))


@pytest.mark.parametrize(
    ("size", "stride"),
    [((2**62, 2**62), (0, 0)), ((1,), (2**62,)), ((2, 1), (1, 2**63 - 1)), ((2.5,), (1,)), ((2,), ("1",))],
    ids=["too-many-elements", "stride-bytes-overflow", "largest-stride", "float-size", "text-stride"],
)
def test_tensor_geometry_numpy_cannot_index_is_refused(size, stride):
    """Sizes and strides inside the storage's bounds that no array can have, or not integers
    (PyTorch refuses them too; int() made a size of 2.5 a shape of 2)."""
    from disttorch.serialization.zip_writer import TorchGlobal, _Pickler

    class Rebuild:
        def __reduce__(self):
            return TorchGlobal("torch._utils", "_rebuild_tensor_v2"), ("ref", 0, size, stride, False, None)

    class P(_Pickler):
        def persistent_id(self, obj):
            return ("storage", TorchGlobal("torch", "FloatStorage"), "0", "cpu", 4) if obj == "ref" else None

    pkl = io.BytesIO()
    P(pkl, 2).dump({"w": Rebuild()})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pkl.getvalue())
        zf.writestr("archive/data/0", bytes(16))
    with pytest.raises(pickle.UnpicklingError, match=r"invalid tensor geometry: size \("):
        dt.load(io.BytesIO(buf.getvalue()))


@pytest.mark.parametrize("name", ["_data", "grad_fn", "_version_box", "_base", "_hooks"])
def test_saved_attributes_cannot_overwrite_a_tensors_internals(name):
    """A tensor's saved Python attributes are set on it at load; a crafted file naming one of
    its internal slots made a broken tensor (its array a list, a fake grad_fn...)."""
    from disttorch.serialization.zip_writer import TorchGlobal, _Pickler

    tensor_args = ("ref", 0, (4,), (1,), False, None)
    rebuild = TorchGlobal("torch._utils", "_rebuild_tensor_v2")

    class Rebuild:
        def __reduce__(self):
            args = (rebuild, TorchGlobal("torch", "Tensor"), tensor_args, {name: 1})
            return TorchGlobal("torch._tensor", "_rebuild_from_type_v2"), args

    class P(_Pickler):
        def persistent_id(self, obj):
            return ("storage", TorchGlobal("torch", "FloatStorage"), "0", "cpu", 4) if obj == "ref" else None

    pkl = io.BytesIO()
    P(pkl, 2).dump({"w": Rebuild()})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pkl.getvalue())
        zf.writestr("archive/data/0", bytes(16))
    with pytest.raises(pickle.UnpicklingError, match=f"'{name}' would overwrite its internal state"):
        dt.load(io.BytesIO(buf.getvalue()))


def test_compressed_records_are_refused_not_inflated(tmp_path):
    """A deflated record could expand 1000-fold; PyTorch's writers never compress."""
    dt.save({"w": dt.zeros(100000)}, tmp_path / "w.pt")
    buf = io.BytesIO()
    with zipfile.ZipFile(tmp_path / "w.pt") as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            deflate = item.filename == "archive/data/0"
            dst.writestr(
                item.filename,
                src.read(item.filename),
                compress_type=zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED,
            )
    assert len(buf.getvalue()) < 10000
    with pytest.raises(RuntimeError, match="compressed"):
        dt.load(io.BytesIO(buf.getvalue()))


def test_record_size_must_match_the_pickle(tmp_path):
    dt.save({"w": dt.zeros(10)}, tmp_path / "w.pt")
    buf = io.BytesIO()
    with zipfile.ZipFile(tmp_path / "w.pt") as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            dst.writestr(item.filename, data[:8] if item.filename == "archive/data/0" else data)
    with pytest.raises(RuntimeError, match="record archive/data/0 holds 8 bytes"):
        dt.load(io.BytesIO(buf.getvalue()))


def test_safe_globals_admit_a_whole_pickled_model(tmp_path):
    model = _TinyNet()
    dt.save(model, tmp_path / "model.pt")
    with pytest.raises(pickle.UnpicklingError, match="_TinyNet"):
        dt.load(tmp_path / "model.pt")
    with safe_globals([_TinyNet, dt.nn.Linear, dt.nn.ReLU]):
        assert _TinyNet in get_safe_globals()
        loaded = dt.load(tmp_path / "model.pt")
    assert get_safe_globals() == []
    x = dt.randn(3, 4)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    add_safe_globals([_TinyNet, dt.nn.Linear, dt.nn.ReLU])
    try:
        assert isinstance(dt.load(tmp_path / "model.pt"), _TinyNet)
    finally:
        clear_safe_globals()
    assert get_safe_globals() == []
    assert isinstance(dt.load(tmp_path / "model.pt", weights_only=False), _TinyNet)


class _TinyNet(dt.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = dt.nn.Linear(4, 5), dt.nn.ReLU(), dt.nn.Linear(5, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


# ------------------------------------------------------------------ writing
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_files_follow_the_umask(umask, tmp_path):
    old = os.umask(umask)
    try:
        dt.save({"w": dt.ones(2)}, tmp_path / "u.pt")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "u.pt").st_mode & 0o777 == 0o666 & ~umask


def test_overwriting_keeps_the_files_mode(tmp_path):
    path = tmp_path / "m.pt"
    dt.save({"w": dt.ones(2)}, path)
    os.chmod(path, 0o640)
    dt.save({"w": dt.zeros(2)}, path)
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_saving_through_a_link_writes_the_file_it_names_and_keeps_the_link(tmp_path):
    # as PyTorch's torch.save (open() follows links): a link chain into another folder, and a
    # dangling link, which names the file to create
    (tmp_path / "disk").mkdir()
    dt.save({"w": 1}, tmp_path / "disk" / "ck.pt")
    os.symlink("disk/ck.pt", tmp_path / "mid.pt")
    os.symlink(tmp_path / "mid.pt", tmp_path / "latest.pt")
    os.symlink("disk/new.pt", tmp_path / "dangling.pt")
    dt.save({"w": 2}, tmp_path / "latest.pt")
    dt.save({"w": 3}, tmp_path / "dangling.pt")
    assert os.path.islink(tmp_path / "latest.pt") and os.path.islink(tmp_path / "dangling.pt")
    assert dt.load(tmp_path / "disk" / "ck.pt") == {"w": 2}
    assert dt.load(tmp_path / "disk" / "new.pt") == {"w": 3}
    assert sorted(os.listdir(tmp_path)) == ["dangling.pt", "disk", "latest.pt", "mid.pt"]
    os.symlink("loop.pt", tmp_path / "loop.pt")
    with pytest.raises(OSError, match="could not write") as info:
        dt.save({"w": 4}, tmp_path / "loop.pt")
    assert info.value.errno == errno.ELOOP


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to plant another user's link"
)
def test_another_users_link_in_a_shared_sticky_folder_is_not_followed(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    os.chown(shared, 12346, 12346)
    os.symlink(tmp_path / "victim.pt", shared / "ck.pt")
    os.lchown(shared / "ck.pt", 12345, 12345)
    with pytest.raises(PermissionError, match="could not write"):
        dt.save({"w": 1}, shared / "ck.pt")
    assert not (tmp_path / "victim.pt").exists()


def test_full_disk_error_names_the_path(tmp_path, monkeypatch):
    path = tmp_path / "full.pt"

    def enospc(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", enospc)
    with pytest.raises(OSError, match="full.pt") as info:
        dt.save({"w": dt.ones(10)}, path)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []  # no temporary file left behind


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_device_through_a_file_object_names_it():
    with open("/dev/full", "wb", buffering=0) as f, pytest.raises(OSError, match="/dev/full") as info:
        dt.save({"w": dt.ones(100)}, f)
    assert info.value.errno == errno.ENOSPC


def test_unwritable_folder_error_names_the_path(tmp_path):
    with pytest.raises(OSError, match="missing"):
        dt.save({"w": dt.ones(1)}, tmp_path / "missing" / "x.pt")


def test_wrong_files_say_what_they_are(tmp_path):
    cases = {
        "empty.pt": (b"", "empty"),
        "st.pt": (b"\x10\x00\x00\x00\x00\x00\x00\x00{}      ", "safetensors"),
        "text.pt": (b"hello world", "not a PyTorch or disttorch checkpoint"),
        "npy.pt": (b"\x93NUMPY\x01\x00", "NumPy"),
        "plain.pkl": (pickle.dumps({"a": 1}), "pickle file but not one torch.save"),
    }
    for name, (data, msg) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(RuntimeError, match=msg):
            dt.load(tmp_path / name)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(RuntimeError, match="zip archive but not a PyTorch checkpoint"):
        dt.load(io.BytesIO(buf.getvalue()))


def test_ordered_dict_subclass_state_and_counter_load():
    obj = {"c": collections.Counter("aab"), "o": collections.OrderedDict(a=1)}
    buf = io.BytesIO()
    dt.save(obj, buf)
    buf.seek(0)
    assert dt.load(buf) == obj


def test_saving_to_a_device_or_fifo_writes_into_it(tmp_path):
    dt.save({"w": dt.ones(3)}, os.devnull)
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    import threading

    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))  # noqa: SIM115
    reader.start()
    dt.save({"w": dt.arange(4.0)}, fifo)
    reader.join(10)
    assert dt.load(io.BytesIO(got[0]))["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert os.listdir(tmp_path) == ["pipe"]


@pytest.mark.parity
def test_torch_files_referencing_one_storage_2000_times_are_held_once(tmp_path):
    torch = pytest.importorskip("torch")
    base = torch.zeros(2**18)
    for legacy in (False, True):
        path = tmp_path / f"amp{legacy}.pt"
        torch.save([base[:] for _ in range(2000)], path, _use_new_zipfile_serialization=not legacy)
        out = []
        peak = _peak_mib(lambda path=path, out=out: out.append(dt.load(path)))
        assert len(out[0]) == 2000 and peak < 16, (legacy, peak)


def _dtck_refs(refs: list, arrays: bytes = bytes(64)) -> bytes:
    """A DTCK file whose pickle is the list of persistent references ``refs``."""

    class P(pickle.Pickler):
        def persistent_id(self, obj):
            return obj[1] if isinstance(obj, tuple) and obj[:1] == ("ref",) else None

    buf = io.BytesIO()
    P(buf, 4).dump([("ref", r) for r in refs])
    return _dtck(buf.getvalue(), arrays)


@pytest.mark.parametrize(
    "ref, says",
    [
        (("tensor", "<f4", (2**40,), 0, 4, False), "shape"),
        (("tensor", "<f4", (2**38,), 0, 2**40, False), "outside"),
        (("dtype", "no_such_dtype"), "unknown dtype 'no_such_dtype'"),
        (("tensor", "<f4", (1,)), "expected \\(kind, dtype"),
        ("just a string", "expected \\(kind, dtype"),
        (("tensor", "<f4", (1,), -4, 4, False), "offset"),
        (("tensor", "<f4", (-1,), 0, 4, False), "shape"),
        (("tensor", "<f4", [1], 0, 4, False), "shape"),
        (("tensor", "<f4", (3,), 0, 10, False), "claims 10 bytes"),
        (("tensor", "|O", (1,), 0, 8, False), "element type"),
        (("tensor", "f4,f4", (1,), 0, 8, False), "element type"),
        (("module", "<f4", (1,), 0, 4, False), "kind 'module'"),
        (("tensor", "<f4", (1,), 0, 4, "yes"), "requires_grad"),
        (("tensor", "<f4", (1,), 0.5, 4, False), "offset"),
    ],
)
def test_forged_dtck_references_give_one_clear_error(ref, says, tmp_path):
    path = tmp_path / "forged.pt"
    path.write_bytes(_dtck_refs([ref]))
    with pytest.raises(RuntimeError, match=f"{path} is corrupt: .*{says}"):
        dt.load(path)


def test_malformed_dtck_structures_give_one_clear_error(tmp_path):
    path = tmp_path / "broken.pt"
    for structure in (b"", b"\x80\x04", b"\x80\x04]\x94(K\x01", b"\x80\x04Q.", b"\x80\x02h\x05."):
        path.write_bytes(_dtck(structure))
        with pytest.raises((RuntimeError, pickle.UnpicklingError), match=str(path)):
            dt.load(path)


def test_fuzzed_dtck_files_load_or_fail_clearly_in_bounded_memory(target, tmp_path):
    """Random edits of a valid file's structure record (its checksum fixed up, as an
    attacker would): every load succeeds or raises the loader's error naming the file;
    none runs code or holds much more than the file."""
    refs = [("tensor", "<f4", (2, 3), 0, 24, False), ("parameter", "<i8", (2,), 24, 16, True)]
    refs += [("dtype", "float32"), ("ndarray", "|b1", (4,), 40, 4, False)]
    valid = _dtck_refs(refs)
    structure = valid[16 : 16 + struct.unpack_from("<Q", valid, 8)[0]]
    rng = np.random.default_rng(0)
    path = tmp_path / "fuzzed.pt"
    outcomes = collections.Counter()
    tracemalloc.start()
    try:
        for _ in range(400):
            mutated = bytearray(structure)
            for pos in rng.integers(0, len(mutated), rng.integers(1, 4)):
                mutated[pos] = rng.integers(0, 256)
            path.write_bytes(_dtck(bytes(mutated), bytes(64)))
            try:
                dt.load(path)
                outcomes["loaded"] += 1
            except (RuntimeError, pickle.UnpicklingError) as exc:
                assert str(path) in str(exc), f"{type(exc).__name__}: {exc}"
                outcomes[type(exc).__name__] += 1
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert peak < 16, f"fuzzed loads of a {len(valid)}-byte file peaked at {peak:.0f} MiB"
    assert outcomes["FormatError"] > 0 and outcomes["UnpicklingError"] > 0, outcomes


def test_bit_flipped_or_truncated_zip_checkpoints_fail_clearly_or_load_unchanged(tmp_path):
    """One bit flipped anywhere in a ``torch.save`` file, or the file cut short: the load
    returns the saved values or raises the loader's error naming the file (zipfile's
    BadZipFile, a negative seek's ValueError and an 'encrypted' flag's RuntimeError escaped
    from the byte-order record), never a tensor with other values (each record's CRC-32)."""
    saved = {"w": dt.arange(64, dtype=dt.float32).reshape(8, 8), "b": dt.ones(3, dtype=dt.float64), "step": 5}
    buf = io.BytesIO()
    dt.save(saved, buf)
    blob = buf.getvalue()
    path = tmp_path / "damaged.pt"
    rng = np.random.default_rng(0)
    flips = [(int(p), 1 << int(b)) for p, b in zip(rng.integers(0, len(blob), 250), rng.integers(0, 8, 250))]
    cuts = [(cut, 0) for cut in range(0, len(blob), 47)]
    outcomes = collections.Counter()
    for pos, bit in flips + cuts:
        damaged = bytearray(blob if bit else blob[:pos])
        if bit:
            damaged[pos] ^= bit
        path.write_bytes(bytes(damaged))
        try:
            loaded = dt.load(path, weights_only=True)
        except (RuntimeError, pickle.UnpicklingError) as exc:
            assert str(path) in str(exc), f"byte {pos}: {type(exc).__name__}: {exc}"
            outcomes["refused"] += 1
            continue
        assert loaded["step"] == 5 and all(dt.equal(loaded[k], saved[k]) for k in ("w", "b")), pos
        outcomes["loaded"] += 1
    assert outcomes["refused"] > 0 and outcomes["loaded"] > 0, outcomes


def _peak_rss_mib_of(code: str) -> float:
    """Run ``code`` in a fresh interpreter; return its peak resident memory in MiB."""
    import subprocess

    script = code + "\nimport resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1]) / 1024


@pytest.mark.parametrize("fmt", ["dtck", "legacy", "zip"])
def test_a_far_memo_index_cannot_make_a_load_allocate_gigabytes(fmt, tmp_path):
    """An 8-byte pickle storing at memo index 2**27 makes CPython's unpickler fill a 2 GiB
    table; every format refuses it first."""
    evil = b"\x80\x02Nr" + (2**27).to_bytes(4, "little") + b"."
    if fmt == "dtck":
        data = _dtck(evil)
    elif fmt == "legacy":
        data = _legacy(evil)
    else:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("archive/data.pkl", evil)
            zf.writestr("archive/byteorder", "little")
        data = buf.getvalue()
    path = tmp_path / "memo.pt"
    path.write_bytes(data)
    code = (
        "import pickle, disttorch\n"
        f"try:\n    disttorch.load({str(path)!r})\n"
        "except pickle.UnpicklingError as e:\n    assert 'memo entry' in str(e), e\n"
        "else:\n    raise SystemExit('loaded')"
    )
    baseline = _peak_rss_mib_of("import pickle, disttorch")
    assert _peak_rss_mib_of(code) < baseline + 64


def _crafted_zip(obj) -> io.BytesIO:
    """A PyTorch zip file whose pickle holds ``obj`` (reduce tuples naming torch's globals);
    the name ``"ref"`` stands for one float storage of 4 elements."""
    from disttorch.serialization.zip_writer import TorchGlobal, _Pickler

    class P(_Pickler):
        def persistent_id(self, o):
            return ("storage", TorchGlobal("torch", "FloatStorage"), "0", "cpu", 4) if o == "ref" else None

    pkl = io.BytesIO()
    P(pkl, 2).dump(obj)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pkl.getvalue())
        zf.writestr("archive/data/0", bytes(16))
    buf.seek(0)
    return buf


class _Reduce:
    def __init__(self, module, name, args, state=None):
        self.rv = (module, name, args, state)

    def __reduce__(self):
        from disttorch.serialization.zip_writer import TorchGlobal

        module, name, args, state = self.rv
        return (TorchGlobal(module, name), args) + ((state,) if state is not None else ())


_TENSOR = ("ref", 0, (4,), (1,))


@pytest.mark.parametrize(
    "obj, error, says",
    [
        (("torch", "device", ("cpu:99999999999999999999",)), RuntimeError, "Could not parse device index"),
        (("torch", "device", ("cpu", 10**20)), ValueError, "Overflow when unpacking long long"),
        (("collections", "OrderedDict", (), (None, {"a": 1})), TypeError, "dictionary update sequence"),
        (("collections", "OrderedDict", (), ({"b": 2}, {"a": 1})), ValueError, "dictionary update sequence"),
        (("torch", "device", ("cpu",), {"type": "cuda"}), AttributeError, "no attribute '__dict__'"),
        (("torch", "Size", ((2, 3),), {"x": 1}), AttributeError, "no attribute '__dict__'"),
        (("torch", "Size", (("a",),)), TypeError, "takes an iterable of 'int' .item 0 is 'str'."),
        (("torch._utils", "_rebuild_tensor_v2", (*_TENSOR, "yes", {})), RuntimeError, "must be a bool"),
        (("torch._utils", "_rebuild_tensor_v2", (*_TENSOR, 1, {})), RuntimeError, "must be a bool"),
        (
            ("torch._utils", "_rebuild_tensor_v2", (*_TENSOR, False, {}), {"x": 1}),
            pickle.UnpicklingError,
            "BUILD",
        ),
    ],
)
def test_weights_only_refuses_what_pytorchs_unpickler_refuses(obj, error, says):
    """Each crafted object loaded under weights_only=True; PyTorch 2.13 raises the same."""
    with pytest.raises(error, match=says):
        dt.load(_crafted_zip(_Reduce(*obj)), weights_only=True)


def test_weights_only_checks_a_parameters_flag_and_keeps_ordered_dict_attributes():
    tensor = _Reduce("torch._utils", "_rebuild_tensor_v2", (*_TENSOR, False, {}))
    param = _Reduce("torch._utils", "_rebuild_parameter", (tensor, "yes", {}))
    with pytest.raises(TypeError, match="argument 'require_grad' .* must be bool, not str"):
        dt.load(_crafted_zip(param), weights_only=True)
    loaded = dt.load(_crafted_zip(_Reduce("collections", "OrderedDict", (), {"_metadata": 1})))
    assert loaded.__dict__ == {"_metadata": 1}
