"""``torch.distributed._remote_device``: a device on a worker, written ``"<worker>/<device>"``.

The forms PyTorch accepts: ``"worker1/cpu"``, ``"worker1"`` (device ``cpu``),
``"rank:1/cpu"``, ``"rank:1"``, and a bare local device (``"cpu"``). ``RemoteModule`` places
its module with it.
"""

from __future__ import annotations

from .._tensor import device as _device

__all__ = ["_remote_device"]


class _remote_device:  # noqa: N801 - PyTorch's name
    """A device on a remote worker: a worker name or a rank, and a ``torch.device``.

    Args:
        remote_device: ``"<workername>/<device>"``, ``"rank:<rank>/<device>"`` (the device
            part optional, ``cpu`` by default), ``"<device>"``, or a ``torch.device``.
    """

    def __init__(self, remote_device: str | _device) -> None:
        error = (
            f"Could not parse remote_device: {remote_device}. The valid format is "
            "'<workername>/<device>' or 'rank:<rank>/<device>' or '<device>'"
        )
        self._worker_name: str | None = None
        self._rank: int | None = None
        if isinstance(remote_device, _device):
            self._device = remote_device
            return
        if not isinstance(remote_device, str):
            raise TypeError(f"Invalid type for remote_device: {type(remote_device)}")
        fields = remote_device.split("/")
        if len(fields) > 2:
            raise ValueError(error)
        if len(fields) == 2:
            self._worker_name, device = fields
        elif _is_local_device(fields[0]):
            device = fields[0]
        else:
            self._worker_name, device = fields[0], "cpu"
        if self._worker_name is not None:
            kind, colon, rank = self._worker_name.partition(":")
            if not self._worker_name or self._worker_name.count(":") > 1:
                raise ValueError(error)
            if colon:
                if kind != "rank" or not rank.isdigit():
                    raise ValueError(error)
                self._worker_name, self._rank = None, int(rank)
        self._device = _device(device)

    def worker_name(self) -> str | None:
        """The worker's name, or ``None`` (a rank or a local device)."""
        return self._worker_name

    def rank(self) -> int | None:
        """The worker's rank, or ``None`` (a name or a local device)."""
        return self._rank

    def device(self) -> _device:
        """The device on the worker."""
        return self._device

    def __repr__(self) -> str:
        if self._worker_name is not None:
            return f"{self._worker_name}/{self._device}"
        if self._rank is not None:
            return f"rank:{self._rank}/{self._device}"
        return str(self._device)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _remote_device) and (self._worker_name, self._rank, self._device) == (
            other._worker_name,
            other._rank,
            other._device,
        )

    def __hash__(self) -> int:
        return hash((self._worker_name, self._rank, self._device))


def _is_local_device(text: str) -> bool:
    try:
        _device(text)
    except RuntimeError:
        return False
    return True
