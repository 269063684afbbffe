"""Every option is defined once, here (the recipe options, one per kind parameter, in
:mod:`pecli.cli.recipe_options`), and stacked by name on the commands that use it.

Nothing here imports the kinds or the formats: their names (``--kind``, ``--layout``,
``--to``, ``--from`` …) are read from the registries the first time a command needs them, so
``pecli --help`` stays fast while no list of names is kept here by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

from pecli.cli.paramtypes import CompressType, LazyChoice, SpanType
from pecli.views.console import DECIMALS

F = TypeVar("F", bound=Callable[..., Any])


class AliasOption(click.Option):
    """An old name of an option, kept for one release: it works, says so on stderr, and is not in
    ``--help``.  ``target`` is the parameter it sets, ``use`` the name to use instead."""

    def __init__(self, decls: list[str], *, target: str, use: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", f"Old name of {use} (goes in pecli 0.3).")
        super().__init__(decls, hidden=True, **kwargs)
        self.target, self.use = target, use


def alias_option(*decls: str, target: str, use: str, **kwargs: Any) -> Callable[[F], F]:
    """A deprecated name for the option ``use`` (parameter ``target``)."""
    return click.option(*decls, cls=AliasOption, target=target, use=use, **kwargs)


_STDIN_MARK = "\x00stdin"
#: ``ctx.meta`` key: -q/--quiet was given (nothing on stderr but errors).
QUIET = "pecli.quiet"


class PecliCommand(click.Command):
    """Every pecli command: old option names mapped to the new ones (with a note on stderr)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # `-:KEY` (an array of standard input) is an operand, not an option: hidden from Click's
        # option parser under a mark no option starts with, and restored once parsed.
        end = args.index("--") if "--" in args else len(args)
        args = [_STDIN_MARK + a[1:] if i < end and a.startswith("-:") else a for i, a in enumerate(args)]
        rest = super().parse_args(ctx, args)
        for name, value in ctx.params.items():
            if isinstance(value, str) and value.startswith(_STDIN_MARK):
                ctx.params[name] = "-" + value[len(_STDIN_MARK) :]
        given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
        for p in self.params:
            if not isinstance(p, AliasOption) or p.name not in ctx.params:
                continue
            value = ctx.params.pop(p.name)
            if ctx.get_parameter_source(p.name) not in given:
                continue
            old = p.opts[0]
            if ctx.get_parameter_source(p.target) in given:
                if ctx.params[p.target] != value:
                    raise click.UsageError(f"{old} (an old name of {p.use}) and {p.use} disagree: give {p.use}", ctx)
            else:
                ctx.params[p.target] = value
            if not ctx.meta.get(QUIET):
                click.echo(f"warning: {old} is now {p.use} ({old} goes in pecli 0.3)", err=True)
        return rest

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_options(ctx, formatter)
        if any(isinstance(p, RecipeOption) for p in self.params) and not ctx.meta.get(SHOW_EVERY_RECIPE_OPTION):
            formatter.write_paragraph()
            formatter.write_text(
                "Options of one kind only (--scaling, --heads, --grid, --std, --freq, …) are listed kind by kind, "
                "with each kind's defaults, by: pecli help recipes [KIND]"
            )


def quiet_enabled() -> bool:
    """Whether the running command was given -q/--quiet."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(QUIET))


def _remember_quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[QUIET] = True
    return value


def completion(name: str) -> Callable[..., Any]:
    """A shell-completion callback from :mod:`pecli.cli.completion`, imported only when completing."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
        from pecli.cli import completion

        return getattr(completion, name)(ctx, param, incomplete)

    return complete


#: Completes a SOURCE: files, FILE:KEY keys, kind and preset names, a recipe's parameters.
complete_source = completion("complete_source")
#: Completes a path to write.
complete_file = completion("complete_file")


def kind_names() -> tuple[str, ...]:
    """Every kind, the default first (``pecli.kinds``)."""
    from pecli.kinds import kinds

    return tuple(kinds())


def field_choices(name: str) -> Callable[[], tuple[str, ...]]:
    """A loader of every value any kind allows for its parameter ``name`` (its ``Literal`` type)."""

    def load() -> tuple[str, ...]:
        from typing import get_args, get_type_hints

        from pecli.kinds import kinds

        names: list[str] = []
        for cls in kinds().values():
            names += [a for a in get_args(get_type_hints(cls).get(name)) if isinstance(a, str)]
        return tuple(dict.fromkeys(names))

    return load


