"""disttorch-launch: starts, watches and reports on every rank of a disttorch job.

Run ``disttorch-launch --nproc 4 train.py`` (or ``python -m launcher ...``). The
launcher imports only the standard library, so it starts in milliseconds.

Modules:

- ``cli``: the command line (torchrun's flags plus ours) and its validation.
- ``devices``: which CPU cores each local rank gets, and the thread-count variables.
- ``worker_env``: the environment every worker process receives.
- ``output``: prefixing, filtering and logging of each rank's stdout and stderr.
- ``workers``: starting, watching and stopping one node's group of worker processes.
- ``agent``: one attempt after another (restarts), signals, and the failure summary.
- ``rendezvous``: how node agents of a multi-node job meet at the master's store.
- ``failure``: what went wrong with which rank, and the summary box printed for it.
- ``error_file``: the per-rank JSON error file written by workers, read by the launcher.
- ``bootstrap``: the tiny program each worker runs first; it runs the user's script.
- ``faults``: fault injection (kill, delay, drop) at steps or collectives.
- ``trace_merge``: merges per-rank Chrome trace files into one.
"""
