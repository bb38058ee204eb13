"""The import graph of the package: no cycle, and no arrow from a lower layer to a higher one.

Every module of ``disttorch`` (and ``launcher/``, installed as ``disttorch.launcher``) is
parsed with :mod:`ast`; every import counts, at module level or inside a function, except
those under ``if TYPE_CHECKING:`` (never executed) and those inside a module-level
``__getattr__`` (PEP 562 lazy attributes such as ``disttorch.nn``: they run on first use of
the name, after the package has finished importing, so they re-export rather than depend).

The layers, bottom to top (``DESIGN.md``)::

    kernels     disttorch.kernels (pure NumPy, no Tensor: they import no other layer)
    core        disttorch._* (tensor, dtypes, creation, random, printing, faults), utils.trace
    autograd    disttorch.autograd
    ops         disttorch.ops
    library     nn, optim, utils, distributed, datasets, serialization, viz, ...
    parallel    disttorch.nn.parallel (where nn and distributed meet)
    package     disttorch/__init__.py and _facade.py (the facade: re-exports every layer but
                the launcher; __init__ loads _facade on first use)
    launcher    disttorch.launcher

A module imports only its own layer and the layers below. Within the library,
``distributed`` never imports ``nn``. Nothing but the launcher imports the launcher.

``disttorch.distributed`` has floors of its own, bottom to top: ``base`` (errors, the
job-secret handshake, addresses, log), ``store`` (rendezvous), ``wire`` (transport,
frames, shared memory), ``engine`` (process group, work, channel), and the API (the
modules at its top, ``algorithms``, ``optim``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "disttorch"
LAUNCHER = ROOT / "launcher"  # installed as disttorch.launcher (disttorch/launcher links to it)

LAYERS = ("kernels", "core", "autograd", "ops", "library", "parallel", "package", "launcher")


def _module_files() -> dict[str, Path]:
    """Module name -> file, for the package and its launcher (the link is not followed twice)."""
    files: dict[str, Path] = {}
    for base, prefix in ((PACKAGE, ("disttorch",)), (LAUNCHER, ("disttorch", "launcher"))):
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("").parts
            if base == PACKAGE and rel[0] == "launcher":
                continue
            parts = prefix + (rel[:-1] if rel[-1] == "__init__" else rel)
            files[".".join(parts)] = path
    return files


MODULES = _module_files()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _skipped(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` blocks and module-level ``__getattr__`` bodies are not dependencies."""
    if isinstance(node, ast.If):
        test = node.test
        return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
    return False