def format_names(readable: bool) -> Callable[[], tuple[str, ...]]:
    """A loader of every format name and alias the registry accepts: the readable ones, or the writable ones."""

    def load() -> tuple[str, ...]:
        from pecli.formats import formats

        able = [f for f in formats().values() if (f.read if readable else f.write) is not None]
        return tuple(n for f in able for n in (f.name, *f.aliases))

    return load


#: The recipe options that say where a recipe starts from, not a parameter of any kind.
STARTING_POINTS = ("preset", "hf_config", "kind")


class RecipeOption(click.Option):
    """An option that is a recipe parameter (or ``--preset``/``--kind``): commands find them by type.

    Its default is the kind's own (read from the kinds when help is shown: ``--layout`` is
    interleaved for sinusoidal tables and half for rope).  Options of one kind only are left out
    of a command's ``--help`` and listed, kind by kind, by ``pecli help recipes``.
    """

    def kinds_with_field(self) -> dict[str, Any]:
        """``{kind: its default}`` for every kind that has this parameter (``None``: required)."""
        from dataclasses import MISSING, fields

        from pecli.kinds import kinds

        found: dict[str, Any] = {}
        for kind, cls in kinds().items():
            for f in fields(cls):  # type: ignore[arg-type]
                if f.name == self.name:
                    found[kind] = None if f.default is MISSING else f.default
        return found

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        if self.name in STARTING_POINTS:  # no kind's parameter, and on every command's page
            return super().get_help_record(ctx)
        owners = self.kinds_with_field()
        if len(owners) < 2 and not ctx.meta.get(SHOW_EVERY_RECIPE_OPTION):
            return None  # one kind's own option: `pecli help recipes`
        record = super().get_help_record(ctx)
        if record is None:
            return None
        defaults = {k: v for k, v in owners.items() if v is not None and not isinstance(v, bool)}
        if not defaults or ctx.meta.get(SHOW_EVERY_RECIPE_OPTION):
            return record
        values = list(dict.fromkeys(_shown(v) for v in defaults.values()))
        if len(values) == 1:
            text = values[0]
        else:
            text = ", ".join(f"{_shown(v)} ({k})" for k, v in defaults.items())
        return record[0], f"{record[1]}  [default: {text}]"


#: ``ctx.meta`` key: show every recipe option, without per-kind defaults (``pecli help recipes``).
SHOW_EVERY_RECIPE_OPTION = "pecli.every_recipe_option"


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def recipe_params(ctx: click.Context) -> list[str]:
    """The recipe options the user gave to the current command (on the command line or from the environment)."""
    src = click.core.ParameterSource
    given = (src.COMMANDLINE, src.ENVIRONMENT)
    return [
        p.name
        for p in ctx.command.params
        if isinstance(p, RecipeOption) and p.name and ctx.get_parameter_source(p.name) in given
    ]


def recipe_option(*names: str, **kwargs: Any) -> Callable[[F], F]:
    """``click.option`` for a recipe parameter."""
    return click.option(*names, cls=RecipeOption, **kwargs)


def stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(f: F) -> F:
        for dec in reversed(decorators):
            f = dec(f)
        return f

    return apply


def shared_stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """:func:`stack`, but the options are built once and the same instances go on every command
    (a Click option holds no state of its command): the recipe options are ~60 on each of six
    commands, and building them all again was most of ``pecli --help``'s start-up."""
    built: list[click.Parameter] = []

    def apply(f: F) -> F:
        if not built:

            def probe() -> None: ...

            stack(*decorators)(cast(F, probe))
            built.extend(probe.__click_params__)  # type: ignore[attr-defined]
        if not hasattr(f, "__click_params__"):
            f.__click_params__ = []  # type: ignore[attr-defined]
        f.__click_params__.extend(built)  # type: ignore[attr-defined]
        return f

    return apply


