"""Pipeline parallelism (``torch.distributed.pipelining``): a model cut into stages, one per
rank, through which microbatches flow.

``stage.py`` (``PipelineStage``: one stage's forward, backward and messages),
``schedules.py`` (``ScheduleGPipe``, ``Schedule1F1B``, ``ScheduleInterleaved1F1B``), ``microbatch.py`` (splitting a batch,
merging outputs), ``split.py`` (``pipeline()``: cutting one model into stages by tracing). ``disttorch.distributed.pipelining`` re-exports them (``distributed``
never imports ``nn``).
"""

from .schedules import (
    PipelineScheduleMulti,
    PipelineScheduleSingle,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
)
from .split import Pipe, PipeInfo, SplitPoint, build_stage, pipe_split, pipeline
from .stage import PipelineStage

__all__ = [
    "Pipe",
    "PipeInfo",
    "PipelineScheduleMulti",
    "PipelineScheduleSingle",
    "PipelineStage",
    "Schedule1F1B",
    "ScheduleGPipe",
    "ScheduleInterleaved1F1B",
    "SplitPoint",
    "build_stage",
    "pipe_split",
    "pipeline",
]
