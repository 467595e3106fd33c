"""The house rules, checked on the code itself (no GPU needed).

The engine never imports the UI or the CLI; no module takes a private name from
another; imports form no circle, counting those made inside functions; a tuner is
built in one module only; the roots stay small and no function grows past a screen
or two. Each rule is read from the source with ``ast``, so a breach names its line.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "vajra_tui"
UI_PREFIXES = ("textual", "textual_plotext", "vajra_tui.cli", "vajra_tui.tui")
MAX_LOOSE_ENGINE, MAX_LOOSE_ROOT, MAX_FUNCTION_LINES = 8, 10, 120


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skip.update(id(n) for n in ast.walk(child))
    return skip


def _imports(tree: ast.AST, modules: dict[str, Path]) -> list[tuple[int, str, list[str]]]:
    """(line, module imported, names taken) for every import outside TYPE_CHECKING blocks."""
    skip, out = _type_checking_nodes(tree), []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.append((node.lineno, full, []) if full in modules else (node.lineno, node.module, [alias.name]))
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for _, target, _names in _imports(ast.parse(path.read_text()), modules):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
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


def test_the_engine_imports_neither_textual_nor_the_cli_nor_the_tui() -> None:
    """Every engine module imported in a fresh interpreter leaves no UI module loaded."""
    engine = sorted(n for n in _modules() if n.startswith("vajra_tui.engine") and not n.endswith("__main__"))
    script = ("import importlib, sys\n"
              f"for name in {engine!r}:\n    importlib.import_module(name)\n"
              f"print('\\n'.join(sorted(m for m in sys.modules if m.startswith({UI_PREFIXES!r}))))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240,
                          cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", f"the engine pulled in: {done.stdout.split()}"


def test_no_engine_module_names_the_ui_in_its_source() -> None:
    """The same rule read statically: also imports inside functions that the test above never runs."""
    modules = _modules()
    offenders = []
    for name, path in modules.items():
        if not name.startswith("vajra_tui.engine"):
            continue
        for line, target, _ in _imports(ast.parse(path.read_text()), modules):
            if target.startswith(UI_PREFIXES):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not offenders, offenders


def test_imports_form_no_circle_counting_those_inside_functions() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    """The rule above can fail: a circle of three is found, a chain is not."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_module_imports_a_private_name_from_another() -> None:
    modules = _modules()
    offenders = []
    for name, path in modules.items():
        for line, target, names in _imports(ast.parse(path.read_text()), modules):
            leaf = target.rpartition(".")[2]
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if leaf.startswith("_") and not leaf.startswith("__") and target in modules and target != name:
                private.append(target)
            if private and target != name:
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line} takes {private} from {target}")
    assert not offenders, offenders


def test_a_tuner_is_built_in_one_module_only() -> None:
    """``Tuner(...)`` and ``LaneTuner(...)`` are called by the run builder alone."""
    builders = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called in ("Tuner", "LaneTuner"):
                    builders.add(str(path.relative_to(PACKAGE.parent)))
    assert builders == {"vajra_tui/engine/run/builder.py"}, builders


def test_the_roots_stay_small() -> None:
    engine = [p.name for p in (PACKAGE / "engine").glob("*.py") if p.name != "__init__.py"]
    root = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert len(engine) <= MAX_LOOSE_ENGINE, sorted(engine)
    assert len(root) <= MAX_LOOSE_ROOT, sorted(root)


def test_no_function_is_longer_than_a_screen_or_two() -> None:
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long
