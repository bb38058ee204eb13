"""``profile`` with ``schedule`` and ``on_trace_ready``, ``ProfilerActivity``,
``tensorboard_trace_handler``: PyTorch's ``torch.profiler`` API over the recorder of
:mod:`disttorch.autograd.profiler`."""

from __future__ import annotations

import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any

from ..autograd.profiler import EventList, FunctionEventAvg, _Recorder, _write_chrome_trace
from ..autograd.profiler import record_function as _record_function

__all__ = [
    "DeviceType",
    "ProfilerAction",
    "ProfilerActivity",
    "kineto_available",
    "profile",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(Enum):
    """What to profile; only ``CPU`` activity exists in disttorch."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class DeviceType(Enum):
    """Device types of events (all of disttorch's are CPU)."""

    CPU = 0
    CUDA = 1


class ProfilerAction(Enum):
    """What the profiler does during one step (returned by a ``schedule``)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """The activities that can be profiled here: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """False: disttorch records with its own tracer, not Kineto."""
    return False


def schedule(
    *, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0, skip_first_wait: int = 0
) -> Callable[[int], ProfilerAction]:
    """A step -> action function: after ``skip_first`` steps, cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps (the last one saves: ``on_trace_ready``
    is called), ``repeat`` times (0: until the profiler stops). ``skip_first_wait``
    skips the wait of the first cycle."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    """The schedule of a profiler given none (PyTorch's name): record every step."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str, worker_name: str | None = None, use_gzip: bool = False
) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler writing each recorded window to
    ``dir_name/<worker_name>.<time in ns>.pt.trace.json[.gz]`` (TensorBoard's profiler
    plugin reads that directory). ``worker_name`` defaults to ``<host>_<pid>``."""

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        # nanoseconds, as PyTorch: windows exported within one millisecond keep their own files
        path = os.path.join(dir_name, f"{name}.{time.time_ns()}.pt.trace.json")
        prof.export_chrome_trace(path + (".gz" if use_gzip else ""))

    return handler


_ACC_WARNING = (
    "Warning: Profiler clears events at the end of each cycle. Only events from the current "
    "cycle will be reported. To keep events across cycles, set acc_events=True."
)
_warned: set[str] = set()


class profile:
    """Profile the code in the ``with`` block (or between ``start()`` and ``stop()``).

    Args:
        activities: ``ProfilerActivity`` values; only CPU is recorded (others are ignored,
            as on a machine without that device).
        schedule: step -> ``ProfilerAction`` (see :func:`schedule`); call ``prof.step()``
            once per training step. Default: record everything.
        on_trace_ready: called with the profiler when a recorded window ends.
        record_shapes: record the input shapes of ops.
        profile_memory: record the bytes of each op's outputs.
        with_flops: count the FLOPs of matrix products and convolutions.
        acc_events: keep the events of every recorded window (default: the last one's;
            a second window then warns once, as PyTorch's).
        with_stack, with_modules, ...: accepted, not recorded.

    Example::

        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            with record_function("model_inference"):
                model(inputs)
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    """

    def __init__(
        self,
        *,
        activities: Iterable | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[..., Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback: Any = None,
        post_processing_timeout_s: float | None = None,
    ) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        self.record_cpu = ProfilerActivity.CPU in self.activities
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = schedule is not None  # "ProfilerStep#N" ranges, as PyTorch
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_flops, self.acc_events = with_flops, acc_events
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._recorder: _Recorder | None = None
        self._step_rec: _record_function | None = None
        self._finished: list[dict] | None = None
        self._prepared = False  # a window is readied (its warnings given)
        self._metadata: dict[str, str] = {}

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> profile:  # noqa: PYI034
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Begin: act on the schedule's action for the current step."""
        self.current_action = self.schedule(self.step_num)
        if self.current_action is ProfilerAction.WARMUP:
            self._prepare()
        elif self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._start_window()

    def stop(self) -> None:
        """End: close a window being recorded (``on_trace_ready`` is called for it)."""
        if self._recorder is not None:
            self._end_window()
        self.current_action = ProfilerAction.NONE

    def step(self) -> None:
        """Mark the start of the next step; windows open and close as the schedule says."""
        prev = self.current_action
        self.step_num += 1
        nxt = self.schedule(self.step_num)
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev is ProfilerAction.RECORD_AND_SAVE:
            self._end_window(ready=True)
        elif prev is ProfilerAction.RECORD and nxt not in recording:
            warnings.warn(f"Incorrect schedule: RECORD followed by {nxt.name}", stacklevel=2)
            self._end_window(ready=False)
        elif self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None
        self.current_action = nxt
        if nxt is ProfilerAction.WARMUP and not self._prepared:
            self._prepare()
        elif nxt in recording and self._recorder is None:
            self._start_window()
        elif nxt in recording:
            self._open_step_range()

    def _prepare(self) -> None:
        """Ready a window (PyTorch's ``prepare_trace``: on entering warm-up, or recording
        without one), with its warnings."""
        self._prepared = True
        if ProfilerActivity.CUDA in self.activities:  # as PyTorch's CPU build
            warnings.warn("CUDA is not available, disabling CUDA profiling", UserWarning, stacklevel=2)
            if not self.record_cpu:
                raise AssertionError("No activities specified for the profiler")
        if self._finished is not None and not self.acc_events and _ACC_WARNING not in _warned:
            _warned.add(_ACC_WARNING)  # once per process, as PyTorch's
            warnings.warn(_ACC_WARNING, UserWarning, stacklevel=2)

    def _start_window(self) -> None:
        if not self._prepared:
            self._prepare()
        if not self.record_cpu:
            return
        self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_flops)
        self._recorder.start()
        self._open_step_range()

    def _open_step_range(self) -> None:
        if self._recorder is not None and self.record_steps:
            self._step_rec = _record_function(f"ProfilerStep#{self.step_num}")
            self._step_rec.__enter__()

    def _end_window(self, ready: bool = True) -> None:
        if self._step_rec is not None:
            self._step_rec.__exit__(None, None, None)
            self._step_rec = None
        self._prepared = False
        if self._recorder is None:
            return
        self._recorder.stop()
        kept = self._finished if self.acc_events and self._finished is not None else []
        self._finished = kept + self._recorder.events
        self._recorder = None
        if ready and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # ------------------------------------------------------------------ results
    def events(self) -> EventList:
        """The events of the last recorded window."""
        if self._finished is None:
            raise RuntimeError("Profiler didn't finish running: no recorded window has ended yet")
        events = EventList.from_trace(self._finished, self.profile_memory)
        for e in events:  # the steps' ranges under one name (the trace keeps their numbers)
            if e.name.startswith("ProfilerStep#"):
                e.name = e.key = "ProfilerStep*"
        return events

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """The last window's events averaged per name (and per input shapes when asked;
        needs ``record_shapes=True``)."""
        return self.events().key_averages(group_by_input_shape)

    def total_average(self) -> FunctionEventAvg:
        return self.events().total_average()

    def export_chrome_trace(self, path: str) -> None:
        """Write the last window as a Chrome trace (``traceEvents`` JSON; gzip for ``.gz``)."""
        if self._finished is None:
            raise RuntimeError("Profiler didn't finish running: no recorded window has ended yet")
        _write_chrome_trace(
            path, self._finished, {"metadata": dict(self._metadata)} if self._metadata else None
        )

    def add_metadata(self, key: str, value: str) -> None:
        """Add a string key/value to the exported trace's metadata."""
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """Add a key/value (a JSON string) to the exported trace's metadata."""
        self._metadata[key] = value
