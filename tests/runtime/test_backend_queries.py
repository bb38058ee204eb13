"""What a CPU-only build answers about backends and devices it does not have: ``torch.mtia``,
``torch.distributed.is_*_available``/``is_backend_available``, and the ``torch.types`` aliases
libraries import for their hints."""

import pytest

import disttorch as dt


def _facts(L):
    dist = L.distributed
    return [
        (L.mtia.is_available(), L.mtia.is_initialized(), L.mtia.device_count(), L.mtia.memory_stats()),
        [getattr(dist, f"is_{name}_available")() for name in ("gloo", "nccl", "mpi", "ucc", "xccl")],
        [dist.is_backend_available(b) for b in ("gloo", "GLOO", "nccl", "mpi", "nonsense")],
        [
            name
            for name in ("Number", "Device", "FileLike", "_size", "_dtype", "_device")
            if hasattr(L.types, name)
        ],
    ]


def test_cpu_build_answers():
    assert _facts(dt) == [
        (False, False, 0, {}),
        [True, False, False, False, False],
        [True, True, False, False, False],
        ["Number", "Device", "FileLike", "_size", "_dtype", "_device"],
    ]
    with pytest.raises(RuntimeError, match="without MTIA backend"):
        dt.mtia.current_device()
    assert isinstance(3.5, dt.types._Number) and dt.types._dtype is dt.dtype


@pytest.mark.parity
def test_as_pytorch(torch):
    assert _facts(dt) == _facts(torch)
