"""Pipeline parallelism (``torch.distributed.pipelining``): a model cut into stages, one per
rank, through which microbatches flow.

``stage.py`` (``PipelineStage``: one stage's forward, backward and messages),
``schedules.py`` (``ScheduleGPipe``, ``Schedule1F1B``), ``microbatch.py`` (splitting a batch,
merging outputs), ``split.py`` (``pipeline()``: cutting one model into stages by tracing). ``disttorch.distributed.pipelining`` re-exports them (``distributed``
never imports ``nn``).
"""

from .schedules import PipelineScheduleSingle, Schedule1F1B, ScheduleGPipe
from .split import Pipe, PipeInfo, SplitPoint, build_stage, pipe_split, pipeline
from .stage import PipelineStage

__all__ = [
    "Pipe",
    "PipeInfo",
    "PipelineScheduleSingle",
    "PipelineStage",
    "Schedule1F1B",
    "ScheduleGPipe",
    "SplitPoint",
    "build_stage",
    "pipe_split",
    "pipeline",
]
