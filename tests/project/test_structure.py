"""The package's shape: no import cycles, no private names crossing modules, small modules, and
kinds that own themselves (a kind is found by looking, and every one of its parameters is an option)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from pecli.kinds import kinds

PACKAGE = Path(__file__).resolve().parents[2] / "pecli"
#: Past this many lines a module says in its docstring why it is one concept ("Long because …"):
#: a prompt for the reviewer, far above the usual module, not a cap that splits files by count (a
#: file holds one concept, STYLE 21: sqlite-utils keeps one 5,000-line db.py).
LONG_MODULE = 800


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported_from(package: str, node: ast.ImportFrom) -> str:
    """The module ``from … import`` names, a relative one resolved from ``package``."""
    base = node.module or ""
    if node.level:
        anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
        base = f"{anchor}.{base}" if base else anchor
    return base


def _imports(name: str, path: Path, typing: bool = False) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import that runs (module level or inside functions), without
    the ``if TYPE_CHECKING:`` blocks that never do; with ``typing``, those blocks' imports only."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, list[str]]] = []

    def visit(node: ast.AST, checking: bool = False) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, checking)
            return
        if checking == typing and isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif checking == typing and isinstance(node, ast.ImportFrom):
            found.append((_imported_from(package, node), [alias.name for alias in node.names]))
        for child in ast.iter_child_nodes(node):
            visit(child, checking)

    visit(tree)
    return found


def _dynamic_imports(name: str, path: Path) -> set[str]:
    """The pecli modules ``name`` reaches through ``importlib`` (names built at run time), which no
    import statement shows: a lazy reference ``"pecli.cli.generate:generate"`` anywhere; in a module
    that calls ``import_module``, every string naming a pecli module (``pecli``'s lazy names) and,
    for an f-string ``f"pecli.kernels.{x}"``, the modules the strings it holds complete it to (the
    compiled kernels), or for ``f"{__name__}.{x}"`` every module directly in the package (the kinds'
    discovery)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "attr", None) == "import_module" or getattr(node.func, "id", None) == "import_module")
    ]
    found: set[str] = set()
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    for text in strings:
        module, colon, _ = text.partition(":")
        if module in MODULES and "." in module and module != name and (colon or calls):
            found.add(module)
    for call in calls:
        arg = call.args[0] if call.args else None
        if not isinstance(arg, ast.JoinedStr):
            continue
        prefix, own = "", False
        for part in arg.values:
            if isinstance(part, ast.Constant):
                prefix += str(part.value)
            elif isinstance(part, ast.FormattedValue) and getattr(part.value, "id", None) == "__name__" and not prefix:
                prefix, own = name, True
            else:
                break
        children = {m for m in MODULES if m.startswith(prefix) and "." not in m[len(prefix) :] and m != name}
        # Its own package's modules, found by looking; elsewhere the names this module passes (``_load("jit")``).
        found |= children if own else {prefix + t for t in strings if prefix + t in children}
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Module → the pecli modules importing it runs (a submodule runs its packages' ``__init__`` too).

    A module's own packages are already running when it runs, so the ``__init__`` an import runs
    on the way is no edge to them; but a module that imports a name from its own package (``from
    pecli.formats import choose_key`` in ``pecli.formats.npy``) depends on it, and counts."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, path in MODULES.items():
        graph[name] |= _dynamic_imports(name, path)
        for module, names in _imports(name, path):
            named = {f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES}
            if module in MODULES and (not named or set(names) - {n.rpartition(".")[2] for n in named}):
                named.add(module)  # the module itself, or names defined in it
            targets = set(named)
            for target in named:
                parts = target.split(".")
                targets.update(".".join(parts[:i]) for i in range(1, len(parts)))
            graph[name] |= {
                t for t in targets if t in MODULES and t != name and (t in named or not name.startswith(t + "."))
            }
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            connect(v)
    return out


def test_the_graph_sees_imports_inside_functions() -> None:
    # cli imports the kinds only inside its commands; the graph must still see it.
    assert any(
        m.startswith("pecli.kinds") or m == "pecli.presets"
        for m in _graph()["pecli.cli"] | set().union(*(_graph()[m] for m in MODULES if m.startswith("pecli.cli.")))
    )


def test_the_graph_sees_imports_through_importlib() -> None:
    # The kinds are found by looking (importlib), the commands and pecli's names load lazily, the
    # compiled kernels only where numba is: no import statement shows these edges.
    graph = _graph()
    assert {"pecli.kinds.rope", "pecli.kinds.sinusoidal", "pecli.kinds.base"} <= graph["pecli.kinds"]
    assert {"pecli.cli.generate", "pecli.cli.help"} <= graph["pecli.cli"]
    assert {"pecli.table", "pecli.kinds.rope", "pecli.recipe"} <= graph["pecli"]
    assert {"pecli.kernels.jit", "pecli.kernels.jit_draws"} <= graph["pecli.kernels.compiled"]


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def _type_edges() -> dict[str, set[str]]:
    """Module → the pecli modules its ``if TYPE_CHECKING:`` blocks name (nothing runs there, so no
    package ``__init__`` on the way counts)."""
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        named: set[str] = set()
        for module, names in _imports(name, path, typing=True):
            named |= {_defined_in(module, n) for n in names} if names else {module}
        edges[name] = (named & MODULES.keys()) - {name}
    return edges


@functools.cache
def _bound_from(module: str) -> dict[str, tuple[str, str] | None]:
    """Each name ``module`` binds at module level by importing it from a pecli module (when it
    runs or for typing; ``as`` names under the name they bind; ``*`` for a star import), or serves
    from a module-level ``__getattr__``, with the module and the name it takes; a name the module
    defines itself (``def``, ``class``, an assignment: None) is its own, whatever a function imports."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: dict[str, tuple[str, str]] = {}
    defined: set[str] = set()

    def visit(body: list[ast.stmt], lazy: bool = False) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom) and _imported_from(package, node).startswith("pecli"):
                for alias in node.names:
                    out.setdefault(alias.asname or alias.name, (_imported_from(package, node), alias.name))
            elif lazy:
                visit([n for n in ast.walk(node) if isinstance(n, ast.ImportFrom)])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
                if node.name == "__getattr__":  # a lazy name: what it imports
                    visit(node.body, lazy=True)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Name):
                if isinstance(node.targets[0], ast.Name):  # ``Report = Comparison``: another name
                    out.setdefault(node.targets[0].id, (module, node.value.id))
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined.update(t.id for t in targets if isinstance(t, ast.Name))
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)
                visit(getattr(node, "finalbody", []))

    visit(tree.body)
    return {**out, **dict.fromkeys(defined)}  # None: defined there


def _defined_in(module: str, name: str) -> str:
    """The module ``from module import name`` names: a submodule, or the module that defines the
    name, followed through each module that passes it on (a package re-exporting its modules'
    names, under another name too, ``pecli``'s names for typing), so that no allowance for a package
    excuses its modules."""
    seen: set[tuple[str, str]] = set()
    while f"{module}.{name}" not in MODULES and module in MODULES and (module, name) not in seen:
        seen.add((module, name))
        bound = _bound_from(module)
        source = bound[name] if name in bound else bound.get("*")
        if source is None:
            return module  # defined there
        module, name = source[0], (name if source[1] == "*" else source[1])
    return f"{module}.{name}" if f"{module}.{name}" in MODULES else module


@functools.cache
def _shown_with(module: str) -> set[str]:
    """The views a module's data shows itself with: what its ``__str__``, ``__repr__`` and
    ``_repr_html_`` import from ``pecli.views``."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return {
        node.module
        for method in ast.walk(tree)
        if isinstance(method, ast.FunctionDef) and method.name in ("__str__", "__repr__", "_repr_html_")
        for node in ast.walk(method)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pecli.views.")
    }


#: The one pair of modules that name each other for typing across concepts, and why: a recipe's
#: inverse (``Recipe.fit``, ``sizes``, ``recognise``) takes the ``Sample`` it fits, and a sample
#: holds a ``Table``, whose recipe is one.  Breaking it takes a ``Protocol`` copy of ``Sample``
#: (what every kind's fitter reads) or an inverse without types.
TYPED_BOTH_WAYS = {("pecli.recipe", "pecli.fitting")}


def _named_both_ways(source: str, target: str) -> bool:
    """Whether ``source`` may name ``target`` for typing though ``target`` reaches ``source``: one
    concept seen from two sides.  A module names its own package's class (a kind's builder and
    fitter are given the kind, which calls them); a view names the data that shows itself with
    it (``str(comparison)`` is ``diff``'s report); and :data:`TYPED_BOTH_WAYS`."""
    return source.rpartition(".")[0] == target or source in _shown_with(target) or (source, target) in TYPED_BOTH_WAYS


@functools.cache
def _typed_graph() -> dict[str, set[str]]:
    """:func:`_graph` with the modules each one names for typing only, but those
    :func:`_named_both_ways`."""
    graph = {m: set(targets) for m, targets in _graph().items()}
    for source, targets in _type_edges().items():
        graph[source] |= {t for t in targets if not _named_both_ways(source, t)}
    return graph


def test_no_import_cycles_even_through_annotations() -> None:
    # Issue 43: the loops annotations made went through the core (the table, the recipe base, the
    # window a view shows) and through the checkpoints' views.
    assert _cycles(_typed_graph()) == []


def test_each_pair_named_both_ways_is_one_and_is_needed() -> None:
    edges = _type_edges()
    allowed = {(s, t) for s, targets in edges.items() for t in targets if _named_both_ways(s, t)}
    # Each rule allows a real pair: a kind's fitter names its kind; diff's view names the
    # Comparison whose str() it is.
    assert ("pecli.kinds.rope.fit", "pecli.kinds.rope") in allowed
    assert ("pecli.views.diff", "pecli.diff.report") in allowed
    for source, target in TYPED_BOTH_WAYS:
        assert target in edges[source]
        # ... and the pair listed by hand is still a loop: once it is not, it leaves the list.
        graph = {m: set(t) for m, t in _typed_graph().items()}
        graph[source].add(target)
        assert _cycles(graph), f"{source} → {target} closes no loop now: drop it from TYPED_BOTH_WAYS"


def test_a_name_a_package_passes_on_is_followed_to_its_module() -> None:
    # ``from pecli import Table`` for typing names pecli.table, not the front that re-exports it:
    # a module naming its own package's re-export must not slip past the package allowance.
    assert _defined_in("pecli", "Table") == "pecli.table"
    assert _defined_in("pecli.diff", "Comparison") == "pecli.diff.report"
    assert _defined_in("pecli.kinds.rope", "Rope") == "pecli.kinds.rope"  # defined there
    assert _defined_in("pecli.kinds", "rope") == "pecli.kinds.rope"  # a submodule
    assert _defined_in("pecli.kinds.rope", "fit_rope") == "pecli.kinds.rope.fit"  # served lazily
    assert _defined_in("pecli.kinds.base", "Recipe") == "pecli.recipe"  # a star import
    # A function's own import does not make the module's name another's.
    assert _defined_in("pecli.cli.options", "completion") == "pecli.cli.options"
    assert _defined_in("pecli.cli.plot", "plot") == "pecli.cli.plot"
    assert _defined_in("pecli.cli.identify", "identify") == "pecli.cli.identify"


def test_the_typed_graph_sees_a_type_checking_import(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "from typing import TYPE_CHECKING\nimport pecli.errors\n"
        "if TYPE_CHECKING:\n    from pecli.table import Table\nelse:\n    import pecli.dtypes\n"
    )
    assert [m for m, _ in _imports("pecli.m", path, typing=True)] == ["pecli.table"]
    assert [m for m, _ in _imports("pecli.m", path)] == ["typing", "pecli.errors", "pecli.dtypes"]


def test_the_graph_counts_a_module_importing_from_its_own_package() -> None:
    # pecli.formats imports each format module; one importing choose_key back from pecli.formats
    # was a cycle the graph did not see (issue 26).
    graph = _graph()
    assert "pecli.formats.npy" in graph["pecli.formats"]
    children = [m for m in MODULES if m.startswith("pecli.formats.")]
    assert not any("pecli.formats" in graph[c] for c in children)


def test_no_private_name_is_imported_from_another_module() -> None:
    crossing = [
        f"{name}: from {module} import {n}"
        for name, path in MODULES.items()
        for module, names in _imports(name, path)
        if module.startswith("pecli")
        for n in names
        if n.startswith("_") and not n.startswith("__")
    ]
    assert crossing == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_long_module_says_why_it_is_one_concept(name: str) -> None:
    text = MODULES[name].read_text(encoding="utf-8")
    lines = len(text.splitlines())
    if lines > LONG_MODULE:
        doc = ast.get_docstring(ast.parse(text)) or ""
        assert "Long because" in doc, (
            f"{name} has {lines} lines: split it where its concept splits, or say in its docstring why it is "
            "one concept ('Long because …')"
        )


def test_every_kind_module_defines_one_kind_and_is_found() -> None:
    from pecli.kinds import KINDS
    from pecli.recipe import Recipe

    # A kind is a module of pecli.kinds, or a package whose submodules are its own parts (mrope.ids);
    # pecli.kinds.base is the recipe base's 0.2 address, kept for plugins.
    kind_modules = {m.split(".")[2] for m in MODULES if m.startswith("pecli.kinds.") and m != "pecli.kinds.base"}
    found = {cls.__module__ for cls in KINDS.values()}
    assert found == {f"pecli.kinds.{m}" for m in kind_modules}
    assert all(issubclass(cls, Recipe) and cls.kind == name for name, cls in KINDS.items())


def test_every_kind_parameter_is_a_recipe_option_and_back() -> None:
    """Options are found by type (no list of names to keep in step): each field of each kind has a
    recipe option, and each recipe option sets a field of some kind (or picks the preset, the kind or
    the model config the recipe starts from)."""
    from dataclasses import fields

    from pecli.cli import cli
    from pecli.cli.options import RecipeOption
    from pecli.kinds import KINDS

    for command in ("generate", "inspect", "export", "identify", "analyze", "plot"):
        options = {p.name for p in cli.commands[command].params if isinstance(p, RecipeOption)}
        parameters = {f.name for cls in KINDS.values() for f in fields(cls)}  # type: ignore[arg-type]
        assert parameters <= options, (command, parameters - options)
        assert options - parameters == {"preset", "kind", "hf_config"}, (command, options - parameters)


@pytest.mark.parametrize("kind", list(kinds()))
def test_each_kind_states_its_facts(kind: str) -> None:
    from click.testing import CliRunner

    from pecli.cli import cli
    from pecli.kinds import KINDS

    cls = KINDS[kind]
    assert cls.example and cls.required and cls.__doc__
    # The kind's own example builds a table from the command line.
    result = CliRunner().invoke(cli, ["generate", *cls.example.split(), "--rows", "0:1"])
    assert result.exit_code == 0, result.output


def _every_import(path: Path) -> list[str]:
    """Every module a file names in an import, ``if TYPE_CHECKING:`` blocks included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
    return out


def test_no_kernel_imports_a_kind_even_for_typing() -> None:
    # Kernels are below the kinds: a kind calls them with its parameters (issue 26).
    found = {
        name: [m for m in _every_import(path) if m.startswith("pecli.kinds")]
        for name, path in MODULES.items()
        if name.startswith("pecli.kernels")
    }
    assert {k: v for k, v in found.items() if v} == {}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of ``tree`` (words about a name, not the name used)."""
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _strings(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every string constant of a module but its docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def _scaling_names() -> set[str]:
    from pecli.kernels.rope_scaling import SCALINGS

    return {n for t in SCALINGS.values() for n in (t.name, *t.aliases)} - {"default"} - set(kinds())


def _scalings_named(name: str, path: Path) -> list[str]:
    """Where module ``name`` writes a scaling's name (docstrings aside) and is not its owner."""
    if name == "pecli.kernels.rope_scaling" or name.startswith("pecli.presets"):
        return []
    return [f"{name}:{line} {text}" for line, text in _strings(path) if text in _scaling_names()]


def test_scaling_names_are_written_in_the_scaling_registry_only() -> None:
    """``scaling == "yarn"``, ``rope_type in ("llama3", …)`` or ``{"scaling": "longrope", …}``
    outside ``pecli.kernels.rope_scaling`` is a fact of a scaling kept in a second place: the
    registry's entry should say it (its proposals, its GGUF storage).  Presets are data, spelled
    in a user's words; a name that is also a kind's (``mrope``, an old ``rope_type``) is the kind's."""
    assert [f for name, path in MODULES.items() for f in _scalings_named(name, path)] == []


def test_the_scaling_rule_sees_a_name_in_a_dict_but_not_in_words(tmp_path: Path) -> None:
    # The fitter once proposed {"scaling": "llama3", …} itself (issue 43): such a string counts;
    # a docstring saying "llama3" does not.
    path = tmp_path / "m.py"
    path.write_text('"""Reads llama3."""\n\nPARAMS = {"base": 1e4, "scaling": "llama3"}\n', encoding="utf-8")
    assert _scalings_named("pecli.fit", path) == ["pecli.fit:3 llama3"]
    assert _scalings_named("pecli.presets.rotary", path) == []


def test_kind_names_are_compared_in_their_kind_only() -> None:
    """``recipe.kind == "rope"`` outside ``pecli.kinds.rope`` is a branch on a kind's name: the kind
    should answer (a method), or the caller ask for its class (``isinstance(recipe, Rope)``)."""
    names = set(kinds())
    found = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = (node.left, *node.comparators)
            if not any(getattr(s, "attr", getattr(s, "id", None)) == "kind" for s in sides):
                continue
            constants = [c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant)]
            found += [
                f"{name}:{node.lineno} {c}"
                for c in constants
                if c in names and name != f"pecli.kinds.{c}" and not name.startswith(f"pecli.kinds.{c}.")
            ]
    assert found == []


def _layouts() -> dict[str, set[str]]:
    """Each kind's layouts (its ``layout`` field's values): layout name → the kinds that have it."""
    from typing import get_args, get_type_hints

    from pecli.kinds import KINDS

    owners: dict[str, set[str]] = {}
    for kind, cls in KINDS.items():
        for layout in get_args(get_type_hints(cls).get("layout")):
            owners.setdefault(layout, set()).add(kind)
    return owners


def _layouts_named(name: str, path: Path) -> list[str]:
    """Where module ``name``, no module of a kind that has the layout, compares a recipe's
    ``.layout`` with a layout's name, or lists every layout of a kind (a ``Literal`` declaring a
    type of its own aside)."""
    owners = _layouts()

    def own(layout: str) -> bool:
        return any(name == f"pecli.kinds.{k}" or name.startswith(f"pecli.kinds.{k}.") for k in owners[layout])

    tree = ast.parse(path.read_text(encoding="utf-8"))
    declared = {
        id(node.slice)
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "Literal"
    }
    sets = {frozenset(v for v, ks in owners.items() if kind in ks) for kinds_ in owners.values() for kind in kinds_}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
            getattr(s, "attr", None) == "layout" for s in (node.left, *node.comparators)
        ):
            constants = [
                c.value for s in (node.left, *node.comparators) for c in ast.walk(s) if isinstance(c, ast.Constant)
            ]
            found += [f"{name}:{node.lineno} {c}" for c in constants if c in owners and not own(c)]
        elif isinstance(node, (ast.Tuple, ast.List)) and id(node) not in declared:
            values = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(values) == len(node.elts) >= 2 and values in sets and not all(own(v) for v in values):
                found.append(f"{name}:{node.lineno} {sorted(values)}")
    return found


