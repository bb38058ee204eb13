"""The command line of disttorch-launch: torchrun's flags, ours, and their validation.

Every long option is accepted with dashes or underscores (``--nproc-per-node`` or
``--nproc_per_node``). :func:`parse_args` returns a checked :class:`LaunchConfig`; any
argument error prints a message naming the option, the value and what was expected,
and exits with status 2.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import ipaddress
import os
import re
import shutil
import socket
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, NoReturn, Optional

from disttorch._faults import FAULT_ENV, parse_faults

from .devices import plan_cores

SECRET_ENV = "DISTTORCH_JOB_SECRET"
STOPPED_TIMEOUT_ENV = "DISTTORCH_STOPPED_TIMEOUT"
#: Shortest job secret accepted, in bytes (128 bits; disttorch.distributed.auth refuses shorter ones too).
MIN_SECRET_BYTES = 16
#: The port torchrun's ``--rdzv-endpoint HOST`` means when it names no port.
_TORCHRUN_PORT = 29400
#: torchrun's ``--master-port`` default, the store's port on several nodes when none is given.
_TORCHRUN_MASTER_PORT = 29500
#: torchrun's options whose default comes from ``PET_<NAME>`` (as Kubeflow's PyTorchJob sets
#: them), by this parser's dest; the flags among them are on when the variable is a non-zero integer.
_TORCHRUN_ENV = {
    "nproc": "PET_NPROC_PER_NODE",
    "nnodes": "PET_NNODES",
    "node_rank": "PET_NODE_RANK",
    "master_addr": "PET_MASTER_ADDR",
    "master_port": "PET_MASTER_PORT",
    "rdzv_endpoint": "PET_RDZV_ENDPOINT",
    "rdzv_backend": "PET_RDZV_BACKEND",
    "rdzv_conf": "PET_RDZV_CONF",
    "run_id": "PET_RDZV_ID",
    "max_restarts": "PET_MAX_RESTARTS",
    "monitor_interval": "PET_MONITOR_INTERVAL",
    "start_method": "PET_START_METHOD",
    "role": "PET_ROLE",
    "log_dir": "PET_LOG_DIR",
    "redirects": "PET_REDIRECTS",
    "tee": "PET_TEE",
    "local_ranks_filter": "PET_LOCAL_RANKS_FILTER",
    "stop_grace": "PET_SHUTDOWN_TIMEOUT",
    "standalone": "PET_STANDALONE",
    "module": "PET_MODULE",
    "no_python": "PET_NO_PYTHON",
    "run_path": "PET_RUN_PATH",
}
STREAMS = {
    0: frozenset(),
    1: frozenset({"stdout"}),
    2: frozenset({"stderr"}),
    3: frozenset({"stdout", "stderr"}),
}


@dataclass
class LaunchConfig:
    """Everything the agent needs to run one node's part of a job."""

    script: str
    script_args: List[str]
    module: bool = False
    no_python: bool = False
    nproc: int = 1
    nnodes: int = 1
    node_rank: int = 0
    master_addr: Optional[str] = None
    master_port: Optional[int] = None
    run_id: Optional[str] = None
    role: str = "default"
    max_restarts: int = 0
    monitor_interval: float = 0.1
    stop_delay: float = 2.0
    dump_stacks: bool = False
    stop_grace: float = 5.0
    stopped_timeout: float = 30.0
    node_timeout: float = 20.0
    join_timeout: float = 300.0
    log_dir: Optional[str] = None
    redirects: Dict[int, FrozenSet[str]] = field(default_factory=dict)  # local rank -> streams
    tee: Dict[int, FrozenSet[str]] = field(default_factory=dict)
    local_ranks_filter: Optional[FrozenSet[int]] = None
    cores_per_rank: Optional[int] = None
    bind_cores: Optional[bool] = None
    trace_dir: Optional[str] = None
    faults: str = ""
    job_secret: Optional[str] = None
    as_torch: bool = False
    local_rank_arg: bool = False  # torch.distributed.launch's --local-rank=N after each script's args
    notes: List[str] = field(default_factory=list)  # said before the job starts


