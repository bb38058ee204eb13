"""Storages over a tensor's real memory: ``untyped_storage()``, ``storage()``,
``storage_offset()`` and ``data_ptr()`` agree with each other and with PyTorch."""

from __future__ import annotations

import warnings

import pytest

import disttorch as dt


def _answers(torch) -> list:
    base = torch.arange(6.0).view(2, 3)
    row = base[1:]
    col = base[:, 1]
    s = row.untyped_storage()
    out = [row.storage_offset(), col.storage_offset(), s.nbytes(), s.size(), len(s), s.element_size()]
    out += [s.data_ptr() == base.data_ptr(), row.data_ptr() - s.data_ptr(), col.untyped_storage() == s]
    torch.storage._reset_warn_typed_storage_removal()  # the warning shows the first time only
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        typed = row.storage()
    out += [
        "TypedStorage is deprecated" in str(w[0].message),
        typed.size(),
        typed.nbytes(),
        typed[3],
        typed.tolist(),
    ]
    out += [
        str(typed.dtype).rsplit(".", 1)[-1],
        typed.element_size(),
        torch.is_storage(s),
        torch.is_storage(row),
    ]
    out += [
        torch.UntypedStorage(4).nbytes(),
        torch.UntypedStorage.from_buffer(b"abcd", dtype=torch.uint8).tolist(),
    ]
    out += [repr(torch.UntypedStorage.from_buffer(b"ab", dtype=torch.uint8))]
    return out


def test_storage_is_the_memory_of_the_tensor_and_its_views():
    x = dt.zeros(4)
    view = x[2:]
    assert view.untyped_storage() == x.untyped_storage() and view.storage_offset() == 2
    x.untyped_storage()[10] = 0x80  # element 2 becomes float32 0x3F800000 (little-endian)
    x.untyped_storage()[11] = 0x3F
    assert view.tolist() == [1.0, 0.0] and x.tolist() == [0.0, 0.0, 1.0, 0.0]
    assert dt.ones(3).untyped_storage() != x.untyped_storage()


@pytest.mark.parity
def test_same_answers_as_pytorch(torch):
    assert _answers(dt) == _answers(torch)


def test_from_file_maps_a_file_and_asarray_reads_its_bytes(tmp_path):
    path = tmp_path / "w.bin"
    path.write_bytes(dt.arange(4.0).numpy().tobytes())
    private = dt.UntypedStorage.from_file(str(path), shared=False, nbytes=16)
    assert dt.asarray(private, dtype=dt.float32).tolist() == [0.0, 1.0, 2.0, 3.0]
    private[0] = 1  # copy on write: the file keeps its bytes
    assert path.read_bytes()[0] == 0
    shared = dt.UntypedStorage.from_file(str(path), shared=True, nbytes=16)
    shared[15] = 0
    del shared
    assert path.read_bytes()[15] == 0


