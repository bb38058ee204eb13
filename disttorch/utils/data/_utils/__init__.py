"""``torch.utils.data._utils``: the data-loading helpers under PyTorch's module paths
(``_utils.collate.default_collate``, ``_utils.worker.get_worker_info``), which libraries
import from there."""

from . import collate, worker

__all__ = ["collate", "worker"]
