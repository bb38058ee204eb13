"""``torch.distributed.launch``, torchrun's deprecated predecessor: ``python -m
disttorch.distributed.launch [torchrun's flags] script.py ARGS`` (under the alias also
``python -m disttorch.as_torch -m torch.distributed.launch ...``) warns PyTorch's
``FutureWarning`` and runs the ranks with ``disttorch-launch``, each script given
``--local-rank=<local rank>`` after its own arguments, as PyTorch's passes it, unless
``--use-env`` is given (then only ``LOCAL_RANK`` in the environment, as torchrun).
"""

from __future__ import annotations

import sys
import warnings

from .run import main as _become_launcher

__all__ = ["main"]

_DEPRECATED = (
    "The module torch.distributed.launch is deprecated\n"
    "and will be removed in future. Use torchrun.\n"
    "Note that --use-env is set by default in torchrun.\n"
    "If your script expects `--local-rank` argument to be set, please\n"
    "change it to read from `os.environ['LOCAL_RANK']` instead. See \n"
    "https://pytorch.org/docs/stable/distributed.html#launch-utility for \n"
    "further instructions\n"
)


def main(args: list[str] | None = None) -> None:
    """Become ``disttorch-launch`` with ``args`` (default ``sys.argv[1:]``), passing each
    script ``--local-rank=N`` unless ``--use-env`` is among the launcher's options."""
    warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
    _become_launcher(["--local-rank-arg", *(sys.argv[1:] if args is None else args)])


if __name__ == "__main__":
    main()
