"""``torch.utils.data.datapipes``: the iterable DataPipe base and the buffer shuffler
(``ShufflerIterDataPipe``), what accelerate's batch dispatcher looks for. PyTorch has
deprecated DataPipes; the rest of its library of them is not provided."""

from . import iter
from .datapipe import IterDataPipe

__all__ = ["IterDataPipe", "iter"]
