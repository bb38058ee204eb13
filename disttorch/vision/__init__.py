"""disttorch.vision: a subset of torchvision 0.28 (the release paired with PyTorch 2.13) over
``disttorch.nn`` and ``disttorch.utils.data``. Under the ``import torch`` alias it is
``torchvision`` (``import torchvision`` gives this package; its version and
``importlib.metadata.version("torchvision")`` read ``0.28.0+disttorch.<version>``).

    ops          boxes and NMS, sigmoid_focal_loss, StochasticDepth, FrozenBatchNorm2d, ...
    transforms   the v1 transforms and their ``functional`` on tensors and PIL images
                 (and v2's ``functional`` for plain images)
    io           reading and decoding images
    datasets     FakeData, ImageFolder/DatasetFolder, MNIST/FashionMNIST/KMNIST, CIFAR10/100
    utils        make_grid, save_image
    models       resnet18/34/50/101/152 (``weights=None``)
"""

from __future__ import annotations

from . import datasets, io, models, ops, transforms, utils, version
from .version import __version__

_image_backend = "PIL"

__all__ = [
    "__version__",
    "datasets",
    "io",
    "get_image_backend",
    "models",
    "ops",
    "set_image_backend",
    "transforms",
    "utils",
]


def set_image_backend(backend: str) -> None:
    """The package loading images for the datasets: only ``'PIL'`` here (torchvision's
    ``'accimage'`` is not provided)."""
    global _image_backend
    if backend not in ("PIL", "accimage"):
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
    if backend == "accimage":
        raise ValueError("the 'accimage' backend is not available in disttorch.vision: use 'PIL'")
    _image_backend = backend


def get_image_backend() -> str:
    """The package loading images for the datasets (``'PIL'``)."""
    return _image_backend


def _is_tracing() -> bool:
    return False
