"""``torch.autograd.profiler``: ``record_function``, the legacy ``profile`` context, and
the event lists both profilers return (``key_averages().table()``, Chrome traces).

Recording is built on :mod:`disttorch.utils.trace`: a running profiler adds a sink to it,
so it receives the spans disttorch records for profilers (DDP's buckets and all-reduces,
the optimisers' ``Optimizer.step#SGD.step`` ranges) and the ``record_function`` ranges, and
while it runs every op is timed too: each ``Function.apply`` (forward, named as PyTorch's
operator, ``aten::matmul``, ``aten::linear``: see :func:`op_event_name`; a user Function by
its class), each backward node the engine runs (``autograd::engine::evaluate_function:
MmBackward0`` over ``MmBackward0``), each gradient accumulated into a leaf
(``torch::autograd::AccumulateGrad``) and the implicit gradient of ``backward()``
(``aten::ones_like``), and Tensor's in-place methods (``aten::add_``, see
:data:`PROFILED_METHODS`). Only what runs is recorded, when it runs: PyTorch's operators that
disttorch computes inside one op are not listed apart. Op timing is installed only while a
profiler runs, so it costs nothing otherwise. Times are wall-clock microseconds on the CPU.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import re
import socket
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from .._tensor import Tensor
from ..utils import trace
from . import backprop as _backprop
from . import engine as _engine
from . import function as _function

__all__ = [
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "emit_nvtx",
    "enter_range",
    "exit_range",
    "profile",
    "record_function",
]

_ORIG_APPLY = _function.Function.__dict__["apply"].__func__
_ORIG_CALL_BACKWARD = _engine._call_backward
_ORIG_ACCUMULATE = _engine._accumulate
_ORIG_ONES_LIKE = _backprop._ones_like
_recording: list = []  # the running recorders (at most one)
_install_lock = threading.Lock()


class record_function:
    """Label a range of code; a running profiler shows it as one event with that name.

    Usable as a context manager (``with record_function("data"):``) or a decorator.
    Outside a profiler (and a launcher trace) it costs one check.
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._start: float | None = None

    def __enter__(self) -> record_function:  # noqa: PYI034
        self._start = trace.begin(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        extra = {"args": self.args} if self.args is not None else {}
        trace.end(self.name, self._start, "user_annotation", **extra)
        self._start = None

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


def enter_range(name: str, args: str | None = None) -> record_function:
    """``torch.ops.profiler._record_function_enter``: open a ``record_function`` range and
    return its handle (what code traced through ``record_function`` calls)."""
    handle = record_function(name, args)
    handle.__enter__()
    return handle


def exit_range(handle: record_function) -> None:
    """``torch.ops.profiler._record_function_exit``: close the range of ``handle``."""
    if not isinstance(handle, record_function):
        raise TypeError(
            f"_record_function_exit(): expected the handle _record_function_enter returned, got "
            f"{type(handle).__name__}"
        )
    handle.__exit__(None, None, None)


def _shapes(args: tuple) -> list:
    return [list(a._data.shape) if isinstance(a, Tensor) else [] for a in args]


#: the number of inputs of PyTorch's schema for ops whose tensors come first in the order of
#: disttorch's arguments (the rest, numbers and lists, have no shape): ``record_shapes``
#: lists that many, as PyTorch's (``aten::conv2d`` has 7); the operators an op dispatches to
#: take its leading inputs too
_SCHEMA_INPUTS: dict[str, int] = {
    **{f"aten::conv{d}d": 7 for d in (1, 2, 3)},
    **{f"aten::conv_transpose{d}d": 8 for d in (1, 2, 3)},
    "aten::convolution": 9,
    "aten::_convolution": 13,
    **{f"aten::max_pool{d}d": 6 for d in (1, 2, 3)},
    **{f"aten::max_pool{d}d_with_indices": 6 for d in (2, 3)},
    "aten::avg_pool1d": 6,
    **{f"aten::avg_pool{d}d": 7 for d in (2, 3)},
    **{f"aten::{p}adaptive_avg_pool{d}d": 2 for d in (2, 3) for p in ("", "_")},
    "aten::batch_norm": 9,
    "aten::_batch_norm_impl_index": 9,
    "aten::native_batch_norm": 8,
    "aten::layer_norm": 6,
    "aten::native_layer_norm": 5,
    **{f"aten::{p}{f}": 3 for f in ("softmax", "log_softmax") for p in ("", "_")},
    "aten::clamp_min": 2,
    "aten::clamp_min_": 2,
}


def _input_dims(name: str, shapes: list) -> list:
    """``shapes`` as PyTorch's event for ``name`` lists them: one per input of its schema."""
    n = _SCHEMA_INPUTS.get(name)
    if n is None or any(shapes[n:]):
        return shapes
    return (shapes + [[]] * n)[:n]


def _out_bytes(out: Any) -> int:
    if isinstance(out, Tensor):
        return int(out._data.nbytes)
    if isinstance(out, tuple):
        return sum(_out_bytes(o) for o in out)
    return 0


def _flops(name: str, args: tuple, out: Any) -> int:
    """Multiply-adds x 2 of the matrix-product ops (as PyTorch's ``with_flops`` counts
    matmul, linear and convolution); 0 for other ops."""
    if not isinstance(out, Tensor) or len(args) < 2:
        return 0
    if not (isinstance(args[0], Tensor) and isinstance(args[1], Tensor)):  # cat's (dim, *tensors)
        return 0
    x, w = args[0]._data, args[1]._data
    if name == "Matmul":
        return 2 * out._data.size * x.shape[-1]
    if name == "LinearFunction":
        return 2 * out._data.size * w.shape[-1]
    if name == "ConvNd":  # weight (C_out, C_in / groups, *kernel)
        return 2 * out._data.size * (w.size // w.shape[0])
    if name == "ConvTransposeNd":  # weight (C_in, C_out / groups, *kernel)
        return 2 * x.size * (w.size // w.shape[0])
    return 0


_event_names: dict = {}


def op_event_name(cls: type, args: tuple) -> str:
    """The profiler's name for a built-in op's forward: the class's ``_profiled_as`` where it
    sets one (a name, or a function of the call's arguments giving it), else PyTorch's
    operator read off the op's node name (``NativeLayerNormBackward0``:
    ``aten::native_layer_norm``); a user-defined Function is named by its class."""
    custom = cls.__dict__.get("_profiled_as")
    if callable(custom):
        return custom(*args)
    name = _event_names.get(cls)
    if name is None:
        name = cls.__dict__.get("_profiled_as") or cls.__name__
        if cls._raw and "_profiled_as" not in cls.__dict__:
            node = cls._node_name or re.sub(r"(Function|Fn)$", "", cls.__name__)
            stem = re.sub(r"Backward\d*$", "", node)
            stem = re.sub(r"(\d)D", r"\1d", stem)  # MaxPool2D: max_pool2d
            name = "aten::" + re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem).lower()
        _event_names[cls] = name
    return name


def _nll_loss_calls(input: Tensor, *args: Any) -> tuple[str, ...]:
    """``nll_loss_nd``'s one kernel: ``nll_loss`` for 1-D/2-D input, ``nll_loss2d`` for 4-D
    (other input is reshaped first in PyTorch, views of their own: not listed)."""
    ndim = input._data.ndim
    if ndim <= 2:
        return ("aten::nll_loss", "aten::nll_loss_forward")
    return ("aten::nll_loss2d", "aten::nll_loss2d_forward") if ndim == 4 else ()


def _adaptive_avg_pool_calls(input: Tensor, out_size: tuple) -> tuple[str, ...]:
    """PyTorch's kernel, unless the output is one entry per channel (then a ``mean``, its
    own sum and division: not listed)."""
    if all(s == 1 for s in out_size):
        return ()
    return (f"aten::_adaptive_avg_pool{len(out_size)}d",)


#: the operators PyTorch's op calls in turn, each the one op (allocations aside) under the
#: one before: they nest in its event as in PyTorch's tables (``aten::relu`` over
#: ``aten::clamp_min``), each spanning the same computation. A function of the op's
#: arguments gives them where they depend on the call.
DISPATCHES_TO: dict[str, tuple[str, ...] | Callable[..., tuple[str, ...]]] = {
    "aten::relu": ("aten::clamp_min",),
    "aten::relu_": ("aten::clamp_min_",),
    **{f"aten::conv{d}d": ("aten::convolution", "aten::_convolution") for d in (1, 2, 3)},
    **{f"aten::conv_transpose{d}d": ("aten::convolution", "aten::_convolution") for d in (1, 2, 3)},
    "aten::max_pool2d": ("aten::max_pool2d_with_indices",),
    "aten::max_pool3d": ("aten::max_pool3d_with_indices",),
    "aten::adaptive_avg_pool2d": _adaptive_avg_pool_calls,
    "aten::adaptive_avg_pool3d": _adaptive_avg_pool_calls,
    "aten::batch_norm": ("aten::_batch_norm_impl_index", "aten::native_batch_norm"),
    "aten::layer_norm": ("aten::native_layer_norm",),
    "aten::group_norm": ("aten::native_group_norm",),
    "aten::log_softmax": ("aten::_log_softmax",),
    "aten::softmax": ("aten::_softmax",),
    "aten::nll_loss_nd": _nll_loss_calls,
}


#: Tensor's in-place methods and operators -> PyTorch's operator (``"__iadd__":
#: "aten::add_"``), timed as one event while a profiler runs (filled by the ops' binding step)
PROFILED_METHODS: dict[str, str] = {}
_quiet = threading.local()  # depth of profiled methods running: the ops inside are theirs


def _dims_arg(name: str, shapes: list | None) -> dict:
    """The event's ``Input Dims`` (none without ``record_shapes``): an op's own inputs, or
    for an operator it dispatches to, the op's leading inputs where that one's schema is known."""
    if shapes is None:
        return {}
    return {"Input Dims": _input_dims(name, shapes)}


def _profiled_method(op: str, method: Callable) -> Callable:
    """``method`` timed as the one operator ``op``: the ops it runs (an in-place op runs its
    out-of-place twin while autograd records, then writes) are that computation, not listed."""

    @functools.wraps(method)
    def profiled(*args: Any, **kwargs: Any) -> Any:
        depth = getattr(_quiet, "depth", 0)
        if depth or not _recording:
            return method(*args, **kwargs)
        start = trace._now_us()
        inner = [(callee, trace._now_us()) for callee in DISPATCHES_TO.get(op, ())]
        _quiet.depth = depth + 1
        try:
            return method(*args, **kwargs)
        finally:
            _quiet.depth = depth
            shapes = _shapes(args) if _recording[0].record_shapes else None
            for callee, callee_start in reversed(inner):
                trace.end(callee, callee_start, "cpu_op", **_dims_arg(callee, shapes))
            trace.end(op, start, "cpu_op", **_dims_arg(op, shapes))

    profiled.profiled = method  # type: ignore[attr-defined]
    return profiled


def _profiled_apply(cls: type, *args: Any) -> Any:
    rec = _recording[0] if _recording else None
    if rec is None or getattr(_quiet, "depth", 0):
        return _ORIG_APPLY(cls, *args)
    start = trace._now_us()
    name = op_event_name(cls, args)
    callees = DISPATCHES_TO.get(name, ())
    if callable(callees):
        callees = callees(*args)
    inner = [(callee, trace._now_us()) for callee in callees]
    out = _ORIG_APPLY(cls, *args)
    shapes = _shapes(args) if rec.record_shapes else None
    for callee, callee_start in reversed(inner):
        trace.end(callee, callee_start, "cpu_op", **_dims_arg(callee, shapes))
    extra = _dims_arg(name, shapes)
    if rec.profile_memory:
        extra["Bytes"] = _out_bytes(out)
    if rec.with_flops:
        flops = _flops(cls.__name__, args, out)
        if flops:
            extra["flops"] = flops
    trace.end(name, start, "cpu_op", **extra)
    return out


def _profiled_call_backward(node: Any, grads: list) -> tuple:
    """A backward node as PyTorch's engine records it: ``autograd::engine::evaluate_function:
    <node>`` over the node's own event, both spanning its backward."""
    name = node.name()
    outer = trace._now_us()
    start = trace._now_us()
    out = _ORIG_CALL_BACKWARD(node, grads)
    trace.end(name, start, "cpu_op")
    trace.end(f"autograd::engine::evaluate_function: {name}", outer, "cpu_op")
    return out


_ACCUMULATE = "torch::autograd::AccumulateGrad"


def _profiled_accumulate(leaf: Tensor, *args: Any) -> None:
    """A leaf's gradient accumulated (its hooks included), named as PyTorch's engine names it."""
    outer = trace._now_us()
    start = trace._now_us()
    _ORIG_ACCUMULATE(leaf, *args)
    trace.end(_ACCUMULATE, start, "cpu_op")
    trace.end(f"autograd::engine::evaluate_function: {_ACCUMULATE}", outer, "cpu_op")


def _profiled_ones_like(out: Tensor) -> Tensor:
    """The implicit gradient of ``backward()`` on a scalar, PyTorch's ``aten::ones_like``."""
    start = trace._now_us()
    grad = _ORIG_ONES_LIKE(out)
    trace.end("aten::ones_like", start, "cpu_op")
    return grad


def _profiler_enabled() -> bool:
    """Whether a profiler is recording (``torch.autograd._profiler_enabled``)."""
    return bool(_recording)


def _disable_profiler() -> None:
    """Stop the running profiler's recording, if any (``torch.autograd._disable_profiler``:
    what Lightning calls to close a profiler left open)."""
    with _install_lock:
        running = list(_recording)
    for recorder in running:
        recorder.stop()


class _Recorder:
    """One recording window: collects trace events and times ops while active."""

    def __init__(self, record_shapes: bool, profile_memory: bool, with_flops: bool = False) -> None:
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_flops = with_flops
        self.events: list[dict] = []

    def start(self) -> None:
        with _install_lock:
            if _recording:
                raise RuntimeError(
                    "a disttorch profiler is already running; nested or concurrent "
                    "profilers are not supported (stop the other one first)"
                )
            _recording.append(self)
            _function.Function.apply = classmethod(_profiled_apply)
            _engine._call_backward = _profiled_call_backward
            _engine._accumulate = _profiled_accumulate
            _backprop._ones_like = _profiled_ones_like
            for name, op in PROFILED_METHODS.items():
                method = Tensor.__dict__.get(name)
                if method is not None:
                    setattr(Tensor, name, _profiled_method(op, method))
        trace.add_sink(self.events)

    def stop(self) -> None:
        trace.remove_sink(self.events)
        with _install_lock:
            if _recording and _recording[0] is self:
                _recording.clear()
                _function.Function.apply = classmethod(_ORIG_APPLY)
                _engine._call_backward = _ORIG_CALL_BACKWARD
                _engine._accumulate = _ORIG_ACCUMULATE
                _backprop._ones_like = _ORIG_ONES_LIKE
                for name in PROFILED_METHODS:
                    method = Tensor.__dict__.get(name)
                    if hasattr(method, "profiled"):  # (unless replaced meanwhile)
                        setattr(Tensor, name, method.profiled)


class FunctionEvent:
    """One recorded range: ``name``, ``cpu_time_total`` (inclusive, us), ``self_cpu_time_total``
    (minus its children), ``input_shapes``, thread, start time (``time_range``)."""

    def __init__(self, event: dict) -> None:
        self.name = self.key = event["name"]
        self.category = event.get("cat", "")
        self.thread = event.get("tid", 0)
        self.start_us, self.cpu_time_total = float(event["ts"]), float(event.get("dur", 0.0))
        self.input_shapes = event.get("args", {}).get("Input Dims", [])
        self.cpu_memory_usage = int(event.get("args", {}).get("Bytes", 0))
        self.flops = int(event.get("args", {}).get("flops", 0))
        self.self_cpu_time_total = self.cpu_time_total
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1

    @property
    def end_us(self) -> float:
        return self.start_us + self.cpu_time_total

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent name={self.name} cpu_time_total={self.cpu_time_total:.3f}us "
            f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
            f"input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The events of one key summed: ``count``, ``cpu_time_total``, ``self_cpu_time_total``,
    ``cpu_time`` (average per call), ``input_shapes`` (when grouped by them)."""

    def __init__(self, key: str, input_shapes: Any = None) -> None:
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_time_total = self.self_device_time_total = 0.0
        self.flops = 0
        self.is_user_annotation = False

    def add(self, e: FunctionEvent) -> FunctionEventAvg:
        self.count += 1
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.cpu_memory_usage
        self.flops += e.flops
        self.is_user_annotation = e.category == "user_annotation"
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    # no accelerator here: device (CUDA) times are zero, as on PyTorch's CPU build
    cuda_time_total = self_cuda_time_total = property(lambda self: 0.0)
    device_time = cuda_time = property(lambda self: 0.0)

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
            f"cpu_time={self.cpu_time:.3f}us count={self.count} input_shapes={self.input_shapes}>"
        )


_SORT_KEYS = (
    "cpu_time",
    "cuda_time",
    "device_time",
    "cpu_time_total",
    "cuda_time_total",
    "device_time_total",
    "self_cpu_time_total",
    "self_cuda_time_total",
    "self_device_time_total",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "count",
)


def _fmt_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_mem(n: int) -> str:
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} b"


class EventList(list):
    """A list of :class:`FunctionEvent` (or, from :meth:`key_averages`, of
    :class:`FunctionEventAvg`) with ``table()``, ``key_averages()``, ``total_average()``
    and ``export_chrome_trace()``."""

    def __init__(
        self,
        events: Iterable = (),
        raw: list | None = None,
        profile_memory: bool = False,
        with_shapes: bool = False,
    ) -> None:
        super().__init__(events)
        self._raw = raw if raw is not None else []
        self._profile_memory = profile_memory
        self._with_shapes = with_shapes

    @classmethod
    def from_trace(cls, raw: list[dict], profile_memory: bool = False) -> EventList:
        """Build the events (with parents, children and self times) from trace events."""
        spans = [FunctionEvent(e) for e in raw if e.get("ph") == "X"]
        by_thread: dict[Any, list] = defaultdict(list)
        for e in spans:
            by_thread[e.thread].append(e)
        for evs in by_thread.values():
            evs.sort(key=lambda e: (e.start_us, -e.cpu_time_total))
            stack: list[FunctionEvent] = []
            for e in evs:
                while stack and stack[-1].end_us <= e.start_us:
                    stack.pop()
                if stack:
                    parent = stack[-1]
                    e.cpu_parent = parent
                    parent.cpu_children.append(e)
                    parent.self_cpu_time_total -= e.cpu_time_total
                stack.append(e)
        spans.sort(key=lambda e: e.start_us)
        return cls(spans, raw, profile_memory, with_shapes=False)

    def key_averages(
        self,
        group_by_input_shapes: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """One :class:`FunctionEventAvg` per event name (and input shapes when asked)."""
        groups: dict[tuple, FunctionEventAvg] = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shapes else None
            key = (e.key, shapes)
            if key not in groups:
                groups[key] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shapes else None)
            groups[key].add(e)
        return EventList(groups.values(), self._raw, self._profile_memory, group_by_input_shapes)

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one :class:`FunctionEventAvg` (key ``"Total"``)."""
        total = FunctionEventAvg("Total")
        for e in self:
            if isinstance(e, FunctionEvent):
                total.add(e)
            else:
                _merge(total, e)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """A text table of the events, like PyTorch's: name, self CPU time and share, total
        CPU time and share, average, number of calls (and input shapes / memory when
        recorded), sorted by ``sort_by`` (descending), at most ``row_limit`` rows; ``""`` when
        nothing was recorded (as PyTorch's)."""
        if not len(self):
            return ""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"sort_by must be one of {', '.join(_SORT_KEYS)}; got {sort_by!r}")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total_self = self.self_cpu_time_total or 1.0
        # as wide as the longest name of all events, shown or not (as PyTorch's)
        name_w = min(max(len(str(e.key)) for e in self) + 4, max_name_column_width)
        cols = [
            ("Name", name_w),
            ("Self CPU %", 12),
            ("Self CPU", 12),
            ("CPU total %", 12),
            ("CPU total", 12),
            ("CPU time avg", 12),
        ]
        if self._profile_memory:
            cols += [("CPU Mem", 12), ("Self CPU Mem", 12)]
        cols.append(("# of Calls", 12))
        show_flops = any(getattr(e, "flops", 0) for e in self)
        if show_flops:
            cols.append(("Total MFLOPs", 12))
        if self._with_shapes:
            cols.append(("Input Shapes", min(max_shapes_column_width, 40)))
        line = "  ".join("-" * w for _, w in cols) + "  "
        out = []
        if header:
            out += ["=" * len(line), header]
        out += [line, "  ".join(h.rjust(w) for h, w in cols) + "  ", line]
        for e in rows:
            name = str(e.key)
            if len(name) > name_w:
                name = name[: name_w - 3] + "..."
            count = max(getattr(e, "count", 1), 1)
            cells = [
                name,
                f"{100 * e.self_cpu_time_total / total_self:.2f}%",
                _fmt_time(e.self_cpu_time_total),
                f"{100 * e.cpu_time_total / total_self:.2f}%",
                _fmt_time(e.cpu_time_total),
                _fmt_time(e.cpu_time_total / count),
            ]
            if self._profile_memory:
                cells += [_fmt_mem(e.cpu_memory_usage), _fmt_mem(e.self_cpu_memory_usage)]
            cells.append(str(count))
            if show_flops:
                cells.append(f"{e.flops / 1e6:.3f}" if e.flops else "--")
            if self._with_shapes:
                cells.append(str(e.input_shapes)[: cols[-1][1]])
            out.append("  ".join(c.rjust(w) for c, (_, w) in zip(cells, cols)) + "  ")
        out += [line, f"Self CPU time total: {_fmt_time(self.self_cpu_time_total)}", ""]
        return "\n".join(out)

    def export_chrome_trace(self, path: str) -> None:
        """Write the recorded events as a Chrome trace (JSON; gzip when ``path`` ends in .gz),
        which chrome://tracing, Perfetto and TensorBoard's profiler open."""
        _write_chrome_trace(path, self._raw)

    def __str__(self) -> str:
        return self.table()


def _merge(total: FunctionEventAvg, other: FunctionEventAvg) -> None:
    total.count += other.count
    total.cpu_time_total += other.cpu_time_total
    total.self_cpu_time_total += other.self_cpu_time_total
    total.cpu_memory_usage += other.cpu_memory_usage
    total.self_cpu_memory_usage += other.self_cpu_memory_usage
    total.flops += other.flops


def _write_chrome_trace(path: str, raw: list[dict], metadata: dict | None = None) -> None:
    pid = os.getpid()
    threads = sorted({str(e.get("tid", 0)) for e in raw})
    tid_of = {t: i for i, t in enumerate(threads)}
    events = [
        {
            "name": "process_name",
            "ph": "M",
            "pid": pid,
            "tid": 0,
            "args": {"name": f"disttorch (rank {trace._rank()})"},
        }
    ]
    events += [
        {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid_of[t], "args": {"name": t}} for t in threads
    ]
    for e in raw:
        ev = dict(e)
        ev["pid"], ev["tid"] = pid, tid_of[str(e.get("tid", 0))]
        events.append(ev)
    doc = {
        "schemaVersion": 1,
        "displayTimeUnit": "ms",
        "host_name": socket.gethostname(),
        "traceEvents": events,
        "traceName": path,
    }
    if metadata:
        doc.update(metadata)
    data = json.dumps(doc).encode()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)


