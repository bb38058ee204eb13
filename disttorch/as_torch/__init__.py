"""Run an unmodified PyTorch program on disttorch: the opt-in ``import torch`` alias.

Three ways to switch it on, all equivalent for the program:

- ``python -m disttorch.as_torch prog.py ARGS`` (one process; ``-m pkg.mod`` also works),
- ``disttorch-launch --as-torch --nproc N prog.py ARGS`` (every rank),
- ``DISTTORCH_AS_TORCH=1`` in the environment of any Python process, when disttorch is
  installed (``pip install .`` or ``pip install -e .``): the package's ``.pth`` hook
  installs the alias at start-up.

With the alias, ``import torch`` / ``import torch.nn as nn`` / ``from torch.utils.data
import DataLoader`` give disttorch's modules themselves (``sys.modules["torch"] is
disttorch``), in this process and in every Python process it starts: ``multiprocessing``
children (fork inherits it; spawn and forkserver children get it from
``DISTTORCH_AS_TORCH=1`` plus the ``sitecustomize`` directory put first on ``PYTHONPATH``)
and DataLoader workers. A ``torch.x`` with no ``disttorch.x`` raises
``ModuleNotFoundError``. Nothing is aliased without the flag, so a real PyTorch installed
alongside is never shadowed.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

from . import _finder
from ._finder import ENV, installed, requested

__all__ = ["ENV", "enable_for_children", "install", "installed", "requested", "site_dir"]

_SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_site")


def site_dir() -> str:
    """The directory whose ``sitecustomize.py`` installs the alias in a new interpreter
    (when ``DISTTORCH_AS_TORCH`` is set)."""
    return _SITE_DIR


def install() -> None:
    """Install the alias in this process: ``import torch[.x]`` gives ``disttorch[.x]``.

    Raises ImportError if a real PyTorch is already imported here.
    """
    _finder.install()


def enable_for_children(environ: MutableMapping[str, str] | None = None) -> MutableMapping[str, str]:
    """Set ``DISTTORCH_AS_TORCH=1`` and put :func:`site_dir` first on ``PYTHONPATH`` in
    ``environ`` (``os.environ`` when None), so every Python process started with it
    installs the alias too. Returns ``environ``."""
    env = os.environ if environ is None else environ
    env[ENV] = "1"
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != _SITE_DIR]
    env["PYTHONPATH"] = os.pathsep.join([_SITE_DIR, *paths])
    return env
