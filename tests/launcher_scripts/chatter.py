"""Test worker: floods stdout and stderr with long lines, to check prefixing and line integrity.

usage: chatter.py LINES
Each rank writes LINES lines "out <rank> <i> xxxx..." to stdout and "err <rank> <i> yyyy..."
to stderr, in small pieces, and ends stdout with a line that has no newline.
"""

import os
import sys

rank = os.environ["RANK"]
lines = int(sys.argv[1])
for i in range(lines):
    text = f"out {rank} {i} " + "x" * 500 + "\n"
    for j in range(0, len(text), 97):  # pieces: a line is written in several calls
        sys.stdout.write(text[j : j + 97])
        sys.stdout.flush()
    sys.stderr.write(f"err {rank} {i} " + "y" * 300 + "\n")
sys.stdout.write(f"last {rank} without newline")
