"""disttorch-launch: starts, watches and reports on every rank of a disttorch job.

Run ``disttorch-launch --nproc 4 train.py`` (or ``python -m disttorch.launcher ...``).
The source lives in the top-level ``launcher/`` folder and installs as ``disttorch.launcher``
(``disttorch/launcher`` links to it in a checkout). Its own modules import only the standard
library and disttorch's few standard-library modules (``_faults``, ``_error_file``), so the
launcher starts without NumPy: importing ``disttorch`` defines its tensor names only on first
use. It loads the rest of disttorch only for multi-node jobs (the store) and to check a
``--master-addr`` on one node.

Modules:

- ``cli``: the command line (torchrun's flags plus ours) and its validation.
- ``devices``: which CPU cores each local rank gets, and the thread-count variables.
- ``worker_env``: the environment every worker process receives.
- ``output``: prefixing, filtering and logging of each rank's stdout and stderr.
- ``workers``: starting, watching and stopping one node's group of worker processes.
- ``agent``: one attempt after another (restarts), signals, and the failure summary.
- ``rendezvous``: how node agents of a multi-node job meet at the master's store.
- ``failure``: what went wrong with which rank, and the summary box printed for it.
- ``bootstrap``: the tiny program each worker runs first; it runs the user's script.
- ``reaper``: no orphans, no zombies (subreapers, parent-death signals, run directories).
- ``own_children``: the record of the children a worker starts itself (the rest it adopted).
- ``trace_merge``: merges per-rank Chrome trace files into one.

What runs inside the workers lives in the library, below everything else: the per-rank
error file (``disttorch._error_file``, read back here) and fault injection
(``disttorch._faults``, configured here through ``DISTTORCH_FAULT``).
"""
