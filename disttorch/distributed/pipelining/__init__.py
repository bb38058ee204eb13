"""``disttorch.distributed.pipelining`` (mirrors ``torch.distributed.pipelining``):
``PipelineStage``, ``ScheduleGPipe``, ``Schedule1F1B``, ``ScheduleInterleaved1F1B``, ``pipeline``, ``pipe_split``,
``SplitPoint``, ``build_stage``.

The implementation lives in ``disttorch.nn.parallel.pipelining`` (``distributed`` never
imports ``nn``); this package re-exports it lazily, on first use of a name (PEP 562).
"""

from typing import Any

_NAMES = (
    "Pipe",
    "PipelineStage",
    "Schedule1F1B",
    "ScheduleGPipe",
    "ScheduleInterleaved1F1B",
    "SplitPoint",
    "build_stage",
    "pipe_split",
    "pipeline",
)


def __getattr__(name: str) -> Any:
    from ...nn.parallel import pipelining

    if name == "__all__":
        return list(_NAMES)
    if name in _NAMES:
        return getattr(pipelining, name)
    raise AttributeError(f"module 'disttorch.distributed.pipelining' has no attribute '{name}'")