def _flag(*names: str) -> List[str]:
    """``"--nproc-per-node"`` -> ``["--nproc-per-node", "--nproc_per_node"]`` (both spellings)."""
    spellings: List[str] = []
    for name in names:
        for spelling in (name, "--" + name[2:].replace("-", "_")):
            if spelling not in spellings:
                spellings.append(spelling)
    return spellings


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Shows each option once, with dashes; the underscore spellings work but are not listed."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if not action.option_strings:
            return super()._format_action_invocation(action)
        shown = [s for s in action.option_strings if "_" not in s]
        metavar = f" {self._format_args(action, action.dest.upper())}" if action.nargs != 0 else ""
        return ", ".join(s + metavar for s in shown)


#: torchrun's options that disttorch-launch lacks, with what to do instead.
_TORCHRUN_ONLY = {
    "--local-addr": "set DISTTORCH_HOST_ADDR=ADDR, the address other nodes reach this node's ranks at",
    "--logs-specs": "use --log-dir with --redirects or --tee",
    "--event-log-handler": "the launcher prints its events; use --log-dir for files",
    "--numa-binding": "use --cores-per-rank and --bind-cores",
    "--signals-to-handle": "the launcher stops its ranks on SIGINT, SIGTERM and SIGHUP",
    "--virtual-local-rank": "it is for GPUs; each rank's LOCAL_RANK is its own here",
    "--duplicate-stdout-filters": "use --tee with --log-dir",
    "--duplicate-stderr-filters": "use --tee with --log-dir",
}


#: Options that shape the job: after the script they are the script's, which is seldom meant.
_JOB_OPTIONS = frozenset(
    _flag("--nproc-per-node", "--nproc", "--nnodes", "--node-rank", "--master-addr", "--master-port")
    + _flag("--as-torch", "--standalone", "--max-restarts")
)


