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


_MISSING_BACKENDS = ("nccl", "NCCL", "xccl", "mpi", "cuda:nccl", "cpu:gloo,cuda:nccl", "glooo")


def _init_errors(L, path) -> list:
    """What ``init_process_group(backend)`` raises for the backends a CPU build lacks."""
    out = []
    for backend in _MISSING_BACKENDS:
        with pytest.raises(Exception) as info:
            L.distributed.init_process_group(backend, init_method=f"file://{path}", rank=0, world_size=1)
        out.append((type(info.value), str(info.value)))
    return out


@pytest.mark.filterwarnings("ignore:Device capability of glooo unknown")  # (checked below)
def test_gpu_and_mpi_backends_raise_the_cpu_builds_error(tmp_path):
    errors = _init_errors(dt, tmp_path / "store")
    assert [kind for kind, _ in errors] == [RuntimeError] * (len(_MISSING_BACKENDS) - 1) + [AssertionError]
    assert errors[0][1] == (
        "Distributed package doesn't have NCCL built in (disttorch runs collectives over ZeroMQ "
        "on CPUs: use backend='gloo' or leave it out)"
    )
    assert not dt.distributed.is_initialized()
    with pytest.warns(UserWarning, match="Device capability of glooo unknown"):
        with pytest.raises(AssertionError, match=r"^Unknown backend type glooo \(disttorch runs"):
            dt.distributed.init_process_group("glooo")


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::UserWarning")  # PyTorch's about the backends' timeouts and MPI's ranks
def test_missing_backends_as_pytorch(torch, tmp_path):
    ours = _init_errors(dt, tmp_path / "ours")
    theirs = _init_errors(torch, tmp_path / "theirs")
    for (kind, text), (torch_kind, torch_text) in zip(ours, theirs):
        assert kind is torch_kind and text.startswith(torch_text), (text, torch_text)


def test_a_device_backend_list_is_reported_as_written(tmp_path):
    # "cpu:gloo" was reported as "gloo" with the config "cpu:gloo,cuda:gloo"
    dist = dt.distributed
    dist.init_process_group("cpu:gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        assert (dist.get_backend(), dist.get_backend_config()) == ("cpu:gloo", "cpu:gloo")
    finally:
        dist.destroy_process_group()
