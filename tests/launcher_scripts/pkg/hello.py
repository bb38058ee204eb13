"""Run with ``disttorch-launch -m pkg.hello ARGS``: prints its rank, argv and __name__."""

import os
import sys

print(f"module rank {os.environ['RANK']} argv {sys.argv[1:]} name {__name__}")
