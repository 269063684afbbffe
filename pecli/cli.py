"""The ``pecli`` command: parses options, calls the library, turns library errors into exit 2."""

from __future__ import annotations

import math
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from pecli.errors import PecliInputError
from pecli.options import (
    OUTPUT_PARAMS,
    IntListType,
    force_option,
    input_format_option,
    json_option,
    max_k_option,
    output_options,
    pos_option,
    quiet_option,
    recipe_options,
    recipe_params,
    tolerance_options,
    view_options,
)

if TYPE_CHECKING:
    from rich.console import Console

    from pecli.kinds.base import Recipe
    from pecli.table import Table

EXIT_OK, EXIT_DIFFERENT, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141

EPILOG = """\b
Exit status: 0 success; 1 tables differ ('diff');
2 error (bad option, unreadable input, unwritable output);
130 interrupted (Ctrl-C or SIGTERM); 141 output pipe closed (e.g. | head).
Nothing partial is ever left behind.
"""


class PecliError(click.ClickException):
    """Any error a user can fix; printed as one line, exit code 2."""

    exit_code = EXIT_ERROR


class App:
    """Per-invocation state: consoles are made here, never at import time (NO_COLOR, tests)."""

    def __init__(self, no_color: bool) -> None:
        self.no_color = no_color
        self._out: Console | None = None
        self._err: Console | None = None

    def _console(self, stderr: bool) -> Console:
        from rich.console import Console

        return Console(stderr=stderr, no_color=self.no_color or None, highlight=False, soft_wrap=False)

    @property
    def out(self) -> Console:
        if self._out is None:
            self._out = self._console(stderr=False)
        return self._out

    @property
    def err(self) -> Console:
        if self._err is None:
            self._err = self._console(stderr=True)
        return self._err

    def show(self, renderables: list[Any]) -> None:
        for r in renderables:
            # Title and header lines are never wrapped by Rich (a long path stays one line).
            self.out.print(r, soft_wrap=isinstance(r, str) or type(r).__name__ == "Text")

    @contextmanager
    def progress(self, total: int, what: str, quiet: bool) -> Iterator[Callable[[int], None] | None]:
        """A progress bar on stderr for work that lasts over a second, only on a terminal."""
        if quiet or not self.err.is_terminal:
            yield None
            return
        import time

        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

        began = time.monotonic()
        bar = Progress(
            TextColumn(what), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(), console=self.err, transient=True
        )
        task = bar.add_task(what, total=total)
        started = False

        def advance(n: int) -> None:
            nonlocal started
            bar.advance(task, n)
            if not started and time.monotonic() - began > 1.0:
                bar.start()
                started = True

        try:
            yield advance
        finally:
            if started:
                bar.stop()


class _Stop(BaseException):
    """Unwinds the command (removing temporary files) and sets the exit status.

    A BaseException that Click does not intercept: Click would print a blank line for Ctrl-C and
    exit 1 on a closed pipe, and 1 means "tables differ" here.
    """

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(code, message)
        self.code, self.message = code, message


def _on_signal(signum: int, frame: Any) -> None:
    raise _Stop(EXIT_INTERRUPTED, "Interrupted: nothing was written.")


