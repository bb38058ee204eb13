"""``torch.fx.GraphModule``: an ``nn.Module`` whose ``forward`` is Python source generated
from a :class:`Graph`. It holds the submodules, parameters and buffers that the graph reads
(copied by reference from the module it was traced from), regenerates ``forward`` on
``recompile()`` or when ``graph`` is set, and deep-copies and pickles with its graph.

Every instance gets a class of its own (``forward`` is a class attribute, and two graph
modules run different code); the class is named after the traced module, as in PyTorch."""

from __future__ import annotations

import copy
import textwrap
from typing import Any

from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph

__all__ = ["GraphModule"]

_READABLE_REMINDER = "# To see more debug info, please use `graph_module.print_readable()`"


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Make ``to_module``'s attribute at dotted path ``target`` the one of ``from_module``
    (intermediate modules become plain ``Module`` s; a bare tensor becomes a buffer)."""
    *prefix, field = target.split(".")
    for item in prefix:
        source = getattr(from_module, item)
        dest = getattr(to_module, item, None)
        if source is dest:
            return
        if dest is None:
            dest = Module()
            setattr(to_module, item, dest)
        from_module, to_module = source, dest
    _assign(getattr(from_module, field), to_module, field)


def _assign(value: Any, module: Module, field: str) -> None:
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        module.register_buffer(field, value)
    else:
        setattr(module, field, value)


def _assign_path(value: Any, root: Module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        child = getattr(root, item, None)
        if child is None:
            child = Module()
            setattr(root, item, child)
        root = child
    _assign(value, root, field)


def _rebuild(state: dict, graph: Graph) -> GraphModule:
    """Unpickle a :class:`GraphModule` (its modules' state, then its graph); as in PyTorch,
    the copy's class is called ``GraphModule``."""
    gm = GraphModule.__new__(GraphModule)
    type(gm).__name__ = "GraphModule"
    gm.__dict__.update(state)
    gm.graph = graph
    return gm


class GraphModule(Module):
    """A module that runs ``graph``. ``root`` is the module (or a dict of qualified name to
    object) that the graph's ``get_attr`` and ``call_module`` targets are taken from."""

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        base = next(t for t in cls.__mro__ if t.__qualname__.rsplit(".", 1)[-1] != "GraphModuleImpl")

        class GraphModuleImpl(base):  # type: ignore[misc, valid-type]
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: Module | dict[str, Any], graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        type(self).__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(
                            f"Node {node} referenced target {node.target} but that target was not provided in ``root``!"
                        )
                    _assign_path(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph

    # ------------------------------------------------------------------ graph and code
    @property
    def graph(self) -> Graph:
        """The graph this module runs; setting it regenerates ``forward``."""
        return self.__dict__["_graph"]

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``."""
        return self.__dict__["_code"]

    def recompile(self) -> Any:
        """Regenerate ``forward`` from ``graph`` (call after editing the graph)."""
        python = self.graph.python_code(root_module="self")
        self.__dict__["_code"] = python.src
        namespace = dict(python.globals)
        exec(compile(python.src, f"<eval_with_key>.{id(self)}", "exec"), namespace)
        type(self).forward = namespace["forward"]
        return python

    def print_readable(
        self,
        print_output: bool = True,
        include_stride: bool = False,
        include_device: bool = False,
        colored: bool = False,
    ) -> str:
        """``forward`` as the method of a class named after this module (printed, and returned)."""
        src = self.graph.python_code(root_module="self", verbose=True).src.strip("\n").rstrip()
        readable = f"class {type(self).__name__}(torch.nn.Module):\n" + textwrap.indent(src, "    ") + "\n"
        if print_output:
            print(readable)
        return readable

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self.code, _READABLE_REMINDER])

    # ------------------------------------------------------------------ editing helpers
    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at dotted path ``target`` (creating plain modules on the way);
        ``False`` if a non-module is in the way."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            child = getattr(mod, item, None)
            if child is None:
                child = Module()
                mod.add_module(item, child)
            if not isinstance(child, Module):
                return False
            mod = child
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at dotted path ``target``; ``False`` if there is none."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            mod = getattr(mod, item, None)
            if not isinstance(mod, Module):
                return False
        if field not in mod._modules:
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove every submodule that no node of the graph calls or reads."""
        used: set[str] = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[: i + 1]) for i in range(len(parts)))
                if node.op == "call_module":
                    used.update(
                        f"{node.target}.{name}"
                        for name, _ in self.get_submodule(node.target).named_modules()
                        if name
                    )
        for name, _ in reversed(list(self.named_modules())):
            if name and name not in used:
                self.delete_submodule(name)

    # ------------------------------------------------------------------ copies
    def _state(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}

    def __deepcopy__(self, memo: dict) -> GraphModule:
        out = GraphModule.__new__(GraphModule)
        type(out).__name__ = "GraphModule"  # as PyTorch names its copies
        memo[id(self)] = out
        out.__dict__.update(copy.deepcopy(self._state(), memo))
        out.graph = copy.deepcopy(self.graph, memo)
        return out

    def __reduce__(self) -> tuple:
        return (_rebuild, (self._state(), self.graph))
