"""Shell completion (bash, zsh, fish) through Click's ``_PECLI_COMPLETE``: SOURCE operands complete
to files, ``FILE:KEY`` keys read from the file, preset and kind names, and a recipe's parameter
names (``rope:len=4096,sc`` → ``scaling=``); ``--preset`` to preset names; ``-o`` to files.

Install (once, in the shell's start-up file)::

    eval "$(_PECLI_COMPLETE=bash_source pecli)"      # ~/.bashrc
    eval "$(_PECLI_COMPLETE=zsh_source pecli)"       # ~/.zshrc
    _PECLI_COMPLETE=fish_source pecli | source        # ~/.config/fish/completions/pecli.fish

Everything is read when a completion is asked for, never when pecli starts: ``pecli --help``
imports none of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import click
    from click.shell_completion import CompletionItem


def _item(value: str, kind: str = "plain", help: str | None = None) -> CompletionItem:
    from click.shell_completion import CompletionItem

    return CompletionItem(value, type=kind, help=help)


def _recipe_names() -> dict[str, list[str]]:
    """``{kind or preset: its parameter names as operands write them}``."""
    from pecli.kinds import field_names, kinds
    from pecli.presets import PRESETS

    def operand(name: str) -> str:
        return "len" if name == "length" else name

    names = {k: [operand(f) for f in field_names(k)] for k in kinds()}
    for p in PRESETS.values():
        names[p.name] = names.get(p.kind, [])
    return names


def complete_source(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """A SOURCE: ``FILE:KEY`` keys, recipe parameters after ``KIND:``/``PRESET:``, else kind and
    preset names (with their ``:``) and files."""
    head, sep, tail = incomplete.partition(":")
    if sep and head and Path(head).is_file():
        return _keys(head, tail)
    recipes = _recipe_names()
    if sep and head in recipes:
        done, comma, last = tail.rpartition(",")
        given = {part.partition("=")[0] for part in done.split(",") if part}
        prefix = f"{head}:{done}{comma}"
        return [_item(f"{prefix}{n}=") for n in recipes[head] if n.startswith(last) and n not in given]
    found = [_item(f"{name}:", help="recipe") for name in recipes if name.startswith(incomplete)]
    return [*found, _item(incomplete, "file")]


def _keys(path: str, start: str) -> list[CompletionItem]:
    """The arrays inside ``path`` (an .npz, .h5, .safetensors or .pt file) whose key starts with ``start``."""
    from pecli.errors import PecliInputError
    from pecli.formats import list_arrays

    try:
        arrays = list_arrays(path, None) or []
    except (PecliInputError, OSError):
        return []
    return [_item(f"{path}:{a.key}") for a in arrays if str(a.key).startswith(start)]


def complete_preset(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    from pecli.presets import PRESETS

    return [_item(name) for name in PRESETS if name.startswith(incomplete)]


def complete_file(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return [_item(incomplete, "file")]


__all__: list[Any] = ["complete_file", "complete_preset", "complete_source"]
