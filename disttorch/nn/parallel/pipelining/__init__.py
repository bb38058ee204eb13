"""Pipeline parallelism (``torch.distributed.pipelining``): a model cut into stages, one per
rank, through which microbatches flow.

``stage.py`` (``PipelineStage``: one stage's forward, backward and messages),
``schedules.py`` (``ScheduleGPipe``, ``Schedule1F1B``), ``microbatch.py`` (splitting a batch,
merging outputs). ``disttorch.distributed.pipelining`` re-exports them (``distributed``
never imports ``nn``).
"""

from .schedules import PipelineScheduleSingle, Schedule1F1B, ScheduleGPipe
from .stage import PipelineStage

__all__ = ["PipelineScheduleSingle", "PipelineStage", "Schedule1F1B", "ScheduleGPipe"]