def _identity_and_legacy(torch) -> list:
    a = torch.arange(6.0)
    b, c = a.view(2, 3), a[2:]
    out = [a.untyped_storage() is b.untyped_storage() is c.untyped_storage()]
    out += [a.untyped_storage() is torch.arange(6.0).untyped_storage()]
    s = c.untyped_storage()
    s.resize_(32)  # reallocated: the tensors over it and the object stay together
    out += [a.untyped_storage() is s, s.nbytes()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = torch.Tensor(c.storage())  # the whole storage, sharing its memory
        d[0] = 66.0
        out += [b.tolist(), d.storage_offset(), d.dtype == torch.float32]
        out += [
            torch.FloatTensor(c.storage())[:6].tolist(),
            len(torch.FloatTensor(c.storage())),
            a.new(c.storage()).data_ptr() == a.data_ptr(),
        ]
        out += [torch.LongTensor(torch.zeros(2, dtype=torch.int64).untyped_storage()).tolist()]
        out += [torch.Tensor(torch.zeros(5, dtype=torch.uint8).untyped_storage()).shape]
        for bad in (lambda: torch.Tensor(torch.arange(3).storage()), lambda: torch.DoubleTensor(c.storage())):
            with pytest.raises(RuntimeError) as e:
                bad()
            out.append(str(e.value))
    torch.storage._reset_warn_typed_storage_removal()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a.storage()
        a.storage()  # another line: still not shown again
        torch.storage._set_always_warn_typed_storage_removal(True)
        a.storage()
        torch.storage._set_always_warn_typed_storage_removal(False)
    out.append(len(w))
    return out


def test_one_storage_object_per_memory_and_legacy_constructors_over_storages():
    got = _identity_and_legacy(dt)
    assert got[:4] == [True, False, True, 32]
    assert got[4][0][0] == 66.0 and got[-1] == 2


@pytest.mark.parity
def test_storage_identity_and_legacy_constructors_match_pytorch(torch):
    assert _identity_and_legacy(dt) == _identity_and_legacy(torch)


def test_a_tensor_moved_to_other_memory_lets_its_old_storage_object_go():
    import gc
    import weakref

    layer = dt.nn.Linear(4, 4)
    old = weakref.ref(layer.weight.untyped_storage())  # the weight holds its storage object
    assert old() is layer.weight.untyped_storage()
    layer.half()  # Module.to: new memory
    p = dt.zeros(5)
    gone = weakref.ref(p.untyped_storage())
    p.data = dt.ones(3)
    gc.collect()
    assert old() is None and gone() is None and p.untyped_storage().nbytes() == 12


def _views_through_as_strided(lib):
    """Views NumPy's as_strided makes (expand, unfold, torch.load's views) and shared memory."""
    import io

    x = lib.arange(10.0)
    z, w = x[2:].expand(3, 8), x.unfold(0, 3, 2)
    buf = io.BytesIO()
    lib.save({"a": x, "v": x[3:]}, buf)
    buf.seek(0)
    loaded = lib.load(buf)
    s = lib.zeros(4).share_memory_()
    return [
        z.storage_offset(),
        z.untyped_storage() is x.untyped_storage(),
        w.untyped_storage().nbytes(),
        loaded["v"].storage_offset(),
        loaded["v"].untyped_storage() is loaded["a"].untyped_storage(),
        s.expand(2, 4).is_shared(),
        s.untyped_storage().is_shared(),
    ]


def test_views_through_as_strided_share_their_tensors_storage():
    assert _views_through_as_strided(dt) == [2, True, 40, 3, True, True, True]


@pytest.mark.parity
def test_views_through_as_strided_match_pytorch(torch):
    assert _views_through_as_strided(dt) == _views_through_as_strided(torch)


def test_share_memory_lets_the_old_storage_object_go_and_threads_get_one_object():
    import gc
    import sys
    import threading
    import weakref

    t = dt.zeros(5)
    gone = weakref.ref(t.untyped_storage())
    t.share_memory_()
    gc.collect()
    assert gone() is None and t.untyped_storage().is_shared()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(60):
            a = dt.zeros(10)
            views, got, bar = [a[i:] for i in range(6)], [None] * 6, threading.Barrier(6)

            def ask(i, views=views, got=got, bar=bar):
                bar.wait()
                got[i] = views[i].untyped_storage()

            threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
            [th.start() for th in threads]
            [th.join() for th in threads]
            assert len({id(g) for g in got}) == 1
    finally:
        sys.setswitchinterval(switch)


def _legacy_answers(torch) -> list:
    """The legacy storage classes as a checkpoint's own unpickler meets them: by name, then
    ``cls().dtype``; ``isinstance`` by dtype; meta storages of a lazy loader."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = torch.FloatStorage(3)
        out = [type(made).__name__, str(made.dtype).split(".")[-1], len(made), made.device.type]
        out += [isinstance(made, torch.FloatStorage), isinstance(made, torch.DoubleStorage)]
        out += [issubclass(torch.LongStorage, torch.storage.TypedStorage), torch.is_storage(made)]
        out += [torch.HalfStorage([1, 2]).tolist(), str(torch.BFloat16Storage.dtype).split(".")[-1]]
        out += [torch.ByteStorage(wrap_storage=torch.UntypedStorage(5)).size(), repr(torch.IntStorage)]
        out += [torch.storage.TypedStorage(dtype=torch.bool)._pickle_storage_type()]
        meta = torch.storage.TypedStorage(dtype=torch.float16, device="meta")
        out += [meta.device.type, isinstance(meta, torch.HalfStorage), meta._untyped_storage.data_ptr()]
        out += [torch.serialization.normalize_storage_type(torch.FloatStorage) is torch.FloatStorage]
        with pytest.raises(RuntimeError, match="Keyword argument 'device' cannot be specified"):
            torch.FloatStorage(2, device="meta")
    return out


def test_legacy_storage_classes():
    assert _legacy_answers(dt)[:4] == ["TypedStorage", "float32", 3, "cpu"]


@pytest.mark.parity
def test_legacy_storage_classes_as_pytorchs(torch):
    assert _legacy_answers(dt) == _legacy_answers(torch)


def _from_buffer_answers(lib) -> list:
    """Storages read from bytes: elements of a dtype in a byte order, a count from an offset,
    the legacy classes' own dtype (``torch.ByteStorage._from_buffer``, as accelerate packs a
    pickle), and the errors of a missing dtype or byte order, an odd size or a bad order."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out.append(
            lib.UntypedStorage.from_buffer(b"\x00\x01\x02\x03", dtype=lib.int16, byte_order="big").tolist()
        )
        short = lib.ShortStorage.from_buffer(b"\x00\x01\x02\x03\x04\x05", "big", count=2, offset=2)
        out += [type(short).__name__, str(short.dtype).rsplit(".", 1)[-1], short.tolist()]
        out.append(lib.FloatStorage.from_buffer(b"\x00\x00\x80\x3f", "little").tolist())
        out.append(lib.TypedStorage.from_buffer(b"\x00\x00\x80\x3f", "little").tolist())
        byte = lib.ByteStorage._from_buffer(b"ab\x01")
        out += [byte.tolist(), lib.ByteTensor(byte).tolist()]
        for call in (
            lambda: lib.UntypedStorage.from_buffer(b"\x00\x01"),
            lambda: lib.ShortStorage.from_buffer(b"\x00\x01"),
            lambda: lib.UntypedStorage.from_buffer(b"\x00\x01\x02", dtype=lib.int16, byte_order="little"),
            lambda: lib.UntypedStorage.from_buffer(b"\x00\x01", dtype=lib.int16, byte_order="middle"),
            lambda: lib.ByteStorage.from_buffer(b"ab", dtype=lib.uint8),
        ):
            try:
                call()
            except (RuntimeError, ValueError) as e:
                out.append((type(e).__name__, str(e).split(" (")[0]))
    return out


def test_storages_from_buffers():
    assert _from_buffer_answers(dt) == [
        [1, 0, 3, 2],
        "TypedStorage",
        "int16",
        [515, 1029],
        [1.0],
        [1.0],
        [97, 98, 1],
        [97, 98, 1],
        ("RuntimeError", "argument 'dtype' cannot be None"),
        ("RuntimeError", "function missing required argument 'byte_order'"),
        ("ValueError", "buffer size"),
        ("ValueError", "invalid byte_order 'middle'"),
        (
            "RuntimeError",
            "from_buffer: 'dtype' can only be specified in UntypedStorage.from_buffer and TypedStorage.from_buffer",
        ),
    ]


@pytest.mark.parity
def test_storages_from_buffers_as_pytorch(torch):
    assert _from_buffer_answers(dt) == _from_buffer_answers(torch)