def test_layout_names_are_compared_and_listed_in_their_kinds_only() -> None:
    """``recipe.layout == "split"`` or ``for layout in ("interleaved", "split", "cos-first")``
    outside the sinusoidal kind is a fact of the kind's layouts kept in a second place: the kind
    should answer, or the caller read its ``Layout`` type (``get_args``)."""
    assert [f for name, path in MODULES.items() for f in _layouts_named(name, path)] == []


def test_the_layout_rule_sees_a_comparison_and_a_list(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        'from typing import Literal\nOWN = Literal["interleaved", "split", "cos-first"]\n'
        'def f(r):\n    return r.layout == "split" or [x for x in ("interleaved", "split", "cos-first")]\n',
        encoding="utf-8",
    )
    assert _layouts_named("pecli.analysis", path) == [
        "pecli.analysis:4 split",
        "pecli.analysis:4 ['cos-first', 'interleaved', 'split']",
    ]
    assert _layouts_named("pecli.kinds.sinusoidal.fit", path) == []


def _kinds_named(name: str, path: Path) -> list[str]:
    """Where module ``name`` writes a kind's name and is not that kind's, the kinds' registry
    (``pecli.kinds``) or a preset (data, in a user's words).  A word that is also another
    registry's (the verdict ``learned``, transformers 4.x's ``rope_type`` ``mrope``) is checked
    where it is compared with a ``kind`` only (:func:`test_kind_names_are_compared_in_their_kind_only`)."""
    from typing import get_args

    from pecli.identified import Verdict

    if name == "pecli.kinds" or name.startswith("pecli.presets"):
        return []
    shared = set(get_args(Verdict)) | {n for n in kinds() if n in _scaling_aliases()}
    return [
        f"{name}:{line} {text}"
        for line, text in _strings(path)
        if text in kinds()
        and text not in shared
        and name != f"pecli.kinds.{text}"
        and not name.startswith(f"pecli.kinds.{text}.")
    ]


