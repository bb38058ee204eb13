"""``torch.distributed.run``, the module behind ``torchrun``: ``python -m
disttorch.distributed.run [torchrun's flags] script.py ARGS`` (and, under the alias,
``python -m disttorch.as_torch -m torch.distributed.run ...``) runs the script's ranks with
``disttorch-launch``, which takes torchrun's flags. Under the alias the ranks get it too.

The launcher is started as a program of its own (this process becomes it), never imported:
the library does not import the launcher.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def main(args: list[str] | None = None) -> None:
    """Become ``disttorch-launch`` with ``args`` (default ``sys.argv[1:]``), as ``torchrun``."""
    argv = list(sys.argv[1:] if args is None else args)
    if os.environ.get("DISTTORCH_AS_TORCH") == "1" and "--as-torch" not in argv:
        argv.insert(0, "--as-torch")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "disttorch.launcher", *argv])


if __name__ == "__main__":
    main()
