"""``add_embedding``'s files for TensorBoard's projector: under ``<log_dir>/<step>/<tag>/``
the vectors (``tensors.tsv``), their labels (``metadata.tsv``) and thumbnails
(``sprite.png``), each listed in ``<log_dir>/projector_config.pbtxt``."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
from google.protobuf import text_format
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig, SpriteMetadata

from .summary import to_numpy

__all__ = ["write_embedding"]


def _metadata_tsv(metadata: list, header: list | None) -> str:
    if header is None:
        return "".join(f"{x}\n" for x in metadata)
    rows = ["\t".join(str(h) for h in header)] + ["\t".join(str(v) for v in row) for row in metadata]
    return "".join(f"{r}\n" for r in rows)


def _sprite(images: np.ndarray, path: str) -> tuple[int, int]:
    """Tile ``images`` (N, C, H, W; values in [0, 1]) in a square grid as ``sprite.png``."""
    from PIL import Image

    n, c, h, w = images.shape
    side = math.ceil(math.sqrt(n))
    grid = np.zeros((side * h, side * w, c), dtype=np.uint8)
    for i, img in enumerate(images):
        r, col = divmod(i, side)
        grid[r * h : (r + 1) * h, col * w : (col + 1) * w] = np.clip(img.transpose(1, 2, 0) * 255, 0, 255)
    Image.fromarray(grid.squeeze(-1) if c == 1 else grid).save(path)
    return h, w


def write_embedding(
    logdir: str,
    mat: Any,
    metadata: list | None,
    label_img: Any,
    global_step: int,
    tag: str,
    metadata_header: list | None,
) -> None:
    """Write one embedding of the vectors ``mat`` (N, D) and register it in the projector config."""
    vectors = to_numpy(mat)
    if vectors.ndim != 2:
        raise ValueError(f"add_embedding: mat must be 2-D (N, D), got shape {list(vectors.shape)}")
    subdir = f"{str(global_step).zfill(5)}/{tag.replace('/', '_')}"
    folder = os.path.join(logdir, subdir)
    os.makedirs(folder, exist_ok=True)
    info = EmbeddingInfo(
        tensor_name=f"{tag}:{str(global_step).zfill(5)}", tensor_path=f"{subdir}/tensors.tsv"
    )
    with open(os.path.join(folder, "tensors.tsv"), "w") as f:
        f.writelines("\t".join(repr(float(v)) for v in row) + "\n" for row in vectors)
    if metadata is not None:
        if len(metadata) != vectors.shape[0]:
            raise ValueError(f"add_embedding: {len(metadata)} metadata rows for {vectors.shape[0]} vectors")
        with open(os.path.join(folder, "metadata.tsv"), "w") as f:
            f.write(_metadata_tsv(list(metadata), metadata_header))
        info.metadata_path = f"{subdir}/metadata.tsv"
    if label_img is not None:
        h, w = _sprite(to_numpy(label_img).astype(np.float64), os.path.join(folder, "sprite.png"))
        info.sprite.CopyFrom(SpriteMetadata(image_path=f"{subdir}/sprite.png", single_image_dim=[w, h]))
    config = ProjectorConfig(embeddings=[info])
    with open(os.path.join(logdir, "projector_config.pbtxt"), "a") as f:
        f.write(text_format.MessageToString(config))
