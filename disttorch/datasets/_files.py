"""Where the shipped data files are: inside the installed package, found with importlib.resources."""

from __future__ import annotations

import gzip
from importlib import resources
from pathlib import Path

FILES = ("optdigits.tra.csv.gz", "optdigits.tes.csv.gz", "tinyshakespeare.txt.gz")


def data_path(name: str) -> Path:
    """Path of the shipped data file ``name`` (one of :data:`FILES`).

    Raises:
        ValueError: ``name`` is not a shipped file.
        FileNotFoundError: the package was installed without its data files.
    """
    if name not in FILES:
        raise ValueError(f"unknown data file {name!r}; expected one of {', '.join(FILES)}")
    path = Path(str(resources.files("disttorch.datasets").joinpath("data", name)))
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: disttorch was installed without its package data "
            f"(reinstall with pip install disttorch, or pip install -e . from a checkout)"
        )
    return path


def read_text(name: str) -> str:
    """The decompressed text of a shipped ``.gz`` file."""
    with gzip.open(data_path(name), "rt", encoding="utf-8") as f:
        return f.read()