def _scaling_aliases() -> set[str]:
    from pecli.kernels.rope_scaling import SCALINGS

    return {n for t in SCALINGS.values() for n in t.aliases}


def test_kind_names_are_written_in_their_kind_only() -> None:
    assert [f for name, path in MODULES.items() for f in _kinds_named(name, path)] == []


def test_the_kind_rule_sees_a_kind_named_in_a_call(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text('"""The rope kind."""\n\nmake(kind="rope", verdict="learned")\n', encoding="utf-8")
    assert _kinds_named("pecli.identification", path) == ["pecli.identification:3 rope"]
    assert _kinds_named("pecli.kinds.rope.fit", path) == []


def test_the_scaling_type_lists_the_registry() -> None:
    from typing import get_args

    from pecli.kernels.rope_scaling import SCALINGS, Scaling

    assert get_args(Scaling) == tuple(SCALINGS)


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    # pecli.formats._common is the formats' own: the config reader once read JSON through it.
    crossing = [
        f"{name}: {module}"
        for name, path in MODULES.items()
        for module, _ in _imports(name, path)
        for i, part in enumerate(module.split("."))
        if module.startswith("pecli.")
        and part.startswith("_")
        and not part.startswith("__")
        and not (name + ".").startswith(".".join(module.split(".")[:i]) + ".")
    ]
    assert crossing == []


# -- the layers docs/development.md draws ----------------------------------------------------------
def _layers() -> list[tuple[str, list[str]]]:
    """``(layer, module names)`` of the table under "### The layers" in docs/development.md."""
    text = (PACKAGE.parent / "docs" / "development.md").read_text(encoding="utf-8")
    section = text.split("### The layers", 1)[1].split("\n#", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ") and "`" in line]
    return [(cells[0].strip(), [m.strip().strip("`") for m in cells[1].split(",")]) for cells in rows]


def _layer_of(module: str, layers: list[tuple[str, list[str]]]) -> int | None:
    """The layer a module is drawn in: its own name's, else the nearest package's ``.*``."""
    for i, (_, names) in enumerate(layers):
        if module in names:
            return i
    owners = [(p, i) for i, (_, names) in enumerate(layers) for p in names if p.endswith(".*")]
    packages = [(len(p), i) for p, i in owners if module.startswith(p[:-1])]
    return max(packages)[1] if packages else None


def test_every_module_is_drawn_in_one_layer() -> None:
    layers = _layers()
    assert [name.split(".")[0] for name, _ in layers] == [str(i) for i in range(1, len(layers) + 1)]
    names = [m for _, ms in layers for m in ms]
    assert len(names) == len(set(names)), "a module is drawn twice"
    assert all(n in MODULES or (n.endswith(".*") and n[:-2] in MODULES) for n in names), "a drawn module is gone"
    assert [m for m in MODULES if _layer_of(m, layers) is None] == []


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    layers = _layers()
    up = [
        f"{m} ({layers[_layer_of(m, layers) or 0][0]}) imports {t} ({layers[_layer_of(t, layers) or 0][0]})"
        for m, targets in _graph().items()
        for t in sorted(targets)
        if (_layer_of(t, layers) or 0) > (_layer_of(m, layers) or 0)
    ]
    assert up == []