class _Parser(argparse.ArgumentParser):
    """Argument errors are one line (what was wrong, what was expected) and a pointer to
    ``--help``, not the whole usage block before the message."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.from_env: List[str] = []  # the options torchrun's PET_* variables gave (_torchrun_env_defaults)
        self.argv: List[str] = []  # the arguments parsed (parse_args sets them)

    def error(self, message: str) -> NoReturn:
        if self.from_env:
            message += f" (from torchrun's variables: {', '.join(self.from_env)})"
        if "required: script" in message:  # argparse's wording names the positional arguments
            message = "no script given: expected disttorch-launch [options] script.py [script args]"
            message += self._swallowed_script()
        elif message.startswith("unrecognized arguments: "):
            message = self._unknown_option(message.split(": ", 1)[1].split()) or message
        self.exit(2, f"{self.prog}: error: {message}\n(see {self.prog} --help)\n")

    def _swallowed_script(self) -> str:
        """Where the last argument is the script but the option before it took it as its value
        (``--nproc train.py``): say so, and how to give the value."""
        option, value = self.argv[-2:] if len(self.argv) >= 2 else ("", "")
        action = self._option_string_actions.get(option)
        if action is None or action.nargs == 0 or not (value.endswith(".py") or os.path.isfile(value)):
            return ""
        return (
            f"; {option} took {value!r} as its value, which looks like the script: give {option} "
            f"a value first (disttorch-launch {option} {action.metavar or 'VALUE'} {value})"
        )

    def _unknown_option(self, args: List[str]) -> Optional[str]:
        """Name the first unknown option: what torchrun's means here, or the closest of ours."""
        typed = next((a.split("=")[0] for a in args if a.startswith("-")), None)
        if typed is None:
            return None
        name = "--" + typed.lstrip("-").replace("_", "-")
        if name in _TORCHRUN_ONLY:
            return (
                f"{typed} is a PyTorch launcher option disttorch-launch does not have: {_TORCHRUN_ONLY[name]}"
            )
        if name == "--local-rank":
            return (
                f"{typed} is a script's option, not a launcher's: each rank gets its own local rank in "
                "LOCAL_RANK (and, under python -m torch.distributed.launch, as --local-rank=N after "
                "the script's arguments); drop it here"
            )
        ours = [
            o for a in self._actions if a.help != argparse.SUPPRESS for o in a.option_strings if "_" not in o
        ]
        close = difflib.get_close_matches(name, ours, n=1, cutoff=0.75)
        return f"unknown option {typed}" + (f"; did you mean {close[0]}?" if close else "")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``disttorch-launch --help`` shows it)."""
    p = _Parser(
        prog="disttorch-launch",
        description="Start, watch and report on the ranks of a disttorch job.\n\n"
        "Accepts torchrun's flags (and its PET_<OPTION> variables: PET_NNODES, PET_NODE_RANK, ...)\n"
        "and gives workers torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,\n"
        "GROUP_RANK, ROLE_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*) plus DISTTORCH_* variables.\n"
        "Every option may also be spelled with underscores (--nproc_per_node). Each output line is\n"
        "prefixed with its rank ([rank1]: ). When a rank fails, the others are stopped and a summary\n"
        "names the first to fail.",
        epilog="examples:\n"
        "  disttorch-launch --nproc 4 train.py --epochs 3\n"
        "  disttorch-launch --nproc auto -m mypkg.train\n"
        "  disttorch-launch --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --master-port 29500 \\\n"
        "      --job-secret-file secret.txt --nproc 4 train.py\n"
        "  disttorch-launch --nproc 2 --inject-fault kill:rank=1:at=step:5 --max-restarts 1 train.py\n\n"
        "exit status: 0 every rank exited 0; 1 a rank failed (the summary names the first);\n"
        "2 bad arguments; 128+N the launcher was stopped by signal N (130 for Ctrl-C).",
        formatter_class=_HelpFormatter,
        allow_abbrev=False,
    )
    workers = p.add_argument_group("workers")
    workers.add_argument(
        *_flag("--nproc-per-node", "--nproc"),
        dest="nproc",
        default="1",
        metavar="N",
        help="ranks on this node: an integer, or 'auto' (or 'cpu') = usable cores // --cores-per-rank "
        "(one rank per core by default) (default 1)",
    )
    workers.add_argument(
        "-m",
        *_flag("--module"),
        dest="module",
        action="store_true",
        help="run the program as a module, like 'python -m' (script is a module name)",
    )
    workers.add_argument(
        *_flag("--no-python"),
        dest="no_python",
        action="store_true",
        help="run the program as an executable instead of a Python script",
    )
    workers.add_argument(
        *_flag("--run-path"),
        dest="run_path",
        action="store_true",
        help="accepted for torchrun compatibility: scripts always run with runpy.run_path",
    )
    workers.add_argument(
        *_flag("--use-env"),
        dest="use_env",
        action="store_true",
        help="accepted for torch.distributed.launch compatibility: LOCAL_RANK is always in the "
        "workers' environment",
    )
    workers.add_argument(
        *_flag("--local-rank-arg"), dest="local_rank_arg", action="store_true", help=argparse.SUPPRESS
    )
    workers.add_argument(
        *_flag("--start-method"),
        dest="start_method",
        choices=("spawn", "fork", "forkserver"),
        default="spawn",
        help="accepted for torchrun compatibility: every rank starts as a new Python process (spawn)",
    )
    workers.add_argument(
        *_flag("--as-torch"),
        dest="as_torch",
        action="store_true",
        help="run an unmodified PyTorch script: 'import torch' loads disttorch in every rank "
        "and every process it starts (sets DISTTORCH_AS_TORCH=1)",
    )
    workers.add_argument(
        *_flag("--role"), default="default", help="role name of the workers (ROLE_NAME; default 'default')"
    )

    nodes = p.add_argument_group("nodes and rendezvous")
    nodes.add_argument(
        *_flag("--nnodes"),
        default="1",
        metavar="N",
        help="number of nodes (default 1); each runs its own disttorch-launch",
    )
    nodes.add_argument(
        *_flag("--node-rank"),
        dest="node_rank",
        type=str,
        default="0",
        metavar="K",
        help="this node's rank, 0..nnodes-1 (default 0); global ranks follow node order",
    )
    nodes.add_argument(
        *_flag("--master-addr"),
        dest="master_addr",
        default=None,
        metavar="ADDR",
        help="address of node 0 (default 127.0.0.1 on a single node, where it must be this machine's); "
        "workers get it as MASTER_ADDR",
    )
    nodes.add_argument(
        *_flag("--master-port"),
        dest="master_port",
        default=None,
        metavar="PORT",
        help="single node: the workers' MASTER_PORT (default: a free port, so jobs never clash); "
        f"several nodes: the port of the agents' store on node 0 (default {_TORCHRUN_MASTER_PORT}, "
        "as torchrun)",
    )
    nodes.add_argument(
        *_flag("--rdzv-endpoint"),
        dest="rdzv_endpoint",
        default=None,
        metavar="HOST[:PORT]",
        help="same as --master-addr HOST --master-port PORT (no PORT: 29400 on several nodes, "
        "as torchrun, else a free one)",
    )
    nodes.add_argument(
        *_flag("--rdzv-backend"),
        dest="rdzv_backend",
        choices=("c10d", "static"),
        default="c10d",
        help="accepted for torchrun compatibility: node agents always meet at node 0's store",
    )
    nodes.add_argument(
        *_flag("--rdzv-conf"),
        dest="rdzv_conf",
        default="",
        metavar="KEY=VALUE,...",
        help="torchrun's rendezvous settings; join_timeout=S is understood (as --join-timeout)",
    )
    nodes.add_argument(
        *_flag("--rdzv-id", "--run-id"),
        dest="run_id",
        default=None,
        metavar="ID",
        help="job id (TORCHELASTIC_RUN_ID, DISTTORCH_RUN_ID; default: random, chosen by node 0)",
    )
    nodes.add_argument(
        *_flag("--standalone"),
        action="store_true",
        help="single-node job with a local rendezvous on a free port (the default here)",
    )
    nodes.add_argument(
        *_flag("--job-secret-file"),
        dest="job_secret_file",
        default=None,
        metavar="PATH",
        help=f"file holding the job secret ranks authenticate with; required with --nnodes > 1 "
        f"unless ${SECRET_ENV} is set (single node: generated)",
    )
    nodes.add_argument(
        *_flag("--join-timeout"),
        dest="join_timeout",
        type=str,
        default="300",
        metavar="S",
        help="seconds node agents wait for each other at the store (default 300)",
    )

    watch = p.add_argument_group("failures and restarts")
    watch.add_argument(
        *_flag("--max-restarts"),
        dest="max_restarts",
        default="0",
        metavar="N",
        help="restart the whole group after a failure up to N times (default 0)",
    )
    watch.add_argument(
        *_flag("--monitor-interval"),
        dest="monitor_interval",
        default="0.1",
        metavar="S",
        help="seconds between checks of the other nodes' state (default 0.1); "
        "local worker exits are seen at once",
    )
    watch.add_argument(
        *_flag("--stop-delay"),
        dest="stop_delay",
        default="2",
        metavar="S",
        help="after the first failure, give the other ranks up to S seconds to end on their own "
        "(their errors then appear in the summary) before stopping them (default 2)",
    )
    watch.add_argument(
        *_flag("--dump-stacks"),
        dest="dump_stacks",
        action="store_true",
        help="after a failure, ranks still running at the end of --stop-delay print their Python "
        "stacks before they are stopped (shows where they were stuck)",
    )
    watch.add_argument(
        *_flag("--stop-grace", "--shutdown-timeout"),
        dest="stop_grace",
        default="5",
        metavar="S",
        help="seconds between SIGTERM and SIGKILL when stopping workers (default 5; "
        "--shutdown-timeout is torchrun's name)",
    )
    watch.add_argument(
        *_flag("--stopped-timeout"),
        dest="stopped_timeout",
        default=os.environ.get(STOPPED_TIMEOUT_ENV) or "30",
        metavar="S",
        help="end a rank that has stayed stopped by a signal (SIGSTOP, or SIGTSTP: Ctrl-Z) for S "
        "seconds, naming it, as a failure of the attempt (--max-restarts restarts it): the ranks "
        "still running would wait for it until their own timeout, or none is left to continue it. "
        "A node whose ranks are all stopped, none ended, is paused on purpose and waits "
        f"(default 30, or ${STOPPED_TIMEOUT_ENV}; 0: wait for ever). A debugger's stop never counts",
    )
    watch.add_argument(
        *_flag("--node-timeout"),
        dest="node_timeout",
        default="20",
        metavar="S",
        help="multi-node: while the workers run, every agent counts up its node's beat in the agents' "
        "store each second; a node whose beat stands still for S seconds (its launcher killed, its host "
        "or the network to it down) fails the attempt on the other nodes, whose ranks would otherwise "
        "wait for its ranks until their timeout (default 20; 0: never)",
    )
    watch.add_argument(
        *_flag("--inject-fault"),
        dest="inject_fault",
        action="append",
        default=[],
        metavar="SPEC",
        help="inject a fault (repeatable), e.g. kill:rank=1:at=collective:5, "
        "delay:rank=2:seconds=3:at=step:2, drop:rank=1:at=collective:3 "
        f"(passed to workers as ${FAULT_ENV}; format in disttorch/_faults.py)",
    )

    out = p.add_argument_group("output")
    out.add_argument(
        *_flag("--log-dir"),
        dest="log_dir",
        default=None,
        metavar="DIR",
        help="also write each rank's output to DIR/<run_id>/attempt_<k>/<rank>/stdout.log|stderr.log",
    )
    out.add_argument(
        "-r",
        *_flag("--redirects"),
        dest="redirects",
        default="0",
        metavar="STD",
        help="send streams to the log files only, not the console: 0 none, 1 stdout, 2 stderr, "
        "3 both; or per local rank, e.g. 0:3,1:1",
    )
    out.add_argument(
        "-t",
        *_flag("--tee"),
        dest="tee",
        default="0",
        metavar="STD",
        help="write streams to log files as well as the console (same format as --redirects); "
        "without --log-dir the files go to a temporary directory that is printed",
    )
    out.add_argument(
        *_flag("--local-ranks-filter"),
        dest="local_ranks_filter",
        default=None,
        metavar="RANKS",
        help="show only these local ranks on the console, e.g. 0 or 0,2 (log files keep all)",
    )
    out.add_argument(
        *_flag("--trace-dir"),
        dest="trace_dir",
        default=None,
        metavar="DIR",
        help="workers write Chrome traces DIR/rank<k>.json (DISTTORCH_TRACE_DIR); "
        "the launcher merges them into DIR/trace.json at the end",
    )

    cpu = p.add_argument_group("cores")
    cpu.add_argument(
        *_flag("--cores-per-rank"),
        dest="cores_per_rank",
        default=None,
        metavar="N",
        help="cores for each rank, also its thread count (disttorch's ops and OMP/OpenBLAS/MKL; "
        "default: usable cores // nproc, at least 1)",
    )
    bind = cpu.add_mutually_exclusive_group()
    bind.add_argument(
        *_flag("--bind-cores"),
        dest="bind_cores",
        action="store_const",
        const=True,
        default=None,
        help="pin each rank to its own cores (default: when there are enough cores)",
    )
    bind.add_argument(
        *_flag("--no-bind-cores"),
        dest="bind_cores",
        action="store_const",
        const=False,
        help="never pin ranks to cores",
    )

    p.add_argument(
        "script", metavar="script", help="the training script (or module with -m, program with --no-python)"
    )
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    return p


def _is_ipv6(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).version == 6
    except ValueError:
        return False  # a host name


def _port_in_use(host: str, port: int) -> bool:
    """Whether another socket holds ``host:port`` (False where ``host`` is not this machine's)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the store binds
            sock.bind((host, port))
    except OSError as exc:
        return exc.errno == errno.EADDRINUSE
    return False


def _program_hint(script: str, script_args: List[str]) -> str:
    """For a "script" that is a program on PATH: the Python interpreter (``disttorch-launch
    python train.py``), which the launcher runs itself, or another program (``--no-python``)."""
    program = None if os.sep in script else shutil.which(script)
    if program is None:
        return ""
    if re.fullmatch(r"python[\d.]*", script):
        rest = " ".join(script_args) or "script.py"
        return (
            f"; {script!r} is the Python interpreter ({program}), which runs every rank's script "
            f"already: drop it (disttorch-launch [options] {rest})"
        )
    return f"; {script!r} is a program on PATH ({program}): add --no-python to run it as each rank"


def _check_own_address(parser: argparse.ArgumentParser, host: str, option: str) -> None:
    """On one node every rank runs here and rank 0 hosts the store here: refuse a ``host`` that
    does not resolve or is not this machine, where ranks would wait for a store that never answers."""
    from disttorch.distributed.base.addresses import check_resolves, is_this_machine
    from disttorch.distributed.base.errors import DistNetworkError

    try:
        check_resolves(host, option)
    except DistNetworkError as exc:
        parser.error(f"{exc} (on one node, leave {option} out: the ranks meet at 127.0.0.1)")
    if not is_this_machine(host):
        parser.error(
            f"{option} {host}: not an address of this machine, yet with --nnodes 1 every rank runs "
            "here and rank 0 hosts the store here, so the other ranks could never reach it; leave "
            f"{option} out (the ranks meet at 127.0.0.1) or give one of this machine's addresses"
        )


def _number(
    parser: argparse.ArgumentParser, option: str, text: str, kind: type, minimum: float, extra: str = ""
) -> float:
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or value != value or value < minimum:  # (value != value: NaN)
        expected = "an integer" if kind is int else "a number"
        parser.error(f"{option}: expected {expected} >= {minimum:g}{extra}, got {text!r}")
    return value


def _streams(
    parser: argparse.ArgumentParser, option: str, text: str, nproc: int
) -> Dict[int, FrozenSet[str]]:
    """``"3"`` -> every local rank both streams; ``"0:1,1:2"`` -> per local rank."""
    hint = "expected 0 (none), 1 (stdout), 2 (stderr), 3 (both), or LOCAL_RANK:STD pairs like 0:3,1:1"
    try:
        if ":" not in text:
            return {r: STREAMS[int(text)] for r in range(nproc)}
        pairs = (item.split(":") for item in text.split(","))
        out = {int(rank): STREAMS[int(std)] for rank, std in pairs}
    except (ValueError, KeyError):
        parser.error(f"{option}: {hint}, got {text!r}")
    bad = sorted(r for r in out if not 0 <= r < nproc)
    if bad:
        parser.error(
            f"{option}: local rank {bad[0]} is out of range 0..{nproc - 1} (--nproc-per-node {nproc})"
        )
    return out


def _read_secret(parser: argparse.ArgumentParser, path: Optional[str], nnodes: int) -> Optional[str]:
    if path is not None:
        try:
            with open(path, encoding="utf-8") as f:
                secret = f.read().strip()
        except OSError as exc:
            parser.error(f"--job-secret-file: cannot read {path!r}: {exc.strerror}")
        if not secret:
            parser.error(
                f"--job-secret-file: {path!r} is empty; expected the job secret (e.g. 64 hex digits)"
            )
    else:
        secret = os.environ.get(SECRET_ENV) or None
    if secret is not None:
        source = f"--job-secret-file {path!r}" if path is not None else f"${SECRET_ENV}"
        try:
            raw = bytes.fromhex(secret)
        except ValueError:
            parser.error(
                f"{source}: the job secret must be a hex string (e.g. from secrets.token_hex(32)), "
                f"got {len(secret)} characters that are not hex"
            )
        if len(raw) < MIN_SECRET_BYTES:
            parser.error(
                f"{source}: the job secret is {len(raw) * 8} bits ({len(secret)} hex digits); at least "
                f"{MIN_SECRET_BYTES * 8} bits ({MIN_SECRET_BYTES * 2} hex digits) are required, e.g. "
                "python -c 'import secrets; print(secrets.token_hex(32))'"
            )
    elif nnodes > 1:
        parser.error(
            f"--nnodes {nnodes} needs the same job secret on every node: pass --job-secret-file PATH "
            f"or set ${SECRET_ENV} (make one with: python -c 'import secrets; "
            f"print(secrets.token_hex(32))' > secret.txt)"
        )
    return secret


def _torchrun_env_defaults(parser: "_Parser", argv: List[str]) -> None:
    """Take torchrun's ``PET_*`` variables as the defaults of their options, as torchrun does;
    ``parser.from_env`` lists those that apply (``"PET_NNODES=2 (--nnodes)"``): not given in ``argv``."""
    given = {arg.split("=")[0] for arg in argv}
    for action in parser._actions:
        name = _TORCHRUN_ENV.get(action.dest)
        value = os.environ.get(name or "")
        if not name or value is None or given.intersection(action.option_strings):
            continue
        option = action.option_strings[-1] if action.dest == "module" else action.option_strings[0]
        if action.nargs == 0:  # a flag: torchrun's check_env reads an integer
            try:
                value = bool(int(value))
            except ValueError:
                parser.error(f"${name}: expected an integer (0 off, 1 on) for {option}, got {value!r}")
        elif action.choices is not None and value not in action.choices:
            choices = ", ".join(map(repr, action.choices))
            parser.error(f"${name}: expected one of {choices} for {option}, got {value!r}")
        action.default = value
        parser.from_env.append(f"{name}={os.environ[name]} ({option})")


def parse_args(argv: Optional[List[str]] = None) -> LaunchConfig:
    """Parse and check the command line; exits with status 2 and a clear message on any error."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    _torchrun_env_defaults(parser, argv)
    parser.argv = list(argv)
    a = parser.parse_args(argv)
    usable = len(os.sched_getaffinity(0))
    cores = a.cores_per_rank
    if cores is not None:
        cores = int(_number(parser, "--cores-per-rank", cores, int, 1))
    if a.nproc in ("auto", "cpu"):  # one rank per core, or per --cores-per-rank cores
        nproc = max(1, usable // (cores or 1))
    elif a.nproc == "gpu":
        parser.error("--nproc-per-node gpu: no GPU support here; use an integer or 'auto' (= usable cores)")
    else:
        nproc = int(_number(parser, "--nproc-per-node", a.nproc, int, 1, " or 'auto'"))
    low, _, high = a.nnodes.partition(":")
    if ":" in a.nnodes and low.strip() != high.strip():  # (N:N, torchrun's default 1:1, is N nodes)
        parser.error(
            f"--nnodes {a.nnodes}: elastic ranges MIN:MAX are not supported; give the number of nodes"
        )
    nnodes = int(_number(parser, "--nnodes", low, int, 1))
    node_rank = int(_number(parser, "--node-rank", a.node_rank, int, 0))
    if node_rank >= nnodes:
        parser.error(
            f"--node-rank {node_rank} is out of range: expected 0..{nnodes - 1} for --nnodes {nnodes}"
        )
    if a.standalone and nnodes > 1:
        parser.error(f"--standalone runs a single node, but --nnodes is {nnodes}")

    master_addr, master_port = a.master_addr, a.master_port
    port_option = "--master-port"
    if a.rdzv_endpoint is not None:
        endpoint = a.rdzv_endpoint.strip()
        bracketed = re.fullmatch(r"\[([^\]]*)\](?::(.*))?", endpoint)  # [IPv6] or [IPv6]:PORT
        if bracketed:
            host, sep, port = bracketed[1], bracketed[2] is not None, bracketed[2]
        else:  # (an IPv6 address alone has colons of its own)
            host, sep, port = (endpoint, "", "") if _is_ipv6(endpoint) else endpoint.rpartition(":")
        if not sep:  # a host alone: torchrun's default port on several nodes, else a free one
            host, port = (host or endpoint), (str(_TORCHRUN_PORT) if nnodes > 1 else None)
        if not host or (":" in host and not _is_ipv6(host)):
            parser.error(f"--rdzv-endpoint: expected HOST[:PORT], got {a.rdzv_endpoint!r}")
        master_addr, master_port = master_addr or host, master_port or port
        port_option = "--master-port" if a.master_port else "--rdzv-endpoint's port"
    if master_addr is not None and _is_ipv6(master_addr):
        parser.error(
            f"{master_addr!r} is an IPv6 address: the store listens on IPv4 only; give node 0's "
            "IPv4 address or a host name that has one (127.0.0.1 on one machine)"
        )
    if master_port is not None:
        master_port = int(_number(parser, port_option, master_port, int, 0))
        if master_port > 65535:
            parser.error(f"{port_option}: expected a port 0..65535, got {master_port}")
    if nnodes > 1 and master_addr is None:
        parser.error(
            f"--nnodes {nnodes} needs --master-addr: the address of node 0, the same on every node "
            f"(node 0's agents' store listens there on --master-port, default {_TORCHRUN_MASTER_PORT})"
        )
    if nnodes > 1 and master_port is None:
        master_port = _TORCHRUN_MASTER_PORT
    elif nnodes > 1 and not master_port:
        parser.error(
            f"{port_option} 0: several nodes need a fixed port for node 0's agents' store, the same "
            f"on every node (e.g. {_TORCHRUN_MASTER_PORT}, torchrun's default)"
        )
    if nnodes == 1 and master_addr is not None:
        _check_own_address(
            parser, master_addr, "--rdzv-endpoint" if master_addr != a.master_addr else "--master-addr"
        )
    if master_port and node_rank == 0 and _port_in_use(master_addr or "127.0.0.1", master_port):
        parser.error(
            f"{port_option} {master_port}: another program or job already uses "
            f"{master_addr or '127.0.0.1'}:{master_port}; "
            + (
                "choose another port, the same on every node (or is another node of this job "
                "on this machine node 0 too? each node needs its own --node-rank)"
                if nnodes > 1
                else "choose another, or leave it out (a free port is picked)"
            )
        )

    if a.module and a.no_python:
        parser.error("-m/--module and --no-python cannot be combined: a module needs Python")
    local_rank_arg = a.local_rank_arg and not a.use_env
    if local_rank_arg and a.no_python:
        parser.error("When using the '--no-python' flag, you must also set the '--use-env' flag.")
    if a.dump_stacks and a.no_python:
        parser.error("--dump-stacks needs Python workers (faulthandler); it cannot be used with --no-python")
    if a.no_python:
        if shutil.which(a.script) is None:
            parser.error(f"--no-python: program {a.script!r} not found on PATH or not executable")
    elif a.module and a.script.endswith(".py") and os.path.isfile(a.script):
        parser.error(
            f"-m takes a module name, got the file name {a.script!r}: drop -m to run the file, "
            f"or give -m {a.script[:-3].replace(os.sep, '.')}"
        )
    elif not a.module and os.path.isdir(a.script):
        if not os.path.isfile(os.path.join(a.script, "__main__.py")):
            parser.error(f"script {a.script!r} is a directory without a __main__.py; expected a Python file")
    elif not a.module and not os.path.isfile(a.script):
        parser.error(
            f"script {a.script!r} not found (looked in {os.getcwd()}); "
            f"expected a Python file, or -m module.name for a module" + _program_hint(a.script, a.script_args)
        )

    join_timeout = a.join_timeout
    for item in filter(None, a.rdzv_conf.split(",")):
        key, eq, value = item.partition("=")
        if key.strip() != "join_timeout" or not eq:
            parser.error(f"--rdzv-conf: only join_timeout=SECONDS is understood, got {item!r}")
        join_timeout = value.strip()

    try:
        plan_cores(nproc, cores, a.bind_cores)
    except ValueError as exc:
        parser.error(str(exc))
    trace_dir = a.trace_dir or os.environ.get("DISTTORCH_TRACE_DIR") or None
    ranks_filter = None
    if a.local_ranks_filter is not None:
        try:
            ranks_filter = frozenset(int(r) for r in a.local_ranks_filter.split(","))
        except ValueError:
            parser.error(
                f"--local-ranks-filter: expected local ranks like 0 or 0,2, got {a.local_ranks_filter!r}"
            )
        bad = sorted(r for r in ranks_filter if not 0 <= r < nproc)
        if bad:
            parser.error(f"--local-ranks-filter: local rank {bad[0]} is out of range 0..{nproc - 1}")

    faults = ";".join([os.environ.get(FAULT_ENV, ""), *a.inject_fault]).strip(";")
    try:
        parsed = parse_faults(faults)
    except ValueError as exc:
        parser.error(f"--inject-fault: {exc}")
    if nnodes == 1:
        for fault in parsed:
            if fault.rank is not None and fault.rank >= nproc:
                parser.error(
                    f"--inject-fault {fault.spec!r}: rank {fault.rank} does not exist "
                    f"(world size {nproc}: ranks 0..{nproc - 1})"
                )

    misplaced = [arg for arg in a.script_args if arg.split("=")[0] in _JOB_OPTIONS]
    notes = []
    if parser.from_env:
        notes.append(f"note: from torchrun's variables: {', '.join(parser.from_env)}")
    if misplaced:
        notes.append(
            f"note: {' '.join(misplaced)} after the script is passed to the script, not to the "
            f"launcher; launcher options go before it (disttorch-launch --nproc 2 {a.script} ...)"
        )
    return LaunchConfig(
        notes=notes,
        script=a.script,
        script_args=a.script_args,
        module=a.module,
        no_python=a.no_python,
        nproc=nproc,
        nnodes=nnodes,
        node_rank=node_rank,
        master_addr=master_addr,
        master_port=master_port,
        run_id=a.run_id,
        role=a.role,
        max_restarts=int(_number(parser, "--max-restarts", a.max_restarts, int, 0)),
        monitor_interval=_number(parser, "--monitor-interval", a.monitor_interval, float, 0.001),
        stop_delay=_number(parser, "--stop-delay", a.stop_delay, float, 0),
        dump_stacks=a.dump_stacks,
        stop_grace=_number(parser, "--stop-grace/--shutdown-timeout", a.stop_grace, float, 0),
        stopped_timeout=_number(parser, "--stopped-timeout", a.stopped_timeout, float, 0),
        node_timeout=_number(parser, "--node-timeout", a.node_timeout, float, 0),
        join_timeout=_number(parser, "--join-timeout", join_timeout, float, 0.001),
        log_dir=a.log_dir,
        redirects=_streams(parser, "--redirects", a.redirects, nproc),
        tee=_streams(parser, "--tee", a.tee, nproc),
        local_ranks_filter=ranks_filter,
        cores_per_rank=cores,
        bind_cores=a.bind_cores,
        trace_dir=os.path.abspath(trace_dir) if trace_dir else None,
        faults=faults,
        job_secret=_read_secret(parser, a.job_secret_file, nnodes),
        as_torch=a.as_torch,
        local_rank_arg=local_rank_arg,
    )
