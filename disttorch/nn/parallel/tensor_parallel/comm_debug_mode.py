"""``CommDebugMode`` (published as ``torch.distributed.tensor.debug``): count the collectives a block issues, in total, by kind and by module.

Inside ``with CommDebugMode() as comm_mode:`` every collective this thread issues is counted
under PyTorch's operator name (:mod:`disttorch.distributed.comm_record`): the
``torch.distributed`` calls as ``c10d.allreduce_``, ``c10d.broadcast_``, ...; functional
collectives and DTensor redistributions as ``c10d_functional.all_reduce``,
``c10d_functional.all_gather_into_tensor``, ... Counts are keyed by the operator packets of
``torch.ops`` (``torch.ops.c10d_functional.all_reduce``), as in PyTorch.

Each count is also charged to the module running at the time and to every module it runs
inside, in the forward or the backward pass (a module's backward starts when the gradient of
its output arrives), as PyTorch's module tracker charges them; the modules are named by their
path from the outermost one (``MLPModule.net1``). The tracing table, its log file and the
JSON dump print them as PyTorch's do, with each module's type and its DTensor parameters'
placements from noise level 1 on, and the operators each module ran, forward and backward:
from level 1 those taking DTensors, with their arguments' global shapes and placements,
from level 2 every one. disttorch's ops are not ATen operators; each is listed as the ATen
operators PyTorch runs for it (``_aten_ops.py``: exact for linear layers and the common
activations, named after the op beyond them), without PyTorch's views, transposes and
detaches (its "trivial" operators, level 3).

As in PyTorch, the tracker registers a forward hook on a module each time the module runs
inside the block, so a second forward of the same modules in one block fails (``IndexError``).
It lives here, where ``nn`` (the module hooks) and ``distributed`` meet.
"""

from __future__ import annotations

import copy
import json
import re
import weakref
from collections import defaultdict
from typing import Any

from ...._public_name import package_name
from ....autograd import function as _function
from ....autograd.engine import backward_in_progress
from ....distributed.comm_record import start_listening, stop_listening
from ....distributed.tensor import DTensor
from ...modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_pre_hook,
)
from ._aten_ops import ATenOp, backward_ops, forward_ops

__all__ = ["CommDebugMode"]

_ANSI_ESCAPE = re.compile(r"\x1B\[[0-?]*[ -/]*[@-~]")


def _op_packet(name: str) -> Any:
    """``torch.ops.<namespace>.<op>`` for ``"<namespace>.<op>"``."""
    from .... import ops

    namespace, op = name.split(".")
    return getattr(getattr(ops, namespace), op)


def _module_type(mod: Any) -> str:
    """``str(type(mod))`` without its angle brackets, the package named as the program imports it."""
    text = str(type(mod)).replace("<", "").replace(">", "")
    return text.replace("'disttorch.", f"'{package_name()}.")


