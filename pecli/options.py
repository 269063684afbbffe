"""Every option is defined once here and stacked by name on the commands that use it.

Nothing here imports the kinds or the formats: their names (``--kind``, ``--layout``,
``--format`` …) are read from the registries the first time a command needs them, so
``pecli --help`` stays fast while no list of names is kept here by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class LazyChoice(click.Choice):
    """A ``click.Choice`` whose names come from a registry, read on first use."""

    def __init__(self, load: Callable[[], tuple[str, ...]], case_sensitive: bool = True) -> None:
        self._load = load
        self._names: tuple[str, ...] | None = None
        self.case_sensitive = case_sensitive

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        if self._names is None:
            self._names = self._load()
        return self._names

    @choices.setter
    def choices(self, value: tuple[str, ...]) -> None:
        self._names = tuple(value)


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
    """An option that is a recipe parameter (or ``--preset``/``--kind``): commands find them by type."""


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


class SpanType(click.ParamType):
    """``A:B`` (half-open), ``A:``, ``:B`` or ``A`` (just A)."""

    name = "A:B"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        text = str(value).strip()
        try:
            if ":" not in text:
                a = int(text)
                return (a, a + 1)
            left, right = text.split(":", 1)
            return (int(left) if left.strip() else None, int(right) if right.strip() else None)
        except ValueError:
            self.fail(f"{value!r} is not a span like 10:20, 10: or :20", param, ctx)


class IntListType(click.ParamType):
    """``1,8,64``: whole numbers separated by commas."""

    name = "N,N,…"

    def __init__(self, example: str) -> None:
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, list):
            return value
        try:
            return [int(x) for x in str(value).split(",") if x.strip()]
        except ValueError:
            self.fail(f"{value!r} is not a list of whole numbers like {self.example}", param, ctx)


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
        help="Start from a framework's table (see `pecli presets`); other recipe options override it.",
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
        default=10000.0,
        show_default=True,
        metavar="B",
        help="Frequency base (max timescale; temperature for grids): ω_i = B^(−2i/D).",
    ),
    recipe_option(
        "--layout",
        type=LazyChoice(field_choices("layout")),
        default="interleaved",
        show_default=True,
        help="interleaved: sin,cos,sin,cos… (the paper); split: all sin columns, then all cos (HuggingFace); "
        "cos-first: all cos, then all sin (MusicGen).  rope (default half): half = [f0…f_{h−1}, f0…f_{h−1}] "
        "(HF rotate_half, GPT-NeoX); pairs = [f0, f0, f1, f1, …] (GPT-J, lucidrains); once = [f0…f_{h−1}] "
        "(HF's freqs, Meta's freqs_cis).",
    ),
    recipe_option(
        "--start",
        type=int,
        default=0,
        show_default=True,
        metavar="P",
        help="Position of the first row (e.g. a past-key-values offset).",
    ),
    recipe_option(
        "--dtype",
        type=LazyChoice(field_choices("dtype")),
        default="float32",
        show_default=True,
        help="Output dtype; values are computed in extended precision and rounded once.",
    ),
    recipe_option(
        "--freq",
        type=LazyChoice(field_choices("freq")),
        default="paper",
        show_default=True,
        help="Frequency rule: paper B^(−2i/D); t2t B^(−i/(half−1)) (tensor2tensor, fairseq, Whisper); "
        "half B^(−i/half).",
    ),
    recipe_option(
        "--min-timescale",
        type=float,
        default=1.0,
        show_default=True,
        metavar="M",
        help="tensor2tensor's min_timescale: ω_i = M·(B/M)^(−e_i).",
    ),
    recipe_option(
        "--odd",
        type=LazyChoice(field_choices("odd")),
        default="sin",
        show_default=True,
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
        default="exact",
        show_default=True,
        help="exact: one rounding from the exact value; float64/float32: the framework's own pipeline.",
    ),
    recipe_option(
        "--form",
        type=LazyChoice(field_choices("form")),
        default="exp",
        show_default=True,
        help="How that pipeline evaluates frequencies: exp(−k·ln B/n), 1/B^(k/n) (pow), or p/B^(k/n) (div).  "
        "alibi slopes: list (ofirpress, default), pow (Bloom), recip (MPT).",
    ),
    recipe_option("--grid", metavar="HxW", help="sincos2d: the grid, e.g. 14x14 (XxYxZ for --order tatp)."),
    recipe_option(
        "--order",
        type=LazyChoice(field_choices("order")),
        default="mae",
        show_default=True,
        help="sincos2d: row and column order (mae, timm…, tatp = positional-encodings).",
    ),
    recipe_option("--cls/--no-cls", default=False, show_default=True, help="sincos2d: a zero class-token row first."),
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
    recipe_option(
        "--truncate/--no-truncate", default=True, show_default=True, help="rope yarn: floor/ceil the ramp's ends."
    ),
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
view_options = _stack(
    click.option("--rows", type=SpanType(), default=None, help="Show positions A:B (half-open) instead of a summary."),
    click.option("--cols", type=SpanType(), default=None, help="Show columns C:D (half-open)."),
    click.option(
        "--precision",
        type=click.IntRange(0, 17),
        default=4,
        show_default=True,
        metavar="N",
        help="Digits after the decimal point on the terminal (files keep every bit).",
    ),
)


def _nonempty_output(value: str | None) -> str | None:
    if value == "":
        raise click.BadParameter("the output path is empty: give a file name, e.g. -o table.npy, or - for stdout")
    return value


def _nonempty_key(value: str) -> str:
    if not value:
        raise click.BadParameter("the name of the table inside the file cannot be empty, e.g. --key pe")
    return value


class CompressType(click.ParamType):
    """``gzip`` or ``gzip:LEVEL`` (0-9)."""

    name = "gzip[:LEVEL]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        method, _, level = str(value).partition(":")
        if method != "gzip" or (level and not (level.isdigit() and 0 <= int(level) <= 9)):
            self.fail(f"{value!r} is not gzip or gzip:LEVEL with LEVEL 0-9", param, ctx)
        return (method, int(level) if level else 4)


force_option = click.option("--force", is_flag=True, help="Overwrite an existing output file.")

output_options = _stack(
    click.option(
        "-o",
        "--output",
        metavar="PATH",
        callback=lambda ctx, param, value: _nonempty_output(value),
        help="Write the table to PATH, in the format its extension names "
        "(.npy .npz .h5 .csv .tsv .json .safetensors .pt .h); '-' writes to stdout.",
    ),
    click.option(
        "--format",
        "fmt",
        type=LazyChoice(format_names(readable=False), case_sensitive=False),
        default=None,
        help="Output format, overriding the extension (required with -o -).",
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
    click.option("-q", "--quiet", is_flag=True, help="No progress bar."),
)
OUTPUT_PARAMS = ("output", "fmt", "key", "compress", "digits", "force", "sidecar", "quiet")

pos_option = click.option(
    "--pos", type=int, metavar="P", default=None, help="Explain the row of position P column by column."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print the same content as JSON on stdout.")
input_format_option = click.option(
    "--format",
    "fmt",
    type=LazyChoice(format_names(readable=True), case_sensitive=False),
    default=None,
    help="Read files as this format, overriding their extension.",
)
quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bar.")

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
    click.option(
        "-n",
        "--top",
        type=click.IntRange(0, 1000),
        default=10,
        show_default=True,
        metavar="N",
        help="How many worst elements and rows to list.",
    ),
)

max_k_option = click.option(
    "--max-k",
    type=click.IntRange(1),
    default=None,
    metavar="K",
    help="Largest offset k for the decay (default: min(rows/2, 512)).",
)