span_options = stack(
    click.option(
        "--rows",
        type=SpanType(),
        default=None,
        help="Positions A:B (half-open) only: shown instead of a summary, or written with -o.",
    ),
    click.option(
        "--cols", type=SpanType(), default=None, help="Columns A:B (half-open) only: shown, or written with -o."
    ),
)
positions_options = stack(
    click.option(
        "--positions",
        default=None,
        metavar="IDS",
        help="Rows for these positions, in this order (repeats allowed): a list like 0:512,0:128 "
        "(packed sequences) or @FILE (.npy of integers, or numbers in text or JSON). Written without the "
        "recipe. A:B:S counts by S (63:-64:-1 counts down). sinusoidal: real positions too, e.g. 0.5,999.5 "
        "(SD3's and Flux's timesteps t = σ·1000), and negative ones, relative distances (ESPnet, Transformer-XL). "
        "mrope: each token's (temporal, height, width) ids, a (3, tokens) or (3, batch, tokens) "
        "file as get_rope_index returns them (1-D: text tokens); no --sequence needed.",
    ),
    click.option(
        "--token-ids",
        default=None,
        metavar="IDS",
        help="Rows for token ids numbered the fairseq way (make_positions): from --padding-idx + 1 along "
        "each sequence, padding tokens at the padding row. A list or @FILE; a 2-D file is a batch.",
    ),
)
resample_options = stack(
    click.option(
        "--resample",
        metavar="HxW",
        default=None,
        help="Resize a 2-D position table to this grid as timm's resample_abs_pos_embed does (fine-tuning "
        "a ViT at another resolution); prefix rows are kept. Written without the recipe.",
    ),
    click.option(
        "--resample-from",
        metavar="HxW",
        default=None,
        help="--resample: the table's own grid (default: the square its rows make).",
    ),
    click.option(
        "--prefix-tokens",
        type=click.IntRange(0),
        default=None,
        metavar="K",
        help="--resample: rows before the grid, kept as they are (class and register tokens; default 0 or 1, "
        "whichever leaves a square).",
    ),
    click.option(
        "--interpolation",
        type=click.Choice(["bicubic", "bilinear"]),
        default="bicubic",
        show_default=True,
        help="--resample: torch.nn.functional.interpolate's mode.",
    ),
    click.option(
        "--antialias/--no-antialias",
        default=True,
        show_default=True,
        help="--resample: interpolate's antialias (timm's default, which its checkpoint loader uses).",
    ),
)
view_options = stack(
    span_options,
    click.option(
        "--decimals",
        type=click.IntRange(0, 17),
        default=DECIMALS,
        show_default=True,
        metavar="N",
        help="Digits after the decimal point on the terminal (files keep every bit).",
    ),
    alias_option("--precision", type=click.IntRange(0, 17), target="decimals", use="--decimals"),
)


class FactOption(click.Option):
    """An option whose help states facts of a registry (the formats' extensions), read from it
    when help is shown, never when pecli starts."""

    def __init__(self, decls: list[str], *, facts: Callable[[], str], **kwargs: Any) -> None:
        self.facts: Callable[[], str] = facts
        self._help: str | None = None
        super().__init__(decls, **kwargs)

    @property
    def help(self) -> str:
        if self._help is None:
            self._help = self.facts()
        return self._help

    @help.setter
    def help(self, value: str | None) -> None:
        self._help = value


def extensions(test: Callable[[Any], bool] = lambda f: True, sep: str = " ", every: bool = False) -> str:
    """The first extension (``every``: each extension) of every format that passes ``test``:
    ``.npy .csv .tsv``."""
    from pecli.formats import formats

    return sep.join(e for f in formats().values() if test(f) for e in (f.extensions if every else f.extensions[:1]))


def titles(test: Callable[[Any], bool]) -> str:
    """What every format that passes ``test`` is called: ``HDF5``."""
    from pecli.formats import formats

    return " or ".join(f.called for f in formats().values() if test(f))


def _writable(f: Any) -> bool:
    return f.write is not None


def output_help() -> str:
    """-o/--output, on every command that writes (one option, one meaning)."""
    from pecli.plot import FORMATS as PICTURES

    return (
        f"Where to write, in the format the extension names: a table ({extensions(_writable)}; '-' for stdout) or, "
        f"for plot, a picture ({' '.join(PICTURES)})."
    )


def _nonempty_output(value: str | None) -> str | None:
    if value == "":
        raise click.BadParameter("the output path is empty: give a file name, e.g. -o table.npy, or - for stdout")
    return value


def _nonempty_key(value: str) -> str:
    if not value:
        raise click.BadParameter("the name of the table inside the file cannot be empty, e.g. --key pe")
    return value


force_option = click.option("--force", is_flag=True, help="Overwrite an existing output file.")