def _imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    stack: list[ast.AST] = []
    for node in tree.body:  # a module-level __getattr__ is a lazy re-export (see the header)
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            continue
        stack.append(node)
    while stack:
        node = stack.pop()
        if _skipped(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if _is_package(module) else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The project modules this import statement executes: the module itself (or the
    submodules named by ``from package import submodule``) and the ``__init__`` of every
    package on the way to it, except the importing module's own packages (already running)
    and the root ``disttorch`` (the facade, always imported first)."""
    if isinstance(node, ast.Import):
        names = {alias.name for alias in node.names}
    else:
        source = _resolve(module, node)
        names = set()
        for alias in node.names:
            sub = f"{source}.{alias.name}"
            names.add(sub if sub in MODULES else source)
    own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    if _is_package(module):
        own.add(module)
    found = set()
    for name in names:
        parts = name.split(".")
        found.update(".".join(parts[:i]) for i in range(2, len(parts) + 1))
    return {name for name in found if name in MODULES and name not in own}


def _graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        graph[name] = {t for node in _imports(tree) for t in _targets(name, node)} - {name}
    return graph


GRAPH = _graph()


def layer(module: str) -> str:
    """The layer a module belongs to (see the header)."""
    parts = module.split(".")
    if module in ("disttorch", "disttorch._facade"):
        return "package"
    second = parts[1]
    if second == "launcher":
        return "launcher"
    if second in (
        "_dynamo",
        "_function_dispatch",
        "_functorch",
        "_higher_order_ops",
        "_library_opcheck",
        "_utils",
    ):
        # torch._dynamo's names stand on nn (OptimizedModule) and overrides; the dispatching
        # twins swap nn.functional's functions; torch._utils's rebuilds are serialization's;
        # higher-order ops compose the ops; functorch is torch.func's transforms over nn;
        # torch.library.opcheck's tests run an op under autograd
        return "library"
    if second.startswith("_") or module in (
        "disttorch.utils",
        "disttorch.utils.trace",
        "disttorch.utils.hooks",
    ):
        # utils/__init__ imports nothing (``data`` is lazy); tracing is the ground floor, and
        # hooks' RemovableHandle (standard library only) is what tensors' hooks return
        return "core"
    if second in ("autograd", "kernels", "ops"):
        return second
    if parts[1:3] == ["nn", "parallel"]:
        return "parallel"
    return "library"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_module_list_covers_the_layers():
    layers = {layer(m) for m in MODULES}
    assert {"core", "autograd", "ops", "library", "parallel", "launcher", "package"} <= layers
    assert layer("disttorch._tensor") == "core" and layer("disttorch.nn.functional.conv") == "library"
    assert "disttorch.launcher.main" in MODULES and "disttorch.launcher.launcher" not in MODULES


def test_relative_imports_resolve_to_modules():
    tree = ast.parse("from ..ops import shape\nfrom . import engine\nfrom .._tensor import Tensor\n")
    targets = set().union(*(_targets("disttorch.autograd.gradcheck", n) for n in tree.body))
    assert targets == {
        "disttorch.ops",
        "disttorch.ops.shape",
        "disttorch.autograd.engine",
        "disttorch._tensor",
    }


def test_cycle_finder_finds_a_cycle_and_only_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles (module-level and function-level imports):\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_no_upward_import_between_layers():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = sorted(
        f"{m} ({layer(m)}) imports {t} ({layer(t)})"
        for m, targets in GRAPH.items()
        for t in targets
        if rank[layer(t)] > rank[layer(m)]
    )
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


@pytest.mark.parametrize(
    "source, forbidden",
    [
        ("disttorch.distributed", "disttorch.nn"),
        ("disttorch.autograd", "disttorch.distributed"),
    ],
)
def test_forbidden_arrows(source, forbidden):
    bad = sorted(
        f"{m} imports {t}"
        for m, targets in GRAPH.items()
        if m == source or m.startswith(source + ".")
        for t in targets
        if t.startswith(forbidden)
    )
    assert not bad, "\n".join(bad)


DIST_FLOORS = ("base", "store", "wire", "engine", "api")


def dist_floor(module: str) -> str:
    """The floor of a ``disttorch.distributed`` module (see the header)."""
    part = module.split(".")[2] if module.count(".") >= 2 else ""
    return part if part in DIST_FLOORS[:-1] else "api"


def test_distributed_floors_import_only_downward():
    rank = {name: i for i, name in enumerate(DIST_FLOORS)}
    dist = "disttorch.distributed"
    assert dist_floor("disttorch.distributed.wire.transport") == "wire" and dist_floor(dist) == "api"
    upward = sorted(
        f"{m} ({dist_floor(m)}) imports {t} ({dist_floor(t)})"
        for m, targets in GRAPH.items()
        if m.startswith(dist + ".")
        for t in targets
        if t.startswith(dist + ".") and rank[dist_floor(t)] > rank[dist_floor(m)]
    )
    assert not upward, "\n".join(upward)


def test_kernels_import_nothing_of_disttorch_but_kernels():
    kernels = [m for m in GRAPH if m.startswith("disttorch.kernels.")]
    assert {"disttorch.kernels.erf", "disttorch.kernels.gelu", "disttorch.kernels.windows"} <= set(kernels)
    bad = sorted(
        f"{m} imports {t}" for m in kernels for t in GRAPH[m] if not t.startswith("disttorch.kernels")
    )
    assert not bad, "\n".join(bad)


def test_only_the_launcher_imports_the_launcher():
    bad = sorted(
        f"{m} imports {t}"
        for m, targets in GRAPH.items()
        if layer(m) != "launcher"
        for t in targets
        if layer(t) == "launcher"
    )
    assert not bad, "\n".join(bad)
