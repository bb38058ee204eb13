"""``torch.distributed.run``, the module behind ``torchrun``: ``python -m
disttorch.distributed.run [torchrun's flags] script.py ARGS`` (and, under the alias,
``python -m disttorch.as_torch -m torch.distributed.run ...``) runs the script's ranks with
``disttorch-launch``, which takes torchrun's flags. Under the alias the ranks get it too.

Libraries that launch from Python (accelerate's ``accelerate launch --multi_gpu``) build
torchrun's arguments with :func:`get_args_parser` and call :func:`run` with them: it starts
``disttorch-launch`` with the same settings as a child process, waits for it, and raises
:class:`~disttorch.distributed.elastic.multiprocessing.errors.ChildFailedError` naming the
failed ranks when the job fails, as PyTorch's does.

The launcher is started as a program of its own (:func:`main` makes this process it; :func:`run`
a child), never imported: the library does not import the launcher.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from .._error_file import LAUNCH_FAILURES_ENV
from .elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

__all__ = ["get_args_parser", "main", "parse_args", "run"]

#: torchrun's options that ``disttorch-launch`` has no counterpart for: :func:`run` refuses a
#: value other than the default (which is what they do here).
_NOT_LAUNCHED = (
    "event_log_handler",
    "duplicate_stdout_filters",
    "duplicate_stderr_filters",
    "local_addr",
    "logs_specs",
    "numa_binding",
    "signals_to_handle",
    "virtual_local_rank",
)


def get_args_parser() -> argparse.ArgumentParser:
    """torchrun's command line: the options (both spellings, PyTorch's defaults and names),
    then the script and its arguments."""
    parser = argparse.ArgumentParser(description="disttorch's torchrun (runs disttorch-launch)")

    def option(name: str, default: object, kind: type = str) -> None:
        flags = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
        parser.add_argument(*flags, default=default, type=kind)

    def switch(*flags: str) -> None:
        parser.add_argument(*flags, action="store_true")

    option("nnodes", "1:1")
    option("nproc-per-node", "1")
    option("rdzv-backend", "static")
    option("rdzv-endpoint", "")
    option("rdzv-id", "none")
    option("rdzv-conf", "")
    switch("--standalone")
    option("max-restarts", 0, int)
    option("monitor-interval", 0.1, float)
    option("start-method", "spawn")
    option("event-log-handler", "null")
    option("role", "default")
    switch("-m", "--module")
    switch("--no-python", "--no_python")
    switch("--run-path", "--run_path")
    option("log-dir", None)
    parser.add_argument("-r", "--redirects", default="0")
    parser.add_argument("-t", "--tee", default="0")
    option("local-ranks-filter", "")
    for stream in ("stdout", "stderr"):
        option(f"duplicate-{stream}-filters", [], lambda text: [part for part in text.split(",") if part])
    option("node-rank", 0, int)
    option("master-addr", "127.0.0.1")
    option("master-port", None, int)
    option("local-addr", None)
    option("logs-specs", None)
    option("numa-binding", None)
    option("signals-to-handle", "SIGTERM,SIGINT,SIGHUP,SIGQUIT")
    option("shutdown-timeout", None, int)
    switch("--virtual-local-rank", "--virtual_local_rank")
    parser.add_argument("training_script", type=str)
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return parser


def parse_args(args: list[str] | None) -> argparse.Namespace:
    """torchrun's arguments parsed (``None``: this process's command line)."""
    return get_args_parser().parse_args(args)


def run(args: argparse.Namespace) -> None:
    """Run the job that ``args`` (a namespace of :func:`get_args_parser`) describes with
    ``disttorch-launch`` in a child process, and wait for it.

    Raises:
        ValueError: ``args`` sets an option ``disttorch-launch`` does not have.
        ChildFailedError: ranks failed (every restart spent); it names each, as PyTorch's.
    """
    argv = _launcher_argv(args)
    with tempfile.TemporaryDirectory(prefix="disttorch-run-") as folder:
        report = os.path.join(folder, "failures.json")
        env = {**os.environ, LAUNCH_FAILURES_ENV: report}
        code = subprocess.call([sys.executable, "-m", "disttorch.launcher", *argv], env=env)
        if code == 0:
            return
        failures, notes = _read_failures(report)
    if not failures:
        raise RuntimeError(
            f"disttorch-launch ended with exit code {code} without a failed rank to name"
            + (f": {'; '.join(notes)}" if notes else " (interrupted, or it could not start the job)")
        )
    raise ChildFailedError(args.training_script, failures)


def _launcher_argv(args: argparse.Namespace) -> list[str]:
    """``disttorch-launch``'s command line for ``args``: the options that differ from
    torchrun's defaults, then the script and its arguments."""
    parser = get_args_parser()
    refused = [f"--{dest.replace('_', '-')}" for dest in _NOT_LAUNCHED if _set(args, parser, dest)]
    if refused:
        raise ValueError(
            f"disttorch-launch has no counterpart for {', '.join(refused)}: leave "
            f"{'it' if len(refused) == 1 else 'them'} at torchrun's default"
        )
    argv: list[str] = []
    for action in parser._actions:
        if not action.option_strings or action.dest in _NOT_LAUNCHED or not _set(args, parser, action.dest):
            continue
        flag = action.option_strings[0]  # (the spelling disttorch-launch takes)
        value = getattr(args, action.dest)
        argv += [flag] if isinstance(action, argparse._StoreTrueAction) else [flag, str(value)]
    return _with_alias([*argv, args.training_script, *(args.training_script_args or [])])


def _with_alias(argv: list[str]) -> list[str]:
    """``argv`` with ``--as-torch`` first when this process runs under the alias."""
    if os.environ.get("DISTTORCH_AS_TORCH") == "1" and "--as-torch" not in argv:
        return ["--as-torch", *argv]
    return argv


def _set(args: argparse.Namespace, parser: argparse.ArgumentParser, dest: str) -> bool:
    """Whether ``args`` gives ``dest`` a value other than torchrun's default (``None``, and
    any false value of a switch, mean the default: namespaces built by libraries hold them)."""
    value, default = getattr(args, dest, None), parser.get_default(dest)
    if isinstance(default, bool):
        return bool(value) != default
    return value is not None and value != default


def _read_failures(path: str) -> tuple[dict[int, ProcessFailure], list[str]]:
    """The failed ranks the launcher left in ``path`` (none if it left nothing), and its notes.

    The launcher lists its root cause first; ``ChildFailedError`` names the earliest failure
    as the root, so the root cause is given the earliest time of them all."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}, []
    entries = data.get("failures", [])
    earliest = min((int(entry["time"]) for entry in entries), default=0)
    failures = {}
    for i, entry in enumerate(entries):
        record = entry.get("record") or {}
        failures[int(entry["rank"])] = ProcessFailure(
            local_rank=int(entry["local_rank"]),
            pid=int(entry["pid"]),
            exitcode=int(entry["returncode"]),
            message=str(record.get("traceback") or record.get("error") or entry.get("stalled") or ""),
            timestamp=earliest if i == 0 else int(entry["time"]),
        )
    return failures, [str(note) for note in data.get("notes", [])]


def main(args: list[str] | None = None) -> None:
    """Become ``disttorch-launch`` with ``args`` (default ``sys.argv[1:]``), as ``torchrun``."""
    argv = _with_alias(list(sys.argv[1:] if args is None else args))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "disttorch.launcher", *argv])


if __name__ == "__main__":
    main()
