"""``Summary`` protos for TensorBoard's mesh plugin (vertices, faces and colors of a 3-D
mesh or point cloud) and for videos (an animated GIF, written with moviepy)."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from .summary import to_numpy

__all__ = ["mesh", "video"]


def mesh(tag: str, vertices: Any, colors: Any, faces: Any, config_dict: dict | None) -> Summary:
    """One tensor summary per part given (vertices, faces, colors; each ``(B, N, 3)``),
    with the mesh plugin's metadata: which parts the mesh has and the three.js
    ``config_dict`` as JSON."""
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    config = json.dumps(config_dict, sort_keys=True) if config_dict is not None else "{}"
    parts = [
        (to_numpy(t), kind)
        for t, kind in (
            (vertices, MeshPluginData.VERTEX),
            (faces, MeshPluginData.FACE),
            (colors, MeshPluginData.COLOR),
        )
        if t is not None
    ]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    values = []
    for arr, kind in parts:
        if arr.ndim != 3:
            raise ValueError(f"add_mesh: each part must be (batch, points, 3), got shape {list(arr.shape)}")
        meta = metadata.create_summary_metadata(
            tag, None, kind, components, arr.shape, None, json_config=config
        )
        proto = TensorProto(
            dtype="DT_FLOAT",
            float_val=arr.reshape(-1).tolist(),
            tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(n)) for n in arr.shape]),
        )
        values.append(Summary.Value(tag=metadata.get_instance_name(tag, kind), tensor=proto, metadata=meta))
    return Summary(value=values)


def _frames(video: np.ndarray) -> np.ndarray:
    """``(B, T, C, H, W)`` as ``(T, H', W', C)`` uint8 frames: the batch padded with black
    clips to a power of two and tiled into a grid (rows a power of two, at most the columns);
    floats in [0, 1] or uint8."""
    if video.ndim != 5:
        raise ValueError(f"add_video: expected a (N, T, C, H, W) video, got shape {list(video.shape)}")
    b, t, c, h, w = video.shape
    v = video.astype(np.float32) / 255.0 if video.dtype == np.uint8 else video.astype(np.float32)
    size = 1 << (b - 1).bit_length() if b > 1 else 1
    if size != b:
        v = np.concatenate([v, np.zeros((size - b, t, c, h, w), np.float32)])
    rows = 1 << ((b.bit_length() - 1) // 2)
    cols = size // rows
    grid = v.reshape(rows, cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3).reshape(t, rows * h, cols * w, c)
    return (grid * 255.0).clip(0, 255).astype(np.uint8)


def video(tag: str, tensor: Any, fps: float) -> Summary:
    """A video as an animated GIF image. Without moviepy (or with one that has no
    ``moviepy.editor``) it says so on stdout and logs the tag without an image, as PyTorch."""
    frames = _frames(to_numpy(tensor))
    try:
        import moviepy  # noqa: F401
    except ImportError:
        print("add_video needs package moviepy")
        return Summary(value=[Summary.Value(tag=tag)])
    try:
        from moviepy import editor
    except ImportError:
        print(
            "moviepy is installed, but can't import moviepy.editor.",
            "Some packages could be missing [imageio, requests]",
        )
        return Summary(value=[Summary.Value(tag=tag)])
    _, h, w, c = frames.shape
    clip = editor.ImageSequenceClip(list(frames), fps=fps)
    fd, path = tempfile.mkstemp(suffix=".gif")
    os.close(fd)
    try:
        clip.write_gif(path, logger=None)
        with open(path, "rb") as f:
            gif = f.read()
    finally:
        os.remove(path)
    image = Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=gif)
    return Summary(value=[Summary.Value(tag=tag, image=image)])