class PecliGroup(click.Group):
    """Owns the exit-code contract: every error is one ``Error:`` line on stderr, exit 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PecliInputError as exc:
            raise PecliError(str(exc)) from exc
        except BrokenPipeError:
            # The reader went away (e.g. `| head`): stop quietly with SIGPIPE's status, like cat.
            raise _Stop(EXIT_BROKEN_PIPE) from None

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        handlers = _install_signal_handlers()
        # Click would import shutil (and with it bz2, lzma, zlib: ~3 ms) just to ask the width.
        extra.setdefault("terminal_width", _terminal_columns())
        try:
            rv = super().main(args, prog_name or "pecli", complete_var, False, **extra)
        except _Stop as stop:
            if stop.code == EXIT_BROKEN_PIPE:
                _silence_stdout()
            if stop.message:
                click.echo(stop.message, err=True)
            sys.exit(stop.code)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
            sys.exit(EXIT_ERROR)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            click.echo(f"Error: {exc.format_message()}{hint}", err=True)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            click.echo("Interrupted: nothing was written.", err=True)
            sys.exit(EXIT_INTERRUPTED)
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


def _install_signal_handlers() -> dict[int, Any]:
    """Ctrl-C and SIGTERM unwind like an exception, so temporary files are removed on the way out.

    Only default handlers are replaced (an embedding program keeps its own), and only in the
    main thread, where Python allows it.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    replaced: dict[int, Any] = {}
    for signum, default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
        if signal.getsignal(signum) is default:
            replaced[signum] = signal.signal(signum, _on_signal)
    return replaced


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` without importing shutil: $COLUMNS, the terminal, 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _version_message() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from pecli._version import __version__

    deps = []
    for name in ("numpy", "h5py", "rich", "click"):
        try:
            deps.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            deps.append(f"{name} missing")
    return f"pecli {__version__} (Python {sys.version.split()[0]}; {', '.join(deps)})"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(_version_message())
        ctx.exit()


@click.group("pecli", cls=PecliGroup, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show pecli's version and its libraries' versions.",
)
@click.option("--no-color", is_flag=True, envvar="NO_COLOR", help="No colour in terminal output (also NO_COLOR=1).")
@click.pass_context
def cli(ctx: click.Context, no_color: bool) -> None:
    """Positional-encoding tables: generate, inspect, compare, identify and export them.

    \b
      pecli generate --len 120 --dim 8              print the table
      pecli generate --len 4096 --dim 512 -o pe.h5  write it to a file
      pecli generate --preset fairseq -o fs.npy     a framework's own table (pecli presets)
      pecli inspect --len 120 --dim 8 --pos 2       explain one position
      pecli inspect pe.h5                           header, statistics, a window
      pecli export pe.h5 -o pe.safetensors          convert, keeping the recipe
      pecli diff mine.npy sinusoidal:len=120,dim=8  compare, and say why they differ
      pecli identify mine.npy                       which recipe made this table?

    \b
    A SOURCE is a file, FILE:KEY (one array of an .h5/.npz/.safetensors/.pt file)
    or a recipe written KIND:PARAM=VALUE,... e.g. sinusoidal:len=120,dim=8,layout=split
    or PRESET:PARAM=VALUE,... e.g. fairseq:len=2048,dim=512
    """
    ctx.obj = App(no_color)


def _recipe(ctx: click.Context, params: dict[str, Any]) -> Recipe:
    from pecli.kinds import DEFAULT_KIND
    from pecli.presets import implied_kind, make_recipe

    given = {name: params[name] for name in recipe_params(ctx)}
    preset, kind = given.pop("preset", None), given.pop("kind", None)
    if preset is None and (kind or implied_kind(given)) == DEFAULT_KIND:
        missing = [opt for opt, name in (("--len", "length"), ("--dim", "dim")) if params[name] is None]
        if missing:
            raise click.UsageError(
                f"Missing option {' and '.join(missing)}: a recipe needs --len N and --dim D (or --preset NAME).",
                ctx,
            )
    return make_recipe(given, preset, kind)


@contextmanager
def _input(
    ctx: click.Context, source: str | None, params: dict[str, Any], fmt: str | None, allow: tuple[str, ...] = ()
) -> Iterator[Table]:
    """The table a command works on: SOURCE (file[:key] or KIND:params) or the recipe options.

    ``allow`` names recipe options that still make sense with a SOURCE (export's --dtype).
    """
    from pecli.sources import open_source
    from pecli.table import Table

    given = [n for n in recipe_params(ctx) if n not in allow]
    if source is not None and given:
        opts = ", ".join("--len" if n == "length" else f"--{n}" for n in given)
        raise click.UsageError(f"give a SOURCE or recipe options, not both ({opts} given with {source})", ctx)
    if source is None:
        if not recipe_params(ctx):
            raise click.UsageError(
                "give a SOURCE (a file, FILE:KEY or sinusoidal:len=N,dim=D) "
                "or recipe options such as --len 120 --dim 8",
                ctx,
            )
        yield Table.from_recipe(_recipe(ctx, params))
        return
    with open_source(source, fmt) as table:
        yield table


def _show_table(app: App, table: Table, rows: Any, cols: Any, precision: int) -> None:
    from pecli.inspection import window
    from pecli.render import table_view

    app.show(table_view(app.out, table, window(table, rows, cols), precision))


def _write(app: App, table: Table, out: dict[str, Any]) -> None:
    """Write ``table`` as the output options in ``out`` say (to a path, or stdout for ``-``)."""
    from pecli.formats import WriteOptions, resolve_format, write_table

    options = WriteOptions(key=out["key"], compress=out["compress"], digits=out["digits"])
    output, fmt, quiet = out["output"], out["fmt"], out["quiet"]
    if out["compress"] is not None and (output == "-" or resolve_format(output, fmt).name != "h5"):
        raise PecliError("--compress applies to HDF5 output only (.h5/.hdf5)")
    if output == "-":
        if fmt is None:
            raise PecliError("writing to stdout needs --format, e.g. --format npy or --format csv")
        with app.progress(table.shape[0], "writing", quiet) as advance:
            write_table(table, sys.stdout.buffer, fmt, options=options, progress=advance)
            sys.stdout.buffer.flush()
        return
    with app.progress(table.shape[0], f"writing {output}", quiet) as advance:
        write_table(table, output, fmt, options=options, force=out["force"], sidecar=out["sidecar"], progress=advance)


def _echo_json(payload: Any, allow_nan: bool = True) -> None:
    """Machine output on stdout (json is imported here: `pecli --help` never needs it)."""
    import json

    click.echo(json.dumps(payload, indent=2, allow_nan=allow_nan))


def _split(params: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: params.pop(name) for name in names}


@cli.command(epilog=EPILOG)
@recipe_options
@view_options
@output_options
@click.pass_context
def generate(ctx: click.Context, /, rows: Any, cols: Any, precision: int, **params: Any) -> None:
    """Build a table from a recipe: print it, or write it with -o.

    With --compute exact (the default) the angle p·ω_i is carried in double-double precision and
    rounded once to --dtype: float32 and float16 are correctly rounded, float64 is within 1 ulp.
    --preset NAME reproduces a framework's own table, pipeline included (`pecli presets`).

    \b
      pecli generate --len 120 --dim 8
      pecli generate --len 120 --dim 8 --rows 0:4
      pecli generate --len 2048 --dim 512 --layout split -o pe.safetensors
      pecli generate --preset fairseq --len 2048 --dim 512 -o fairseq.npy
      pecli generate --preset mae --grid 14x14 --dim 768 -o mae.npy
      pecli generate --len 120 --dim 8 -o - --format csv > pe.csv
    """
    from pecli.table import Table

    app: App = ctx.obj
    out = _split(params, OUTPUT_PARAMS)
    table = Table.from_recipe(_recipe(ctx, params))
    if out["output"] is None:
        _show_table(app, table, rows, cols, precision)
    else:
        _write(app, table, out)


@cli.command(epilog=EPILOG)
@click.argument("source", required=False, metavar="[SOURCE]")
@recipe_options
@output_options
@click.pass_context
def export(ctx: click.Context, /, source: str | None, **params: Any) -> None:
    """Write a table to a file for another framework or runtime.

    SOURCE is a file, FILE:KEY (an array inside .h5/.npz/.safetensors/.pt) or a recipe such as
    sinusoidal:len=2048,dim=512; without SOURCE the recipe options apply.  Conversion is bit-exact
    when the dtype is unchanged; --dtype converts (a recipe is rebuilt in the new dtype, file
    data is cast and the metadata records the dtype it came from).  The recipe travels with the
    table in every format that can hold it.

    \b
      pecli export --len 2048 --dim 512 -o pe.safetensors --key pos_embed
      pecli export pe.h5 -o pe.npz
      pecli export model.safetensors:wpe.weight -o wpe.csv
      pecli export pe.npy -o pe.h --dtype float32
    """
    app: App = ctx.obj
    out = _split(params, OUTPUT_PARAMS)
    if out["output"] is None:
        raise click.UsageError("Missing option -o/--output: give the file to write (or - for stdout).", ctx)
    dtype_given = "dtype" in recipe_params(ctx)
    with _input(ctx, source, params, None, allow=("dtype",)) as table:
        if source is not None and dtype_given:
            table = table.converted(params["dtype"])
        _write(app, table, out)


@cli.command(epilog=EPILOG)
@click.argument("source", required=False, metavar="[SOURCE]")
@recipe_options
@pos_option
@view_options
@click.option(
    "--heatmap",
    is_flag=True,
    help="Draw the table in the terminal: −1 black, 0 grey, 1 white (sampled to fit; the sampling is stated).",
)
@json_option
@input_format_option
@quiet_option
@click.pass_context
def inspect(
    ctx: click.Context,
    /,
    source: str | None,
    pos: int | None,
    rows: Any,
    cols: Any,
    precision: int,
    heatmap: bool,
    as_json: bool,
    fmt: str | None,
    quiet: bool,
    **params: Any,
) -> None:
    """Look at a table: a file, one array of a file, or the table a recipe makes.

    SOURCE is a file, FILE:KEY or a recipe such as sinusoidal:len=120,dim=8 (or use the recipe
    options).  A file holding several arrays (a checkpoint) has them listed first.  Without
    --pos: a header (shape, dtype, byte order, storage, the stored recipe), statistics (min,
    max, mean, std, row norms) and the edge rows.  With --pos P: row P column by column; for a
    recipe also the frequency index i, sin or cos, ω_i, wavelength 2π/ω_i and the angle p·ω_i.

    \b
      pecli inspect --len 120 --dim 8 --pos 2
      pecli inspect pe.h5
      pecli inspect model.safetensors:embeddings.position_embeddings.weight --pos 0
      pecli inspect pe.npy --pos 2 --json
      pecli inspect --len 32 --dim 128 --start 1 --heatmap
    """
    app: App = ctx.obj
    if heatmap:
        if pos is not None or as_json:
            raise PecliError("--heatmap draws the whole table: drop --pos/--json (or use `pecli plot` for a file)")
        with _input(ctx, source, params, fmt) as table:
            from pecli.analysis import heatmap_sample
            from pecli.render import heatmap_view

            width = app.out.width
            sample = heatmap_sample(table, max_rows=64, max_cols=max(8, width - 7))
            app.show(heatmap_view(table, sample))
        return
    arrays = None if source is None or recipe_params(ctx) else _arrays_to_list(source, fmt)
    if arrays is not None and pos is None:
        from pecli.errors import FormatError
        from pecli.sources import split_file_key

        _show_arrays(app, source or "", arrays, as_json)
        try:
            from pathlib import Path

            from pecli.formats import choose_key

            choose_key(Path(split_file_key(source or "")[0]), None, arrays)
        except FormatError:
            return  # nothing to pick by default: the listing is the answer
        if as_json:
            return
        app.out.print()
    with _input(ctx, source, params, fmt) as table:
        _inspect(app, table, pos, rows, cols, precision, as_json, quiet)


@cli.command(epilog=EPILOG)
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@tolerance_options
@json_option
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; the exit status says it all (like cmp -s).")
@click.pass_context
def diff(
    ctx: click.Context,
    /,
    a: str,
    b: str,
    atol: float,
    rtol: float,
    equal_nan: bool,
    top: int,
    as_json: bool,
    quiet: bool,
) -> None:
    """Compare table A against the reference B, and say why they differ.

    A and B are SOURCEs: files, FILE:KEY or recipes such as sinusoidal:len=120,dim=8.  Exact by
    default; with --atol/--rtol an element matches when |a−b| ≤ atol + rtol·|b|, B being the
    reference (NumPy's isclose).  The report starts with a verdict, then shape, dtype and
    metadata differences, the count of elements outside tolerance, max abs/rel/ulp differences
    with where they are, RMS, the likely cause (split vs interleaved layout, cos-first, rows
    shifted, a padding row, 2-D order, float32 angles, another base) and the worst elements.

    Exit status 0 when the tables match, 1 when they differ (a shape mismatch too), 2 on error.

    \b
      pecli diff exported.npy sinusoidal:len=2048,dim=512,layout=split
      pecli diff mine.safetensors:pe theirs.h5 --atol 1e-6
      pecli diff a.npy b.npy --json
    """
    from pecli.compare import compare
    from pecli.sources import open_source

    app: App = ctx.obj
    with open_source(a) as ta, open_source(b) as tb:
        with app.progress(max(ta.shape[0], tb.shape[0]), "comparing", quiet or as_json) as advance:
            result = compare(ta, tb, atol=atol, rtol=rtol, equal_nan=equal_nan, top=top, progress=advance)
    if as_json:
        _echo_json(result.to_dict(), allow_nan=False)
    elif not quiet:
        from pecli.render import diff_view

        app.show(diff_view(result))
    ctx.exit(result.exit_code)


@cli.command(epilog=EPILOG)
@click.argument("names", nargs=-1, metavar="[NAME]...")
@json_option
@click.pass_obj
def presets(app: App, names: tuple[str, ...], as_json: bool) -> None:
    """List the presets: named recipes that reproduce a framework's own table.

    With NAME, show that preset in full: the framework, class or function and version it
    reproduces, the formula, offsets, how exact it is and its default recipe.  Use one with
    `pecli generate --preset NAME [--len N --dim D ...]`, or as a SOURCE: NAME:len=N,dim=D.
    """
    from pecli.presets import PRESETS, get_preset
    from pecli.render import presets_view

    chosen = [get_preset(n) for n in names] if names else list(PRESETS.values())
    if as_json:
        rows = [
            {
                "name": p.name,
                "kind": p.kind,
                "framework": p.framework,
                "source": p.source,
                "formula": p.summary,
                "offsets": p.offsets,
                "precision": p.exactness,
                "recipe": p.recipe().to_metadata(),
            }
            for p in chosen
        ]
        _echo_json(rows)
        return
    app.show(presets_view(chosen, detail=bool(names)))


@cli.command(epilog=EPILOG)
@click.argument("source", required=False, metavar="[SOURCE]")
@recipe_options
@click.option(
    "--nearest",
    type=click.IntRange(1, 50),
    default=5,
    show_default=True,
    metavar="N",
    help="How many nearest candidates to list.",
)
@json_option
@input_format_option
@click.pass_context
def identify(
    ctx: click.Context, /, source: str | None, nearest: int, as_json: bool, fmt: str | None, **params: Any
) -> None:
    """Which recipe made this table?  Searches every kind and preset.

    Fits layout, base, frequency rule, start offset, padding row, odd-width policy, 2-D order
    and grid, RoPE layout and compute pipeline (exact, float64 or float32) from the data, scores
    every preset too, and reports the best match with its residual and a confidence, or "no known
    recipe" with the nearest candidates.  Exit status 0 whatever the verdict (2 on error).

    \b
      pecli identify checkpoint.safetensors:embed_positions.weight
      pecli identify pe.npy --json
    """
    from pecli.identify import identify as find
    from pecli.render import identify_view

    app: App = ctx.obj
    with _input(ctx, source, params, fmt) as table:
        found = find(table, nearest=nearest)
    if as_json:
        _echo_json(found.to_dict(), allow_nan=False)
    else:
        app.show(identify_view(found))


@cli.command(epilog=EPILOG)
@click.argument("source", required=False, metavar="[SOURCE]")
@recipe_options
@max_k_option
@click.option(
    "--ks",
    type=IntListType("1,8,64"),
    default="1,2,4,8,16,64",
    show_default=True,
    help="Offsets k for the relative-position residual.",
)
@json_option
@input_format_option
@click.pass_context
def analyze(
    ctx: click.Context,
    /,
    source: str | None,
    max_k: int | None,
    ks: list[int],
    as_json: bool,
    fmt: str | None,
    **params: Any,
) -> None:
    """The properties the papers describe, measured on a table.

    Decay: mean PE(p)·PE(p+k) and mean cosine similarity against k (the long-range decay).
    Relative position: the residual of the best linear map R_k with PE(p+k) ≈ R_k·PE(p) over
    all p — about machine precision for an exact sinusoidal table, large for a learned or broken
    one.  Wavelengths: 2π/ω of each column (from the recipe, or measured from the data).

    \b
      pecli analyze --len 512 --dim 128
      pecli analyze pe.npy --ks 1,8,64 --json
    """
    from pecli import analysis
    from pecli.render import analysis_view

    app: App = ctx.obj
    with _input(ctx, source, params, fmt) as table:
        n = table.shape[0]
        if n < 2:
            raise PecliError(f"the table has {n} row: the properties need at least 2 positions")
        decay = analysis.decay(table, min(max_k or analysis.default_max_k(n), n - 1))
        residual = analysis.relative_residual(table, sorted({k for k in ks if 0 < k < n}))
        known = table.recipe.wavelengths() if table.recipe is not None else None
        waves = known if known is not None else analysis.estimate_wavelengths(table).wavelength
    if as_json:
        payload = {
            "decay": decay.to_dict(),
            "relative_residual": residual.to_dict(),
            "wavelengths": [float(w) if math.isfinite(float(w)) else None for w in waves],
        }
        _echo_json(payload, allow_nan=False)
    else:
        app.show(analysis_view(table, decay, residual, waves))


@cli.command(epilog=EPILOG)
@click.argument("source", required=False, metavar="[SOURCE]")
@recipe_options
@click.option("-o", "--output", required=True, metavar="FIG", help="The picture to write: .png or .svg.")
@click.option(
    "--what",
    type=click.Choice(["heatmap", "curves", "decay"]),
    default="heatmap",
    show_default=True,
    help="heatmap: the table (position × dimension) with a colour bar; curves: chosen dimensions "
    "across positions; decay: similarity against the offset k.",
)
@click.option(
    "--dims", type=IntListType("0,32,64"), default=None, help="curves: the dimensions to draw (default 0, d/4, d/2)."
)
@max_k_option
@force_option
@input_format_option
@click.pass_context
def plot(
    ctx: click.Context,
    /,
    source: str | None,
    output: str,
    what: str,
    dims: list[int] | None,
    max_k: int | None,
    force: bool,
    fmt: str | None,
    **params: Any,
) -> None:
    """Draw a table as a picture (PNG or SVG; needs matplotlib: pip install 'pecli[plot]').

    \b
      pecli plot --len 32 --dim 128 --start 1 -o heatmap.png
      pecli plot --len 512 --dim 128 --what curves --dims 0,32,64 -o curves.svg
      pecli plot pe.npy --what decay -o decay.png
    """
    from pecli import plot as plots

    app: App = ctx.obj
    with _input(ctx, source, params, fmt) as table:
        if what == "heatmap":
            done = plots.heatmap(table, output, force=force)
        elif what == "curves":
            done = plots.curves(table, output, dims, force=force)
        else:
            done = plots.decay_plot(table, output, max_k, force=force)
    app.err.print(f"wrote {done.path} ({done.size[0]}×{done.size[1]} px; {done.description})", soft_wrap=True)


def _arrays_to_list(source: str, fmt: str | None) -> list[Any] | None:
    """The arrays of a multi-array file given without :KEY (None when there is nothing to list)."""
    from pecli.formats import list_arrays
    from pecli.sources import is_recipe_spec, split_file_key

    if is_recipe_spec(source):
        return None
    path, key = split_file_key(source)
    from pathlib import Path

    if key is not None or not Path(path).exists():
        return None
    arrays = list_arrays(path, fmt)
    return arrays if arrays is not None and len(arrays) > 1 else None


def _show_arrays(app: App, source: str, arrays: list[Any], as_json: bool) -> None:
    if as_json:
        _echo_json(
            {"source": source, "arrays": [{"key": a.key, "shape": list(a.shape), "dtype": a.dtype} for a in arrays]}
        )
        return
    from pecli.render import arrays_view

    app.show(arrays_view(source, arrays))


def _inspect(
    app: App, table: Table, pos: int | None, rows: Any, cols: Any, precision: int, as_json: bool, quiet: bool
) -> None:
    from pecli import inspection as d
    from pecli import render

    if pos is not None:
        if rows is not None:
            raise PecliError("--rows and --pos exclude each other: --pos P explains one position")
        details = d.row_details(table, pos, cols)
        if as_json:
            payload = {
                **d.header(table),
                "position": pos,
                "columns": [{**e, "value": d.json_number(e["value"])} for e in details],
            }
            _echo_json(payload)
        else:
            app.show(render.row_view(table, pos, details, precision))
        return
    with app.progress(table.shape[0], "statistics", quiet) as advance:
        desc = d.describe(table, advance)
    # A header view shows a taste of the data: edge rows only, unless --rows asks for more.
    win = d.window(table, rows, cols, threshold=0)
    if as_json:
        desc["window"] = {
            "positions": [None if r is None else table.start + r for r in win.row_ids],
            "columns": list(range(*win.col_range)),
            "values": [None if r is None else [d.json_number(v) for v in win.values[r]] for r in win.row_ids],
        }
        _echo_json(desc)
        return
    app.show(render.describe_view(desc, precision))
    app.out.print()
    app.show(render.table_view(app.out, table, win, precision)[1:])


def main() -> None:
    cli.main(prog_name="pecli")
