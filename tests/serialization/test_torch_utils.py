"""``torch._utils`` called by hand: the rebuild functions on a tensor's storage (old
checkpoints' loaders, libraries that pickle tensors themselves) and the helpers libraries
import from there, compared with PyTorch."""

from __future__ import annotations

import collections
import pickle

import pytest

import disttorch as dt


def _typed(lib, t):
    """``t.storage()`` without its deprecation warning."""
    return lib.storage.TypedStorage(wrap_storage=t.untyped_storage(), dtype=t.dtype, _internal=True)


class _ByHand:
    """Pickles a tensor as ``_rebuild_tensor_v2`` of its storage, as such libraries do."""

    def __init__(self, lib, t) -> None:
        self.lib, self.t = lib, t

    def __reduce__(self):
        x, utils = self.t, self.lib._utils
        args = (
            x.storage(),
            x.storage_offset(),
            tuple(x.size()),
            x.stride(),
            False,
            collections.OrderedDict(),
        )
        return utils._rebuild_tensor_v2, args


def _probe(lib) -> list:
    U = lib._utils
    hooks = collections.OrderedDict()
    t = lib.arange(12.0).reshape(3, 4)
    r = U._rebuild_tensor_v2(_typed(lib, t), 2, (2, 3), (4, 1), False, hooks)
    r[0, 0] = 100.0  # shares the storage's memory
    out = [r.tolist(), r.requires_grad, t[0, 2].item()]
    out.append(U._rebuild_tensor(_typed(lib, t), 0, (4,), (3,)).tolist())
    v3 = U._rebuild_tensor_v3(_typed(lib, t), 1, (2,), (1,), False, hooks, lib.float32)
    out.append((v3.tolist(), str(v3.dtype).rsplit(".", 1)[-1]))
    out.append(pickle.loads(pickle.dumps(_ByHand(lib, t[1]))).tolist())
    p = U._rebuild_parameter_with_state(lib.ones(2), False, hooks, {"tag": 3})
    q = U._rebuild_parameter(lib.ones(2), True, hooks)
    out.append((type(p).__name__, p.requires_grad, p.tag, type(q).__name__, q.requires_grad))
    a, b = lib.ones(2, 2), lib.arange(3.0)
    flat = U._flatten_dense_tensors([a, b])
    out.append((flat.tolist(), [x.tolist() for x in U._unflatten_dense_tensors(flat, [a, b])]))
    out.append(
        (U._element_size(lib.bfloat16), U._get_device_index("cpu", allow_cpu=True), U._get_device_index(3))
    )
    out.append((U.get_current_device_index(), U._get_available_device_type()))
    out.append(
        (
            U._import_dotted_name("collections.OrderedDict").__name__,
            U._get_obj_state(lib.nn.Parameter(lib.ones(1))),
        )
    )
    return out


def test_rebuild_functions_and_helpers():
    out = _probe(dt)
    assert out[0] == [[100.0, 3.0, 4.0], [6.0, 7.0, 8.0]] and out[2] == 100.0
    assert out[5] == [4.0, 5.0, 6.0, 7.0] and out[6] == ("Parameter", False, 3, "Parameter", True)
    with pytest.raises(ValueError, match="Expected a non cpu device"):
        dt._utils._get_device_index("cpu")
    with pytest.raises(TypeError, match="expected a storage"):
        dt._utils._rebuild_tensor([1.0], 0, (1,), (1,))


@pytest.mark.parity
def test_torch_utils_match_pytorch(torch):
    warned = "has_warned" in torch.storage._warn_typed_storage_removal.__dict__
    try:
        assert _probe(dt) == _probe(torch)
    finally:  # PyTorch's rebuilds read TypedStorage.dtype, which warns once per process:
        if not warned:  # leave that warning to the tests that count on it
            torch.storage._warn_typed_storage_removal.__dict__.pop("has_warned", None)


