"""``torch.distributed.tensor.device_mesh``: the mesh under the tensor package's path (it
lives in :mod:`disttorch.distributed.device_mesh`, as in PyTorch)."""

from ..device_mesh import DeviceMesh, init_device_mesh

__all__ = ["DeviceMesh", "init_device_mesh"]
