"""Pipeline schedules: in which order a stage runs the forwards and backwards of the
microbatches of one step.

* ``ScheduleGPipe``: every forward, then every backward (fill, drain). Simple; holds the
  activations of all the microbatches at once.
* ``Schedule1F1B``: stage ``s`` of ``n`` first runs ``n - s`` forwards, then alternates one
  backward and one forward, then the remaining backwards: at most ``n - s`` microbatches'
  activations are held, and the pipeline is as full as GPipe's.

``step(x)`` on the first stage, ``step(target=y, losses=losses)`` on the last, ``step()`` in
between: the batch is split into ``n_microbatches``, the last stage computes
``loss_fn(output, target)`` per microbatch (put into ``losses``) and returns the outputs
merged into one batch. With ``scale_grads`` (the default) the accumulated gradients are
divided by the number of microbatches at the end of the step. Every receive waits before
the next message is sent, so the ranks never wait on each other in a cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....autograd import grad_mode
from .microbatch import merge_chunks, split_args_kwargs_into_chunks
from .stage import PipelineStage

__all__ = ["PipelineScheduleSingle", "ScheduleGPipe", "Schedule1F1B"]


class PipelineScheduleSingle:
    """A schedule of one stage per rank (the base of :class:`ScheduleGPipe` and
    :class:`Schedule1F1B`).

    Args:
        stage: this rank's :class:`PipelineStage`.
        n_microbatches: how many microbatches a step splits the batch into.
        loss_fn: ``loss_fn(output, target)`` on the last stage; without it a step runs
            forward only.
        args_chunk_spec, kwargs_chunk_spec: only the default (split along dimension 0).
        output_merge_spec: only the default (concatenate along dimension 0).
        scale_grads: divide the gradients by ``n_microbatches`` at the end of the step.
    """

    def __init__(
        self,
        stage: PipelineStage,
        n_microbatches: int,
        loss_fn: Callable[..., Any] | None = None,
        args_chunk_spec: Any = None,
        kwargs_chunk_spec: Any = None,
        output_merge_spec: Any = None,
        scale_grads: bool = True,
    ) -> None:
        if args_chunk_spec is not None or kwargs_chunk_spec is not None or output_merge_spec is not None:
            raise NotImplementedError(
                "pipeline schedules: only the default chunk and merge specs are supported"
            )
        self._stage = stage
        self._num_stages = stage.num_stages
        self._n_microbatches = n_microbatches
        self._loss_fn = loss_fn
        self._has_backward = loss_fn is not None
        self.scale_grads = scale_grads
        self._internal_losses: list = []

    def step(
        self,
        *args: Any,
        target: Any = None,
        losses: list | None = None,
        return_outputs: bool = True,
        **kwargs: Any,
    ) -> Any:
        """One step over the whole batch (see the module's header); the last stage returns
        the merged outputs, the others ``None``."""
        if self._has_backward and not grad_mode.is_grad_enabled():
            raise RuntimeError(
                "step() requires gradients to be enabled for backward computation; "
                "it should not be used under torch.no_grad() context. "
                "Please call eval() instead."
            )
        if losses is not None and not isinstance(losses, list):
            raise TypeError(f"losses must be a list but got a {type(losses)}")
        stage = self._stage
        stage.has_backward = self._has_backward
        stage.clear_runtime_states()
        n = self._n_microbatches
        if args or kwargs:
            arg_mbs, kwarg_mbs = split_args_kwargs_into_chunks(args, kwargs, n)
        else:
            arg_mbs, kwarg_mbs = [()] * n, [{}] * n
        targets = split_args_kwargs_into_chunks((target,), None, n)[0] if target is not None else None
        self._internal_losses = []
        try:
            for action, mb in self._order():
                if action == "F":
                    output = stage.forward_one_chunk(mb, arg_mbs[mb], kwarg_mbs[mb])
                    if stage.is_last and self._has_backward:
                        if targets is None:
                            raise RuntimeError(
                                "the last pipeline stage needs step(target=...) to compute the loss"
                            )
                        self._internal_losses.append(self._loss_fn(output, targets[mb][0]))
                else:
                    stage.backward_one_chunk(mb, self._internal_losses[mb] if stage.is_last else None)
            stage.wait_sends()
        except BaseException:
            stage.clear_runtime_states()  # a failed step leaves no microbatch behind
            raise
        if self._has_backward and self.scale_grads:
            stage.scale_grads(n)
        if stage.is_last and losses is not None:
            losses[:] = self._internal_losses
        if stage.is_last and return_outputs:
            return merge_chunks(stage.output_chunks)
        return None

    def eval(self, *args: Any, target: Any = None, losses: list | None = None, **kwargs: Any) -> Any:
        """A forward-only step (no backward, gradients untouched)."""
        has_backward, self._has_backward = self._has_backward, False
        try:
            return self.step(*args, target=target, losses=losses, **kwargs)
        finally:
            self._has_backward = has_backward

    def _order(self) -> list[tuple[str, int]]:
        """This stage's actions: ``("F", mb)`` and ``("B", mb)`` in the order to run them."""
        raise NotImplementedError


class ScheduleGPipe(PipelineScheduleSingle):
    """Every microbatch's forward, then every backward."""

    def _order(self) -> list[tuple[str, int]]:
        mbs = range(self._n_microbatches)
        return [("F", i) for i in mbs] + ([("B", i) for i in mbs] if self._has_backward else [])


class Schedule1F1B(PipelineScheduleSingle):
    """One forward, one backward in the steady state (see the module's header)."""

    def __init__(self, stage: PipelineStage, n_microbatches: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(stage, n_microbatches, *args, **kwargs)
        if n_microbatches < self._num_stages:
            raise ValueError(
                f"Number of microbatches ({n_microbatches}) must be greater than "
                f"or equal to the number of stages ({self._num_stages})."
            )

    def _order(self) -> list[tuple[str, int]]:
        n = self._n_microbatches
        if not self._has_backward:
            return [("F", i) for i in range(n)]
        warmup = min(n, self._num_stages - self._stage.stage_index)
        order = [("F", i) for i in range(warmup)]
        for b in range(n):
            order.append(("B", b))
            if warmup + b < n:
                order.append(("F", warmup + b))
        return order
