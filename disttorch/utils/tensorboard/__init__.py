"""``torch.utils.tensorboard``: ``SummaryWriter`` writes TensorBoard event files (scalars,
histograms, text, hyperparameters) with the ``tensorboard`` package, an optional
dependency: ``pip install 'disttorch[tensorboard]'``."""

try:
    import tensorboard  # noqa: F401
except ImportError:
    raise ImportError(
        "disttorch.utils.tensorboard needs the tensorboard package: "
        "pip install 'disttorch[tensorboard]' (or pip install tensorboard)"
    ) from None

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
