"""Every option is defined once here and stacked by name on the commands that use it.

Nothing here imports the kinds or the formats: their names (``--kind``, ``--layout``,
``--to``, ``--from`` …) are read from the registries the first time a command needs them, so
``pecli --help`` stays fast while no list of names is kept here by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from pecli.paramtypes import CompressType, LazyChoice, SpanType

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


def _completion(name: str) -> Callable[..., Any]:
    """A shell-completion callback from :mod:`pecli.completion`, imported only when completing."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
        from pecli import completion

        return getattr(completion, name)(ctx, param, incomplete)

    return complete


#: Completes a SOURCE: files, FILE:KEY keys, kind and preset names, a recipe's parameters.
complete_source = _completion("complete_source")
#: Completes a path to write.
complete_file = _completion("complete_file")


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
    """A loader of every format name and alias the registry accepts (readable ones only, or all)."""

    def load() -> tuple[str, ...]:
        from pecli.formats import FORMATS

        return tuple(n for f in FORMATS.values() if f.read is not None or not readable for n in (f.name, *f.aliases))

    return load


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
        if self.name in ("preset", "kind"):
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


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(f: F) -> F:
        for dec in reversed(decorators):
            f = dec(f)
        return f

    return apply


recipe_options = _stack(
    recipe_option(
        "--preset",
        metavar="NAME",
        shell_complete=_completion("complete_preset"),
        help="Start from a framework's table (see `pecli presets`); other recipe options override it.",
    ),
    recipe_option(
        "--hf-config",
        metavar="CONFIG",
        shell_complete=_completion("complete_file"),
        help="Start from a transformers model's config.json (or its directory): the cos/sin cache "
        "(or sinusoid) transformers 5.23 builds for it, without torch; other recipe options override it.",
    ),
    recipe_option(
        "--kind",
        type=LazyChoice(kind_names),
        default=None,
        help="Recipe kind (default sinusoidal; --grid/--order/--cls imply sincos2d, --heads alibi, "
        "--scaling rope, --std/--init/--seed learned).",
    ),
    recipe_option("--len", "length", type=int, metavar="N", help="Number of positions (rows)."),
    recipe_option("--dim", type=int, metavar="D", help="Model width d_model (columns); odd D is allowed."),
    recipe_option(
        "--base",
        type=float,
        default=None,
        metavar="B",
        help="Frequency base (max timescale; temperature for grids): ω_i = B^(−2i/D).",
    ),
    recipe_option(
        "--layout",
        type=LazyChoice(field_choices("layout")),
        default=None,
        help="interleaved: sin,cos,sin,cos… (the paper); split: all sin columns, then all cos (HuggingFace); "
        "cos-first: all cos, then all sin (MusicGen).  rope (default half): half = [f0…f_{h−1}, f0…f_{h−1}] "
        "(HF rotate_half, GPT-NeoX); pairs = [f0, f0, f1, f1, …] (GPT-J, lucidrains); once = [f0…f_{h−1}] "
        "(HF's freqs, Meta's freqs_cis).",
    ),
    recipe_option(
        "--start",
        type=int,
        default=None,
        metavar="P",
        help="Position of the first row (e.g. a past-key-values offset).",
    ),
    recipe_option(
        "--dtype",
        type=LazyChoice(field_choices("dtype")),
        default=None,
        help="Output dtype; values are computed in extended precision and rounded once (a "
        "framework's float32 pipeline: from its float32 values, as torch casts them).",
    ),
    recipe_option(
        "--freq",
        type=LazyChoice(field_choices("freq")),
        default=None,
        help="Frequency rule: paper B^(−2i/D); t2t B^(−i/(half−1)) (tensor2tensor, fairseq, Whisper); "
        "half B^(−i/half).",
    ),
    recipe_option(
        "--min-timescale",
        type=float,
        default=None,
        metavar="M",
        help="tensor2tensor's min_timescale: ω_i = M·(B/M)^(−e_i).",
    ),
    recipe_option(
        "--odd",
        type=LazyChoice(field_choices("odd")),
        default=None,
        help="Odd D: sin = one more sin column (HF); zero = zero last column (fairseq); "
        "truncate = build D+1, drop the last (positional-encodings); error = refuse.",
    ),
    recipe_option(
        "--padding-idx",
        type=int,
        default=None,
        metavar="K",
        help="fairseq's padding row: K+1 rows before the positions, row K zero (first token at row K+1); "
        "learned too (RoBERTa: 1).",
    ),
    recipe_option(
        "--compute",
        type=LazyChoice(field_choices("compute")),
        default=None,
        help="exact: one rounding from the exact value; float64/float32: the framework's own pipeline.",
    ),
    recipe_option(
        "--form",
        type=LazyChoice(field_choices("form")),
        default=None,
        help="How that pipeline evaluates frequencies: exp(−k·ln B/n), 1/B^(k/n) (pow), or p/B^(k/n) (div).  "
        "alibi slopes: list (ofirpress, default), pow (Bloom), recip (MPT).",
    ),
    recipe_option("--grid", metavar="HxW", help="sincos2d: the grid, e.g. 14x14 (XxYxZ for --order tatp)."),
    recipe_option(
        "--order",
        type=LazyChoice(field_choices("order")),
        default=None,
        help="sincos2d: row and column order (mae, timm…, tatp = positional-encodings).",
    ),
    recipe_option("--cls/--no-cls", default=False, help="sincos2d: a zero class-token row first."),
    recipe_option(
        "--part",
        type=LazyChoice(field_choices("part")),
        default=None,
        help="rope: cos (default), sin, angle (p·inv_freq) or inv_freq (one row); alibi: slopes (default) or bias.",
    ),
    recipe_option(
        "--scaling",
        type=LazyChoice(field_choices("scaling")),
        default=None,
        help="rope: HF rope_type (transformers 5.23 modeling_rope_utils).",
    ),
    recipe_option("--factor", type=float, default=None, metavar="F", help="rope scaling factor (linear…llama3)."),
    recipe_option(
        "--original-max-position-embeddings",
        type=int,
        default=None,
        metavar="N",
        help="rope: the trained length (dynamic: HF's max_position_embeddings).",
    ),
    recipe_option("--low-freq-factor", type=float, default=None, metavar="F", help="rope llama3 (Llama 3.1: 1)."),
    recipe_option("--high-freq-factor", type=float, default=None, metavar="F", help="rope llama3 (Llama 3.1: 4)."),
    recipe_option("--beta-fast", type=float, default=None, metavar="B", help="rope yarn (default 32)."),
    recipe_option("--beta-slow", type=float, default=None, metavar="B", help="rope yarn (default 1)."),
    recipe_option(
        "--attention-factor",
        type=float,
        default=None,
        metavar="A",
        help="rope yarn/longrope: cos and sin multiplier (default from --factor).",
    ),
    recipe_option("--mscale", type=float, default=None, metavar="M", help="rope yarn (DeepSeek)."),
    recipe_option("--mscale-all-dim", type=float, default=None, metavar="M", help="rope yarn (DeepSeek)."),
    recipe_option("--short-factor", metavar="F,F,…", default=None, help="rope longrope: dim/2 factors."),
    recipe_option("--long-factor", metavar="F,F,…", default=None, help="rope longrope: dim/2 factors."),
    recipe_option("--truncate/--no-truncate", default=True, help="rope yarn: floor/ceil the ramp's ends."),
    recipe_option("--heads", type=int, default=None, metavar="N", help="alibi: number of attention heads."),
    recipe_option(
        "--origin",
        type=LazyChoice(field_choices("origin")),
        default=None,
        help="alibi bias: first = slope·j (Bloom, default); last = slope·(j − len + 1) (MPT).",
    ),
    recipe_option("--std", type=float, default=None, metavar="S", help="learned: standard deviation (default 0.02)."),
    recipe_option(
        "--init",
        type=LazyChoice(field_choices("init")),
        default=None,
        help="learned: normal (HF) or truncated-normal (±2σ, TF's BERT).",
    ),
    recipe_option("--seed", type=int, default=None, metavar="N", help="learned: NumPy PCG64 seed (default 0)."),
    recipe_option(
        "--offset", type=int, default=None, metavar="K", help="learned: K drawn rows before position 0 (BART: 2)."
    ),
)
span_options = _stack(
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
positions_options = _stack(
    click.option(
        "--positions",
        default=None,
        metavar="IDS",
        help="Rows for these positions, in this order (repeats allowed): a list like 0:512,0:128 "
        "(packed sequences) or @FILE (.npy of integers, or numbers in text). Written without the recipe.",
    ),
    click.option(
        "--token-ids",
        default=None,
        metavar="IDS",
        help="Rows for token ids numbered the fairseq way (make_positions): from --padding-idx + 1 along "
        "each sequence, padding tokens at the padding row. A list or @FILE; a 2-D file is a batch.",
    ),
)
view_options = _stack(
    span_options,
    click.option(
        "--decimals",
        type=click.IntRange(0, 17),
        default=4,
        show_default=True,
        metavar="N",
        help="Digits after the decimal point on the terminal (files keep every bit).",
    ),
    alias_option("--precision", type=click.IntRange(0, 17), target="decimals", use="--decimals"),
)


#: -o/--output, on every command that writes (one option, one meaning).
OUTPUT_HELP = (
    "Where to write, in the format the extension names: a table (.npy .npz .h5 .csv .tsv .json .safetensors "
    ".pt .h; '-' for stdout) or, for plot, a picture (.png .svg)."
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

output_options = _stack(
    click.option(
        "-o",
        "--output",
        metavar="PATH",
        callback=lambda ctx, param, value: _nonempty_output(value),
        shell_complete=complete_file,
        help=OUTPUT_HELP,
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
        help="HDF5 only: gzip-compress (level 4, or gzip:LEVEL). Off by default: sin/cos data "
        "shrinks only ~30% for ~30x the write time.",
    ),
    click.option(
        "--digits",
        type=click.IntRange(1, 17),
        default=None,
        metavar="N",
        help="CSV/TSV/JSON: significant digits (default: enough to read back bit-exactly).",
    ),
    force_option,
    click.option(
        "--sidecar/--no-sidecar",
        default=True,
        show_default=True,
        help="For .npy, .csv and .tsv, store the recipe in PATH.json beside the file.",
    ),
)
OUTPUT_PARAMS = ("output", "fmt", "key", "compress", "digits", "force", "sidecar")

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
input_format_option = _stack(
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


tolerance_options = _stack(
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