class profile:
    """``torch.autograd.profiler.profile``: record the ops run inside the ``with`` block.

    Args:
        enabled: ``False`` records nothing.
        use_cuda, use_device: accepted; there is no device to profile here.
        record_shapes: keep the input shapes of every op (``key_averages(group_by_input_shapes=True)``).
        profile_memory: record the bytes each op's outputs take ("CPU Mem" columns;
            PyTorch's counts allocations minus frees inside the op, ours the outputs' size).
        with_flops: count the FLOPs of matrix products and convolutions ("Total MFLOPs").
        with_stack, with_modules: accepted, not recorded.
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback: Any = None,
    ) -> None:
        self.enabled = enabled
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_flops = with_flops
        self._recorder: _Recorder | None = None
        self._events: list[dict] = []
        self.function_events: EventList | None = None

    def __enter__(self) -> profile:  # noqa: PYI034
        if self.enabled:
            self._recorder = _Recorder(self.record_shapes, self.profile_memory, self.with_flops)
            self._recorder.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._recorder is not None:
            self._recorder.stop()
            self._events = self._recorder.events
            self._recorder = None
        self.function_events = EventList.from_trace(self._events, self.profile_memory)

    def _check_finished(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self) -> EventList:
        """Every recorded event."""
        return self._check_finished()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """Events averaged per name (and input shapes when ``group_by_input_shape``)."""
        return self._check_finished().key_averages(group_by_input_shape)

    def total_average(self) -> FunctionEventAvg:
        return self._check_finished().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._check_finished().self_cpu_time_total

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        return self._check_finished().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace JSON file."""
        self._check_finished().export_chrome_trace(path)

    def __str__(self) -> str:
        return str(self._check_finished())


class emit_nvtx:  # noqa: N801 (PyTorch's name)
    """``with emit_nvtx():`` marks every autograd op with an NVTX range for NVIDIA's tools.
    As on PyTorch's CPU build, entering it enabled raises ``AssertionError`` (no CUDA);
    ``enabled=False`` does nothing."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled, self.record_shapes = enabled, record_shapes

    def __enter__(self) -> emit_nvtx | None:
        if not self.enabled:
            return None
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __exit__(self, *exc: object) -> None:
        return None
