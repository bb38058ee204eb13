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
