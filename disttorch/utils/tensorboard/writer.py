"""``SummaryWriter``: log scalars, histograms, images, text and hyperparameters to TensorBoard
event files (``events.out.tfevents.*``), as ``torch.utils.tensorboard.SummaryWriter``.

The event files are written by the tensorboard package's own ``EventFileWriter`` (a
queue flushed by a background thread every ``flush_secs`` or ``max_queue`` events), so
``tensorboard --logdir runs`` reads them.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import media as _media
from . import mesh_video as _mesh_video
from . import summary as _summary
from .embedding import write_embedding
from .graph import graph

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` protos to one event file in ``log_dir`` (created if missing)."""

    def __init__(
        self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: int | None = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(
        self, summary: Any, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: tuple, walltime: float | None = None) -> None:
        """Write a ``(GraphDef, RunMetadata)`` pair: the graph, then its run metadata tagged
        ``step1`` (TensorBoard's graph dashboard offers it as a run to show)."""
        graph_def, run_metadata = graph_profile
        self.add_event(Event(graph_def=graph_def.SerializeToString()), None, walltime)
        tagged = TaggedRunMetadata(tag="step1", run_metadata=run_metadata.SerializeToString())
        self.add_event(Event(tagged_run_metadata=tagged), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


class SummaryWriter:
    """Write TensorBoard summaries to event files under ``log_dir``.

    Args:
        log_dir: the directory; default ``runs/<Mon>DD_HH-MM-SS_<hostname><comment>``.
        comment: appended to the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step: after a crash, events from this step on are hidden by TensorBoard
            (a restart marker is written).
        max_queue: events queued before a write to disk is forced.
        flush_secs: seconds between flushes to disk.
        filename_suffix: appended to the event file's name.

    Example::

        writer = SummaryWriter()
        for step in range(100):
            writer.add_scalar("loss/train", loss, step)
        writer.close()
    """

    def __init__(
        self,
        log_dir: str | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        """The writer of ``log_dir`` (opened again after ``close()``)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=self.purge_step, session_log=SessionLog(status=SessionLog.START))
                )
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory event files are written to."""
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one number (a float, or a one-element tensor/array) under ``tag``."""
        self._get_file_writer().add_summary(
            _summary.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime
        )

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several numbers on one chart: each goes to its own run directory
        ``<log_dir>/<main_tag>_<tag>``, under the tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = base + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = FileWriter(
                    path, self.max_queue, self.flush_secs, self.filename_suffix
                )
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Log the distribution of ``values``; ``bins`` as ``numpy.histogram`` takes it, or
        ``'tensorflow'`` (TensorFlow's default exponential buckets)."""
        self._get_file_writer().add_summary(
            _summary.histogram(tag, values, bins, max_bins), global_step, walltime
        )

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Log an image: floats in [0, 1] or uint8 in [0, 255], layout ``dataformats``
        ('CHW', 'HWC', 'HW'; 1, 3 or 4 channels). Needs Pillow."""
        arr = _summary.to_numpy(img_tensor)
        self._get_file_writer().add_summary(
            _summary.image(tag, _summary.to_hwc(arr, dataformats)), global_step, walltime
        )

    def add_image_with_boxes(
        self,
        tag: str,
        img_tensor: Any,
        box_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        rescale: float = 1,
        dataformats: str = "CHW",
        labels: Any = None,
    ) -> None:
        """Log an image with boxes ``(N, 4)`` as ``(xmin, ymin, xmax, ymax)`` pixels drawn
        in red, each with its label of ``labels`` (one string per box; otherwise none are
        drawn), resized by ``rescale``. Needs Pillow."""
        if isinstance(labels, str):
            labels = [labels]
        boxes = _summary.to_numpy(box_tensor).reshape(-1, 4)
        if labels is not None and len(labels) != boxes.shape[0]:
            labels = None
        hwc = _summary.to_hwc(_summary.to_numpy(img_tensor), dataformats)
        summary = _summary.image(tag, hwc, _media.boxes_drawer(boxes, labels, rescale))
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """Log a batch of images as one grid (up to 8 per row)."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """Log a matplotlib figure (or a list of figures, as a grid) as an image; ``close``
        closes them."""
        if isinstance(figure, (list, tuple)):
            frames = [_summary.figure_to_hwc(f, close) for f in figure]
            self.add_images(tag, np.stack(frames), global_step, walltime, dataformats="NHWC")
        else:
            self.add_image(
                tag, _summary.figure_to_hwc(figure, close), global_step, walltime, dataformats="HWC"
            )

    def add_text(
        self, tag: str, text_string: str, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        """Log a string (rendered as Markdown by TensorBoard)."""
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict,
        metric_dict: dict,
        hparam_domain_discrete: dict | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Log a run's hyperparameters and final metrics for TensorBoard's HPARAMS tab, in
        the sub-directory ``run_name`` (default: the current time) of ``log_dir``."""
        exp, start, end = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for s in (exp, start, end):
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_histogram_raw(
        self,
        tag: str,
        min: float,
        max: float,
        num: int,
        sum: float,
        sum_squares: float,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a histogram given by its statistics and buckets (right edges and counts)."""
        summary = _media.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_audio(
        self,
        tag: str,
        snd_tensor: Any,
        global_step: int | None = None,
        sample_rate: int = 44100,
        walltime: float | None = None,
    ) -> None:
        """Log a mono sound (shape (1, L) or (L,), values in [-1, 1]) as a WAV."""
        self._get_file_writer().add_summary(_media.audio(tag, snd_tensor, sample_rate), global_step, walltime)

    def add_video(
        self,
        tag: str,
        vid_tensor: Any,
        global_step: int | None = None,
        fps: float = 4,
        walltime: float | None = None,
    ) -> None:
        """Log a video ``(N, T, C, H, W)`` (floats in [0, 1] or uint8; a batch tiled into a
        grid) as an animated GIF. Needs moviepy (with ``moviepy.editor``)."""
        self._get_file_writer().add_summary(_mesh_video.video(tag, vid_tensor, fps), global_step, walltime)

    def add_mesh(
        self,
        tag: str,
        vertices: Any,
        colors: Any = None,
        faces: Any = None,
        config_dict: dict | None = None,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a 3-D mesh or point cloud for TensorBoard's mesh plugin: ``vertices``, and
        optionally ``colors`` (per vertex) and ``faces`` (vertex indices), each ``(B, N, 3)``;
        ``config_dict`` configures the three.js scene (camera, lights, material)."""
        summary = _mesh_video.mesh(tag, vertices, colors, faces, config_dict)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve(
        self,
        tag: str,
        labels: Any,
        predictions: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Log the precision-recall curve of binary ``labels`` against ``predictions`` in [0, 1]."""
        summary = _media.pr_curve(tag, labels, predictions, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve_raw(
        self,
        tag: str,
        true_positive_counts: Any,
        false_positive_counts: Any,
        true_negative_counts: Any,
        false_negative_counts: Any,
        precision: Any,
        recall: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Log a precision-recall curve already computed: counts, precision and recall at
        each of ``num_thresholds`` thresholds (``weights`` is unused, as in PyTorch)."""
        rows = (true_positive_counts, false_positive_counts, true_negative_counts, false_negative_counts)
        summary = _media.pr_curve_raw(tag, (*rows, precision, recall), num_thresholds)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_tensor(
        self, tag: str, tensor: Any, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        """Log a whole tensor (its dtype, shape and values)."""
        self._get_file_writer().add_summary(_media.tensor(tag, tensor), global_step, walltime)

    def add_custom_scalars_multilinechart(
        self, tags: list, category: str = "default", title: str = "untitled"
    ) -> None:
        """A custom-scalars chart of the scalars ``tags`` drawn together."""
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(
        self, tags: list, category: str = "default", title: str = "untitled"
    ) -> None:
        """A custom-scalars chart of a value and its margin: ``tags`` is [value, lower, upper]."""
        if len(tags) != 3:
            raise ValueError(f"a margin chart takes [value, lower, upper] tags, got {tags!r}")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_custom_scalars(self, layout: dict) -> None:
        """Lay out the custom-scalars dashboard: ``{category: {title: ["Multiline", [tags]]}}``
        (or ``["Margin", [value, lower, upper]]``)."""
        self._get_file_writer().add_summary(_media.custom_scalars(layout))

    def add_embedding(
        self,
        mat: Any,
        metadata: list | None = None,
        label_img: Any = None,
        global_step: int | None = None,
        tag: str = "default",
        metadata_header: list | None = None,
    ) -> None:
        """Save vectors (N, D) with labels and thumbnails for TensorBoard's projector, under
        ``<log_dir>/<step, 5 digits>/<tag>/``."""
        write_embedding(
            self._get_file_writer().get_logdir(),
            mat,
            metadata,
            label_img,
            global_step or 0,
            tag,
            metadata_header,
        )

    def add_graph(
        self, model: Any, input_to_model: Any = None, verbose: bool = False, use_strict_trace: bool = True
    ) -> None:
        """Log the graph of the operators ``model`` runs on ``input_to_model`` (run once,
        without gradients), in its modules' scopes, as PyTorch's trace draws it (see
        ``tensorboard.graph`` for what differs)."""
        self._get_file_writer().add_graph(graph(model, input_to_model))

    def flush(self) -> None:
        """Write every pending event to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file (a later ``add_*`` opens a new one)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