class _ModuleTracker:
    """Which module runs (``name``), which run around it (``parents``), whether in backward
    (``is_bw``), and what CommDebugMode reports about each module: its type and depth
    (``module_helper_dict``), parameters, placements, parents and children."""

    def __init__(self) -> None:
        self.parents: set[str] = {"Global"}
        self._active: dict[str, int] = {}
        self._known: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._named_children: weakref.WeakSet = weakref.WeakSet()
        self.module_helper_dict: dict[str, dict[str, Any]] = {}
        self.module_parameters_dict: dict[str, dict[str, Any]] = {}
        self.module_parents_dict: dict[str, set[str]] = {}
        self.parent_dict: dict[str, list[str]] = {}
        self.parent_list: list[str] = []
        self.sharding_dict: dict[str, Any] = {}
        self.register_forward_hook_handles: dict[str, Any] = {}
        self.activation_checkpointing = False
        self.name = ""
        self._handles: list = []

    @property
    def is_bw(self) -> bool:
        """Whether a backward pass is running."""
        return backward_in_progress()

    def _get_mod_name(self, mod: Any) -> str:
        name = self._known.get(mod)
        if name is None:
            name = self._known[mod] = type(mod).__name__
        if mod not in self._named_children:
            self._named_children.add(mod)
            for child_name, child in mod.named_children():
                self._known[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
        return name

    def _enter_module(self, name: str) -> None:
        self._active[name] = self._active.get(name, 0) + 1
        self.parents.add(name)

    def _leave_module(self, name: str) -> None:
        if name in self.parents:
            self._active[name] -= 1
            if self._active[name] == 0:
                self.parents.discard(name)

    def _fw_pre_hook(self, mod: Any, args: Any) -> None:
        self.activation_checkpointing = self.is_bw
        self.name = self._get_mod_name(mod)
        self._enter_module(self.name)
        if self.activation_checkpointing:
            return
        helper = self.module_helper_dict.setdefault(self.name, {})
        helper["module_type"] = _module_type(mod)
        helper["depth"] = len(self.parents) - 1
        for param_name, param in mod.named_parameters(recurse=False):
            self.module_parameters_dict.setdefault(self.name, {})[param_name] = param.data
            if isinstance(param.data, DTensor):
                self.sharding_dict[f"{self.name}.{param_name}"] = param.data.placements
                helper.setdefault("parameters", {})[param_name] = str(param.data.placements)
        if self.name not in self.module_parents_dict:
            self.module_parents_dict[self.name] = copy.deepcopy(self.parents)
        self.parent_dict.setdefault(self.parent_list[-1], []).append(self.name)
        self.parent_list.append(self.name)
        self.register_forward_hook_handles[self.name] = mod.register_forward_hook(self._fw_set_module_hook)

    def _fw_set_module_hook(self, mod: Any, args: Any, output: Any) -> None:
        """The module's forward is over: the module around it runs again."""
        self.activation_checkpointing = self.is_bw
        if not self.activation_checkpointing:
            self.parent_list.pop()
            self.name = self.parent_list[-1]

    def _fw_post_hook(self, mod: Any, args: Any, output: Any) -> None:
        self._leave_module(self._get_mod_name(mod))

    def _bw_hook(self, mod: Any, grad_output: Any) -> None:
        self.activation_checkpointing = False
        self.name = self._get_mod_name(mod)

    def __enter__(self) -> None:
        self.activation_checkpointing = False
        self.module_parameters_dict.clear()
        self.sharding_dict.clear()
        self.parent_dict.clear()
        self.parent_list = ["Global"]
        self.module_helper_dict.clear()
        self.module_helper_dict["Global"] = {"depth": 0}
        self.module_parents_dict.clear()
        self.module_parents_dict["Global"] = set()
        self.register_forward_hook_handles.clear()
        self._handles = [
            register_module_forward_pre_hook(self._fw_pre_hook),
            register_module_forward_hook(self._fw_post_hook),
            register_module_full_backward_pre_hook(self._bw_hook),
        ]
        self.name = "Global"

    def __exit__(self, *args: Any) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        for handle in self.register_forward_hook_handles.values():
            handle.remove()


class CommDebugMode:
    """A context manager counting the collectives issued inside it, by operator and by module.

    Example::

        comm_mode = CommDebugMode()
        with comm_mode:
            model(inp).sum().backward()
        print(comm_mode.get_comm_counts())
        print(comm_mode.generate_comm_debug_tracing_table(noise_level=0))
    """

    def __init__(self) -> None:
        self.comm_counts: dict[Any, int] = defaultdict(int)
        self.comm_module_counts: dict[str, dict[str, dict[Any, int]]] = {}
        self.comm_module_operation_counts: dict[str, dict[str, list]] = {}
        self.advanced_module_tracker = _ModuleTracker()
        self._listing = False

    # ------------------------------------------------------------------ operations
    def _list_ops(self, ops: list[ATenOp]) -> None:
        """Add ``ops`` to the running module's operations (a DTensor operator, as in
        PyTorch, then the same operator on the local pieces)."""
        if not self._listing:
            return
        tracker = self.advanced_module_tracker
        listed = self.comm_module_operation_counts.setdefault(tracker.name, {"operations_list": []})
        for name, specs, mesh in ops:
            entries = [(specs, str(mesh) if specs else "")] + ([([], "")] if specs else [])
            for arg_specs, mesh_name in entries:
                listed["operations_list"].append(
                    {
                        "name": name,
                        "input_shape": [shape for shape, _ in arg_specs],
                        "input_sharding": [placements for _, placements in arg_specs],
                        "device_mesh": mesh_name,
                        "is_bw": tracker.is_bw,
                        "is_activation_checkpointing": tracker.activation_checkpointing,
                    }
                )

    def _observe(self, cls: type, args: tuple, out: Any) -> None:
        """An op ran (forward, outermost): listed now, its backward when that runs (the ops
        a backward runs are not PyTorch's: they are listed from the forward op's)."""
        if self.advanced_module_tracker.is_bw:
            return
        ops = forward_ops(cls, args, out)
        if ops is None:
            return
        self._list_ops(ops)
        first = out[0] if isinstance(out, tuple) else out
        node = getattr(first, "grad_fn", None)
        if node is not None:
            later = backward_ops(cls, args, first)
            node.register_prehook(lambda grads: self._list_ops(later))

    # ------------------------------------------------------------------ counting
    def _count(self, name: str) -> None:
        packet = _op_packet(name)
        self.comm_counts[packet] += 1
        tracker = self.advanced_module_tracker
        key = "backward" if tracker.is_bw else "forward"
        parents = tracker.module_parents_dict.get(tracker.name, ())
        for module in [tracker.name, *(p for p in parents if p != tracker.name)]:
            counts = self.comm_module_counts.setdefault(
                module, {"forward": defaultdict(int), "backward": defaultdict(int)}
            )
            counts[key][packet] += 1

    def __enter__(self) -> CommDebugMode:
        self.comm_counts.clear()
        self.comm_module_counts.clear()
        self.comm_module_counts["Global"] = {"forward": defaultdict(int), "backward": defaultdict(int)}
        self.comm_module_operation_counts.clear()
        start_listening(self._count)
        self.advanced_module_tracker.__enter__()
        self._listing = True
        _function._observers.append(self._observe)
        return self

    def __exit__(self, *args: Any) -> None:
        _function._observers.remove(self._observe)
        self._listing = False
        self.advanced_module_tracker.__exit__()
        stop_listening(self._count)

    # ------------------------------------------------------------------ queries
    def get_total_counts(self) -> int:
        """How many collectives ran."""
        return sum(self.comm_counts.values())

    def get_comm_counts(self) -> dict[Any, int]:
        """How many of each collective ran, keyed by operator packet."""
        return self.comm_counts

    def get_parameter_info(self) -> dict[str, dict[str, Any]]:
        """Each module's own parameters (``param.data``) by module name and parameter name."""
        return self.advanced_module_tracker.module_parameters_dict

    def get_sharding_info(self) -> dict[str, Any]:
        """The placements of each DTensor parameter, by ``module.parameter`` name."""
        return self.advanced_module_tracker.sharding_dict

    def __repr__(self) -> str:
        return f"CommDebugMode(get_total_counts()={self.get_total_counts()})"

    # ------------------------------------------------------------------ reports
    def _collectives(self, fqn: str) -> tuple[dict, dict]:
        counts = self.comm_module_counts.get(fqn)
        return (counts["forward"], counts["backward"]) if counts is not None else ({}, {})

    def _operations(self, fqn: str, noise_level: int) -> tuple[list, list, list]:
        """The module's (forward, backward, activation checkpointing) operations: none at
        noise level 0, else every one listed (what decides whether a pass is shown)."""
        if noise_level < 1 or fqn not in self.comm_module_operation_counts:
            return [], [], []
        ops = self.comm_module_operation_counts[fqn]["operations_list"]
        return (
            [op for op in ops if not op["is_bw"]],
            [op for op in ops if op["is_bw"] and not op["is_activation_checkpointing"]],
            [op for op in ops if op["is_activation_checkpointing"]],
        )

    @staticmethod
    def _shown(ops: list, noise_level: int) -> list:
        """The operations shown at ``noise_level``: from 1 those on DTensors, from 2 all but
        PyTorch's trivial ones (which disttorch does not list), from 3 all."""
        return ops if noise_level > 1 else [op for op in ops if op["input_shape"]]

    def generate_comm_debug_tracing_table(self, noise_level: int = 3) -> str:
        """The module tree with the collectives of each module's forward and backward pass
        (coloured for a terminal); from ``noise_level`` 1 on, each module's type, the
        placements of its DTensor parameters and its operations."""
        include_module_data = noise_level > 0
        helpers = self.advanced_module_tracker.module_helper_dict
        table = ""
        for fqn, helper in helpers.items():
            depth = helper["depth"]
            indent = "  " * (2 * depth)
            table += f"{indent}{fqn}\n"
            if include_module_data:
                if "module_type" in helper:
                    table += f"{indent}*module type: {helper['module_type']}\n"
                if "parameters" in helper:
                    table += f"{indent}*Parameter List\n"
                    for param_name, placement in helper["parameters"].items():
                        table += f"{indent} *{param_name}: {placement}\n"
            indent += "  "
            collective_indent = "  " * (2 * depth + 2)
            operation_indent = "  " * (2 * depth + 3)
            forward, backward = self._collectives(fqn)
            fw_ops, bw_ops, ckpt_ops = self._operations(fqn, noise_level)
            for title, collectives, ops in (
                ("FORWARD PASS", forward, fw_ops),
                ("BACKWARD PASS", backward, bw_ops),
                ("ACTIVATION CHECKPOINTING", {}, ckpt_ops),
            ):
                if not (collectives or ops):
                    continue
                table += f"{indent}{title}\n"
                for collective, count in collectives.items():
                    table += f"\033[1;33m{collective_indent}*{collective}: {count}\033[0m\n"
                for op in self._shown(ops, noise_level):
                    table += f"\033[1;33m{collective_indent}**{op['name']}\033[0m\n"
                    if op["input_shape"]:
                        table += f"\033[1;31m{operation_indent}shape: {op['input_shape']}\033[0m\n"
                        table += f"\033[1;31m{operation_indent}sharding: {op['input_sharding']}\033[0m\n"
                        table += f"\033[1;31m{operation_indent}device mesh: {op['device_mesh']}\033[0m\n"
        return table

    def log_comm_debug_tracing_table_to_file(
        self, file_name: str = "comm_mode_log.txt", noise_level: int = 3
    ) -> None:
        """Write :meth:`generate_comm_debug_tracing_table` to ``file_name``, without colours."""
        table = _ANSI_ESCAPE.sub("", self.generate_comm_debug_tracing_table(noise_level))
        with open(file_name, "w") as log_file:
            log_file.write(table)

    def generate_json_dump(self, file_name: str = "comm_mode_log.json", noise_level: int = 3) -> None:
        """Write the module tree with each module's collectives (and, from ``noise_level`` 1
        on, its type, DTensor parameters' placements and operations) to ``file_name`` as
        JSON, the format of PyTorch's module-tree browser."""
        include_module_data = noise_level > 0
        tracker = self.advanced_module_tracker

        def module_json(fqn: str) -> dict[str, Any]:
            helper = tracker.module_helper_dict[fqn]
            data: dict[str, Any] = {"fqn": fqn, "module_type": "", "parameters": [], "children": []}
            if "module_type" in helper and include_module_data:
                data["module_type"] = helper["module_type"]
                data["parameters"] = list(helper.get("parameters", {}).items())
            forward, backward = self._collectives(fqn)
            data["collectives_forward"] = [(str(c), n) for c, n in forward.items()]
            data["collectives_backward"] = [(str(c), n) for c, n in backward.items()]
            for key, ops in zip(
                ("operations_forward", "operations_backward", "operations_checkpointing"),
                self._operations(fqn, noise_level),
            ):
                data[key] = [
                    {
                        **op,
                        "input_shape": [str(s) for s in op["input_shape"]],
                        "input_sharding": [str(p) for p in op["input_sharding"]],
                    }
                    for op in self._shown(ops, noise_level)
                ]
            data["children"] = [module_json(child) for child in tracker.parent_dict.get(fqn, [])]
            return data

        with open(file_name, "w") as json_file:
            json.dump(module_json("Global"), json_file, indent=4)