class _Deferred:
    """A checkpoint tensor not read yet: its meta twin answers ``shape``/``dtype``; any torch
    function given it reads it first (a lazy loader's placeholder, as in lit-llama)."""

    def __init__(self, meta, read):
        self.meta, self.read = meta, read

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func(*(a.read() if isinstance(a, _Deferred) else a for a in args), **(kwargs or {}))

    def __getattr__(self, name):
        if name in ("shape", "dtype", "size"):
            return getattr(self.meta, name)
        raise AttributeError(name)


def _lazy_load(lib, path):
    """Unpickle a checkpoint's ``data.pkl`` with every storage a meta ``TypedStorage`` of the
    dtype its legacy class names; each tensor a :class:`_Deferred` over its meta rebuild."""
    import functools
    import io
    import warnings
    import zipfile

    zf = zipfile.ZipFile(path)
    prefix = zf.namelist()[0].split("/")[0]

    def rebuild(storage, offset, size, stride, requires_grad, hooks, metadata=None):
        meta = lib._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)
        key, dtype = storage.key, storage.dtype

        def read():
            raw = bytearray(zf.read(f"{prefix}/data/{key}"))
            flat = lib.frombuffer(raw, dtype=dtype)
            return flat.as_strided(size, stride, offset)

        return _Deferred(meta, read)

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
                return functools.partial(rebuild)
            return super().find_class(module.replace("torch", lib.__name__, 1), name)

        def persistent_load(self, pid):
            _, cls, key, _, _ = pid
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                storage = lib.storage.TypedStorage(dtype=cls().dtype, device="meta")
            storage.key = key
            return storage

    return Unpickler(io.BytesIO(zf.read(f"{prefix}/data.pkl"))).load()


def _lazily_loaded(lib, path):
    lib.manual_seed(0)
    state = _lazy_load(lib, path)
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.LayerNorm(2)).double()
    shapes = {k: (tuple(v.shape), str(v.dtype).split(".")[-1]) for k, v in state.items()}
    model.load_state_dict(state)
    return shapes, [p.detach().tolist() for p in model.parameters()]


@pytest.mark.parity
def test_a_lazy_loader_rebuilds_meta_tensors_and_loads_through_torch_function(torch, tmp_path):
    """A loader of its own (lit-llama's ``lazy_load``): the checkpoint's legacy storage
    classes give each storage's dtype, a rebuild over a meta storage is a meta tensor of the
    right geometry, and ``load_state_dict`` copies a tensor-like placeholder through its
    ``__torch_function__``."""
    torch.manual_seed(0)
    saved = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.LayerNorm(2)).double()
    torch.save(saved.state_dict(), tmp_path / "ck.pt")
    ours, theirs = _lazily_loaded(dt, tmp_path / "ck.pt"), _lazily_loaded(torch, tmp_path / "ck.pt")
    assert ours == theirs
    assert ours[1][0] == saved[0].weight.tolist()


def test_rebuilds_over_a_meta_storage_are_meta_tensors():
    meta = dt.storage.TypedStorage(dtype=dt.float16, device="meta", _internal=True)
    t = dt._utils._rebuild_tensor_v2(meta, 0, (3, 4), (1, 3), True, {})
    assert (t.device.type, t.shape, t.stride(), t.dtype, t.requires_grad) == (
        "meta",
        (3, 4),
        (1, 3),
        dt.float16,
        True,
    )
    raw = dt.UntypedStorage(0, device="meta")
    v3 = dt._utils._rebuild_tensor_v3(raw, 0, (2,), (1,), False, {}, dt.int64)
    assert (v3.device.type, v3.dtype) == ("meta", dt.int64)
    assert dt.empty_strided((2, 3), (1, 2), device="meta").stride() == (1, 2)
    model = dt.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="expected disttorch.Tensor or Tensor-like object"):
        model.load_state_dict({"weight": 3, "bias": dt.zeros(2)})
