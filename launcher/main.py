"""Entry point of ``disttorch-launch`` (and ``python -m disttorch.launcher``).

It imports nothing at module level, so that a Ctrl-C from the very start of the launcher
(its imports included) ends it quietly with status 130, as at any later moment.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the job, and return the exit status.

    0: every rank exited 0. 1: a rank failed (the summary says which and why).
    2: bad arguments. 128 + N: the launcher was stopped by signal N (130 for Ctrl-C, at any
    moment: while it starts too, where it says so in one line, without a traceback).
    """
    try:
        from .agent import Agent
        from .cli import parse_args
        from .output import say

        config = parse_args(argv)
        for note in config.notes:
            say(note)
        return Agent(config).run()
    except KeyboardInterrupt:  # SIGINT before the agent took over its signals
        from .output import say

        say("received SIGINT before the job started; exiting")
        return 130  # 128 + SIGINT (2), as after a later Ctrl-C
