"""Entry point of ``disttorch-launch`` (and ``python -m disttorch.launcher``)."""

from __future__ import annotations

from typing import List, Optional

from .agent import Agent
from .cli import parse_args
from .output import say


def main(argv: Optional[List[str]] = None) -> int:
    """Parse the command line, run the job, and return the exit status.

    0: every rank exited 0. 1: a rank failed (the summary says which and why).
    2: bad arguments. 128 + N: the launcher was stopped by signal N (130 for Ctrl-C).
    """
    config = parse_args(argv)
    for note in config.notes:
        say(note)
    return Agent(config).run()
