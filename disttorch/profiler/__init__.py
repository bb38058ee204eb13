"""``torch.profiler``: time what a training step spends where.

``profile`` records every op (forward Functions and backward nodes), the spans disttorch
already traces (forward, backward, optimizer.step, DDP's buckets and all-reduces) and
``record_function`` ranges; ``schedule`` chooses which steps are recorded;
``key_averages().table()`` summarises, ``export_chrome_trace`` writes a Chrome trace and
``tensorboard_trace_handler`` writes one per recorded window for TensorBoard.
Only CPU activity exists here.
"""

from ..autograd.profiler import EventList, FunctionEvent, FunctionEventAvg, record_function
from .profiler import (
    DeviceType,
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "profile",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "DeviceType",
    "record_function",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
]
