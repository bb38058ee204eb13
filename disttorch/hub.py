"""``torch.hub``: models from a local ``hubconf.py`` and checkpoints already in the hub cache.

disttorch never downloads: ``source="local"`` loads work in full (``hubconf.py`` is imported
and its entrypoint called), and ``load_state_dict_from_url`` loads the file when it is already
in ``<hub dir>/checkpoints``. Anything that needs the network (GitHub repositories, a
checkpoint not yet cached) raises ``RuntimeError`` saying what to put where.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

_hub_dir: list[str | None] = [None]

# The hash prefix in a checkpoint's file name (``resnet18-f37072fd.pth`` -> ``f37072fd``),
# which PyTorch's downloader checks with ``check_hash``; libraries parse cached names with it.
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")


def _get_torch_home() -> str:
    """``$TORCH_HOME``, else ``$XDG_CACHE_HOME/torch`` (``~/.cache/torch``): where torch keeps
    downloads (libraries put their own caches under it)."""
    torch_home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "torch"
    )
    return os.path.expanduser(torch_home)


def get_dir() -> str:
    """The hub cache directory: ``set_dir``'s value, else ``_get_torch_home()/hub``."""
    if _hub_dir[0] is not None:
        return _hub_dir[0]
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use ``d`` as the hub cache directory."""
    _hub_dir[0] = os.path.expanduser(os.fspath(d))


def _no_network(what: str) -> RuntimeError:
    return RuntimeError(
        f"torch.hub: {what} needs the network, and disttorch does not download. Clone the "
        "repository and use source='local', or put the checkpoint file in "
        f"{os.path.join(get_dir(), 'checkpoints')}"
    )


def _hubconf(repo_or_dir: str, source: str) -> Any:
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        raise _no_network(f"source='github' ({repo_or_dir})")
    path = os.path.join(repo_or_dir, "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"torch.hub: no hubconf.py in {repo_or_dir!r}")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_or_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_or_dir)
    return module


def _entry(module: Any, model: str) -> Callable:
    fn = getattr(module, model, None)
    if not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def list(
    github: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo: Any = None,
    verbose: bool = True,
    *,
    source: str = "github",
) -> list[str]:
    """The entrypoints of a hub repository (``source="local"``: a directory with ``hubconf.py``)."""
    module = _hubconf(github, source)
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(
    github: str,
    model: str,
    force_reload: bool = False,
    skip_validation: bool = False,
    trust_repo: Any = None,
    *,
    source: str = "github",
) -> str | None:
    """The docstring of entrypoint ``model``."""
    return _entry(_hubconf(github, source), model).__doc__


def load(
    repo_or_dir: str,
    model: str,
    *args: Any,
    source: str = "github",
    trust_repo: Any = None,
    force_reload: bool = False,
    verbose: bool = True,
    skip_validation: bool = False,
    **kwargs: Any,
) -> Any:
    """Call entrypoint ``model`` of ``repo_or_dir``'s ``hubconf.py`` with ``*args, **kwargs``.
    Only ``source="local"`` works here (no downloads)."""
    return _entry(_hubconf(repo_or_dir, source), model)(*args, **kwargs)


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None, progress: bool = True) -> None:
    """Raises ``RuntimeError``: disttorch does not download."""
    raise _no_network(f"downloading {url}")


def load_state_dict_from_url(
    url: str,
    model_dir: str | None = None,
    map_location: Any = None,
    progress: bool = True,
    check_hash: bool = False,
    file_name: str | None = None,
    weights_only: bool = True,
) -> dict[str, Any]:
    """Load the checkpoint of ``url`` from the hub cache (``<hub dir>/checkpoints/<file name>``
    or ``model_dir``); raises ``RuntimeError`` if it is not there (no downloads)."""
    from .serialization import load as _load

    directory = model_dir or os.path.join(get_dir(), "checkpoints")
    path = os.path.join(directory, file_name or os.path.basename(urlparse(url).path))
    if not os.path.isfile(path):
        raise _no_network(f"fetching {url} (not cached at {path})")
    return _load(path, map_location=map_location, weights_only=weights_only)
