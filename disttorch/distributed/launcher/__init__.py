"""``torch.distributed.launcher``: start workers from Python, as ``torchrun`` does from the
shell (:mod:`.api`: ``LaunchConfig``, ``elastic_launch``, ``launch_agent``)."""

from __future__ import annotations

from .api import LaunchConfig, elastic_launch, launch_agent

__all__ = ["LaunchConfig", "elastic_launch", "launch_agent"]
