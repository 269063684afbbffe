"""One syntax for "a table" on every command: a file, a file's array, or a recipe.

    pe.h5                         a file (its only table, or /pe)
    model.safetensors:wpe.weight  one array of a multi-array file (h5 dataset, npz entry, tensor)
    sinusoidal:len=120,dim=8      a recipe: KIND:PARAM=VALUE,... with the same names as the options
    config.json   model.gguf      a model's settings: the cache they imply (pecli.model_files)
    config.json:len=4096          … at another length (any parameter of its recipe)
    -   -:KEY                     standard input (npy, npz, safetensors, json, csv or tsv: see formats.open_stream)

Which one an operand is does not depend on the files in the working directory:

- A SOURCE with a path separator before its first colon, or starting with ``./`` or ``/``, is
  always a file: ``./rope:len=8`` is the file ``./rope`` with the key ``len=8``.
- Otherwise ``KIND:…`` or ``PRESET:…`` (a known kind or preset, then a colon) is always a recipe,
  even when a file or directory named ``rope`` (or ``sinusoidal``, ``fairseq``…) exists here; to
  read such a file, write ``./rope`` (or ``./rope:KEY``).
- ``NAME:PARAM=VALUE,…`` with an unknown NAME is a recipe too (so that it is told which kinds
  exist), unless a file or directory ``NAME`` exists, or one named like the whole operand.
- ``-`` is standard input, ``-:KEY`` one array of it; the file named ``-`` is ``./-``.
- Anything else is a file; ``FILE:KEY`` is split at the first colon whose left side is an
  existing file (an HDF5 key may hold colons of its own).  A pipe, FIFO or terminal named as a
  file (``/dev/stdin``) is read as a stream, like ``-``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pecli.errors import FormatError, RecipeError
from pecli.kinds import kinds
from pecli.params import operand_params
from pecli.presets import PRESETS
from pecli.recipe import Recipe, parameter_types
from pecli.streams import is_stream


def is_recipe_spec(spec: str) -> bool:
    """Whether ``spec`` is a recipe operand, by the rules in this module's docstring: a file path
    never is; a known kind or preset before the first colon always is; an unknown name that looks
    like one is, unless a file claims it (so that it gets a message naming the kinds)."""
    if is_path_like(spec) or is_stdin(spec):
        return False
    kind, sep, rest = spec.partition(":")
    if not sep:  # a bare preset or kind name (``qwen2-vl``) is its recipe, unless a file has that name
        return (spec in PRESETS or spec in kinds()) and not _exists(spec)
    if kind in PRESETS or kind in kinds():
        return True
    looks_like = kind.replace("-", "_").isidentifier() and "=" in rest
    return looks_like and not _exists(spec) and not _exists(kind)


def is_stdin(spec: str) -> bool:
    """``-`` or ``-:KEY``: the table on standard input."""
    return spec == "-" or spec.startswith("-:")


def is_path_like(spec: str) -> bool:
    """``./NAME``, ``/NAME`` or a path separator before the first colon: a file, never a recipe."""
    head = spec.partition(":")[0]
    seps = [sep for sep in ("/", os.sep, os.altsep) if sep]
    return spec.startswith(("./", "/")) or any(sep in head for sep in seps)


def _exists(path: str) -> bool:
    """Whether ``path`` names something; a name the system cannot hold (over 255 bytes: a long
    LongRoPE operand) names nothing."""
    try:
        return Path(path).exists()
    except OSError:
        return False


def parse_recipe(spec: str) -> Recipe:
    """``sinusoidal:len=120,dim=8,layout=split`` or ``fairseq:len=2048`` → a validated recipe."""
    try:
        return _parse_recipe(spec)
    except RecipeError as exc:
        head = spec.partition(":")[0]
        if head and _exists(head):  # a file named like the kind: say how to read it instead
            raise RecipeError(f"{exc} (to read the file {head} here instead, write ./{spec})") from exc
        raise


def _parse_recipe(spec: str) -> Recipe:
    from pecli.making import make_recipe
    from pecli.presets import get_preset

    head, _, rest = spec.partition(":")
    if head in PRESETS:
        preset: str | None = head
        kind = get_preset(head).kind
    elif head in kinds():
        preset, kind = None, head
    else:
        import difflib

        near = difflib.get_close_matches(head, [*kinds(), *PRESETS], n=3, cutoff=0.75)
        hint = f"did you mean {' or '.join(near)}? " if near else ""
        raise RecipeError(
            f"unknown kind {head!r} in {spec!r}: {hint}choose a kind ({', '.join(kinds())}) "
            "or a preset (`pecli presets` lists them)"
        )
    cls = kinds()[kind]
    params = operand_params(kind, parameter_types(cls), rest.split(","), spec)
    if preset is None:
        missing = [("len" if n == "length" else n) for n in cls.required if n not in params]
        if missing:
            raise RecipeError(f"{spec!r} needs {' and '.join(missing)}, e.g. {operand_example(cls)}")
    return make_recipe(params, preset, kind)


def shell_word(text: str) -> str:
    """``text`` quoted for a POSIX shell on one line: ``shlex.quote``, or bash/zsh's ``$'…'`` with
    escapes where it holds control characters (a newline would split the command)."""
    from shlex import quote

    if all(" " <= c != "\x7f" for c in text):
        return quote(text)
    escaped = "".join(
        {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t"}.get(c)
        or (f"\\x{ord(c):02x}" if c < " " or c == "\x7f" else c)
        for c in text
    )
    return f"$'{escaped}'"


def operand_example(cls: type[Recipe]) -> str:
    """The kind's example (``--kind rope --len 4096 --dim 128``) as an operand (``rope:len=4096,dim=128``)."""
    words = cls.example.split()
    pairs = [(words[i][2:], words[i + 1]) for i in range(0, len(words) - 1, 2) if words[i] != "--kind"]
    return f"{cls.kind}:" + ",".join(f"{name}={value}" for name, value in pairs)


def split_file_key(spec: str) -> tuple[str, str | None]:
    """``model.h5:layer/w:0`` → ``("model.h5", "layer/w:0")`` when model.h5 exists."""
    if _exists(spec):
        return spec, None
    at = spec.find(":")
    while at != -1:
        head = spec[:at]
        if head and (Path(head).is_file() or is_stream(head) or (Path(head) / "config.json").is_file()):
            return head, spec[at + 1 :] or None
        at = spec.find(":", at + 1)
    return spec, None


@contextmanager
def open_source(spec: str, fmt: str | None = None) -> Iterator[Any]:
    """A Table for any operand; files are closed when the block ends."""
    from pecli.formats import open_stream, open_table
    from pecli.table import Table

    if not spec:
        raise FormatError(
            "the SOURCE is empty: give a table file, FILE:KEY or a recipe such as sinusoidal:len=120,dim=8"
        )
    if is_stdin(spec):
        with open_stream(None, fmt, spec[2:] or None) as table:
            yield table
        return
    if is_recipe_spec(spec):
        if fmt is not None:
            raise FormatError(f"--from applies to files, not to the recipe {spec!r}")
        recipe = parse_recipe(spec)
        yield Table(recipe, recipe, recipe.spec())
        return
    path, key = split_file_key(spec)
    from pecli.model_files import settings_file, settings_table

    if settings_file(path, key, fmt):  # a config.json, a model directory, a GGUF file: the cache it implies
        yield settings_table(spec, path, key)
        return
    with open_table(path, fmt, key) as table:
        yield table