output_options = stack(
    click.option(
        "-o",
        "--output",
        metavar="PATH",
        callback=lambda ctx, param, value: _nonempty_output(value),
        shell_complete=complete_file,
        cls=FactOption,
        facts=output_help,
    ),
    click.option(
        "--to",
        "fmt",
        type=LazyChoice(format_names(readable=False), case_sensitive=False),
        default=None,
        help="Output format, overriding the extension (required with -o -).",
    ),
    alias_option(
        "--format",
        "old_format",
        type=LazyChoice(format_names(readable=False), case_sensitive=False),
        target="fmt",
        use="--to",
    ),
    click.option(
        "--key",
        callback=lambda ctx, param, value: _nonempty_key(value),
        default="pe",
        show_default=True,
        metavar="NAME",
        help="Name of the table inside the file: HDF5 dataset path, npz entry, safetensors/pt tensor, C array.",
    ),
    click.option(
        "--compress",
        type=CompressType(),
        default=None,
        cls=FactOption,
        facts=lambda: (
            f"{titles(lambda f: f.compresses)} only: gzip-compress (level 4, or gzip:LEVEL). Off by "
            "default: sin/cos data shrinks only ~30% for ~30x the write time."
        ),
    ),
    click.option(
        "--digits",
        type=click.IntRange(1, 17),
        default=None,
        metavar="N",
        cls=FactOption,
        facts=lambda: f"{extensions(lambda f: f.text)}: significant digits (default: enough to read back bit-exactly).",
    ),
    force_option,
    click.option(
        "--transpose",
        is_flag=True,
        help="Write the table's transpose, (columns, rows): positions along the columns, as a channels-first "
        "runtime keeps a cache. Built whole in memory; the file stores no recipe (its shape is the other one).",
    ),
    click.option(
        "--sidecar/--no-sidecar",
        default=True,
        show_default=True,
        cls=FactOption,
        facts=lambda: (
            f"For {extensions(lambda f: f.metadata == 'sidecar')}, store the recipe in PATH.json beside the file."
        ),
    ),
)
OUTPUT_PARAMS = ("output", "fmt", "key", "compress", "digits", "force", "transpose", "sidecar")
#: The parameters of ``positions_options`` and ``resample_options``: which rows a command writes.
ROW_PARAMS = ("positions", "token_ids", "resample", "resample_from", "prefix_tokens", "interpolation", "antialias")

pos_option = click.option(
    "--pos", type=int, metavar="P", default=None, help="Explain the row of position P column by column."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print the same content as JSON on stdout.")
from_option = click.option(
    "--from",
    "from_fmt",
    type=LazyChoice(format_names(readable=True), case_sensitive=False),
    default=None,
    help="Read files as this format, overriding their extension.",
)
#: --from, and its old name --format on the commands where --format meant the input's format.
input_format_option = stack(
    from_option,
    alias_option(
        "--format",
        "old_format",
        type=LazyChoice(format_names(readable=True), case_sensitive=False),
        target="from_fmt",
        use="--from",
    ),
)
quiet_option = click.option(
    "-q",
    "--quiet",
    is_flag=True,
    callback=_remember_quiet,
    help="Nothing on stderr but errors: no progress bar, notes or warnings.",
)


def _set_threads(ctx: click.Context, param: click.Parameter, value: int | None) -> None:
    if value is not None:
        from pecli.kernels.threads import set_threads

        set_threads(value)


threads_option = click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    expose_value=False,
    callback=_set_threads,
    help="Threads to compute with (also PECLI_THREADS=N). Default: the CPUs this process may use (its "
    "affinity, capped by a container's CPU quota).",
)


def top_option(default: int, low: int) -> Callable[[F], F]:
    """``-n/--top N``: how many entries every list of the report shows."""
    return click.option(
        "-n",
        "--top",
        type=click.IntRange(low, 1000),
        default=default,
        show_default=True,
        metavar="N",
        help="How many entries each list shows (worst elements and rows; nearest candidates).",
    )


tolerance_options = stack(
    click.option(
        "--atol", type=click.FloatRange(min=0), default=0.0, show_default=True, metavar="X", help="Absolute tolerance."
    ),
    click.option(
        "--rtol",
        type=click.FloatRange(min=0),
        default=0.0,
        show_default=True,
        metavar="X",
        help="Relative tolerance, relative to B: an element matches when |a−b| ≤ atol + rtol·|b| "
        "(NumPy's isclose; B is the reference).",
    ),
    click.option(
        "--ulps",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        metavar="N",
        help="Also match elements at most N ulps apart, counted in the narrower float dtype of the two "
        "(NumPy's assert_array_max_ulp); combines with --atol/--rtol.",
    ),
    click.option(
        "--equal-nan/--no-equal-nan", default=True, show_default=True, help="NaNs in the same place count as equal."
    ),
    top_option(10, 0),
)

max_k_option = click.option(
    "--max-k",
    type=click.IntRange(1),
    default=None,
    metavar="K",
    help="Largest offset k for the decay (default: min(rows/2, 512)).",
)
