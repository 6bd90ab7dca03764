"""The shape of apps/ (issue 21), read from the source with `ast`, so that it stays true:

- imports run one way, down the layers below (lowest first), counting imports inside
  functions and under TYPE_CHECKING; an app may import itself and any lower layer;
- no two modules import each other, directly or round a longer circle (a package's
  `__init__` importing its submodules counts as importing them);
- no module imports another module's private (`_name`) names;
- no module over MAX_MODULE_LINES lines; no function over MAX_FUNCTION_LINES lines unless its
  docstring says why ("Long because ...");
- every app says in its docstring what it owns and what it may import;
- templates follow the layers too: an app's template includes, extends and loads (tag
  libraries) only its own app's, a lower layer's, the site's frame (`templates/`) or a
  third party's, and an app's Python names only such templates.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "apps"

# Lowest first. `demo` is a dev tool that fills a site with made-up data: it may use any app
# and nothing may use it.
LAYERS = [
    "core",
    "accounts",
    "trajectories",
    "moderation",
    "owners",
    "stars",
    "feedback",
    "datasets",
    "learn",
    "stats",
    "demo",
]
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
LONG_REASON = "Long because"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for path in sorted(APPS.rglob("*.py"))
        if "migrations" not in path.parts
    }


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(_modules()[name].read_text(), filename=str(_modules()[name]))


def _imports(name: str) -> list[tuple[str, str, int]]:
    """(imported module, imported name or "", line) for every import of a project module."""
    path = _modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                found.append((target, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, "", node.lineno) for alias in node.names)
    return [item for item in found if item[0].split(".")[0] in ("apps", "config")]


def _app(module: str) -> str:
    parts = module.split(".")
    return parts[1] if parts[0] == "apps" and len(parts) > 1 else parts[0]


@cache
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name in modules:
        for target, imported, _line in _imports(name):
            submodule = f"{target}.{imported}"
            graph[name].add(submodule if submodule in modules else target)
    return graph


def test_every_app_is_in_a_layer_and_says_what_it_owns():
    apps = sorted(p.name for p in APPS.iterdir() if (p / "apps.py").exists())
    assert apps == sorted(LAYERS)
    for app in apps:
        docstring = ast.get_docstring(_tree(f"apps.{app}")) or ""
        assert "may import" in docstring.lower(), f"apps/{app}/__init__.py: say what it may import"


def test_imports_run_down_the_layers():
    upward = []
    for name in _modules():
        for target, _imported, line in _imports(name):
            here, there = _app(name), _app(target)
            if here == there:
                continue
            if there == "config" or (there in LAYERS and LAYERS.index(there) > LAYERS.index(here)):
                upward.append(f"{_modules()[name].relative_to(ROOT)}:{line} imports {target}")
    assert upward == []


def test_no_import_circles():
    graph = _graph()
    modules = _modules()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = 0

    # Tarjan's strongly connected components, iteratively (no recursion limit).
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in modules:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    assert circles == []


def test_no_private_name_is_imported_from_another_module():
    crossing = []
    for name in _modules():
        for target, imported, line in _imports(name):
            if imported.startswith("_") and not imported.startswith("__") and target != name:
                crossing.append(f"{_modules()[name].relative_to(ROOT)}:{line} {target}.{imported}")
    assert crossing == []


def test_modules_and_functions_are_short():
    long_modules = []
    long_functions = []
    for name, path in _modules().items():
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES:
            long_modules.append(f"{path.relative_to(ROOT)}: {lines} lines")
        for node in ast.walk(_tree(name)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                reason = LONG_REASON in (ast.get_docstring(node) or "")
                if length > MAX_FUNCTION_LINES and not reason:
                    long_functions.append(
                        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length} lines"
                    )
    assert long_modules == []
    assert long_functions == []


# {% include "x" %} / {% extends "x" %} with a literal name, and {% load a b %} / {% load a from b %}.
_TEMPLATE_USE = re.compile(r"""{%-?\s*(include|extends)\s+(["'])([^"']+)\2""")
_TEMPLATE_LOAD = re.compile(r"{%-?\s*load\s+([^%]+?)\s*-?%}")


@cache
def _app_templates() -> dict[str, str]:
    """Template name -> the app whose templates/ folder holds it."""
    owners: dict[str, str] = {}
    for app in LAYERS:
        folder = APPS / app / "templates"
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if path.is_file():
                owners.setdefault(str(path.relative_to(folder)), app)
    return owners


def _tag_libraries() -> dict[str, str]:
    """Tag library name -> the app that defines it."""
    return {
        path.stem: path.parts[-3]
        for path in APPS.glob("*/templatetags/*.py")
        if path.name != "__init__.py"
    }


def _template_uses() -> list[tuple[str, str, str]]:
    """(where, used app, what) for every use of an app's template or tag library, by an app's
    template or Python module."""
    templates, libraries = _app_templates(), _tag_libraries()
    uses = []
    for name, app in templates.items():
        text = (APPS / app / "templates" / name).read_text(errors="replace")
        where = f"apps/{app}/templates/{name}"
        for match in _TEMPLATE_USE.finditer(text):
            if match.group(3) in templates:
                uses.append((where, templates[match.group(3)], match.group(3)))
        for match in _TEMPLATE_LOAD.finditer(text):
            words = match.group(1).split()
            loaded = words[words.index("from") + 1 :] if "from" in words else words
            uses.extend((where, libraries[lib], lib) for lib in loaded if lib in libraries)
    for module, path in _modules().items():
        for node in ast.walk(_tree(module)):
            if isinstance(node, ast.Constant) and node.value in templates:
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                uses.append((where, templates[node.value], node.value))
    return uses


def _user_app(where: str) -> str:
    return where.split("/")[1]


def test_templates_are_used_down_the_layers():
    uses = _template_uses()
    # The reading itself: known uses of each kind are found (a broken pattern finds nothing).
    assert (
        "apps/trajectories/templates/trajectories/page.html",
        "trajectories",
        "trajectories/_owner_controls.html",
    ) in uses
    assert ("apps/owners/templates/owners/me.html", "accounts", "account_tabs") in uses
    assert any(
        what == "core/_pagination.html" and user.startswith("apps/owners/")
        for user, _app_used, what in uses
    )
    upward = [
        f"{where} uses {what} ({there})"
        for where, there, what in uses
        if LAYERS.index(there) > LAYERS.index(_user_app(where))
    ]
    assert upward == []
