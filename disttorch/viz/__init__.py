"""disttorch.viz: seeing training: a text progress bar, per-rank metrics logs, and pictures.

``ProgressBar`` and ``MetricsLog`` need nothing beyond the standard library. The pictures
(``python -m disttorch.viz`` / ``disttorch-plot``: a merged Chrome trace as one row per
rank, per-rank loss curves) need matplotlib: ``pip install 'disttorch[plot]'``.
"""

from .metrics import MetricsLog, read_metrics
from .progress import ProgressBar

__all__ = ["ProgressBar", "MetricsLog", "read_metrics"]
