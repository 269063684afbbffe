"""The ``pecli`` group and the plumbing its commands share: consoles, exit codes, signals, input, output.

Command modules import from here; this module never imports a command module.
"""

from __future__ import annotations

import errno
import importlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import click

from pecli.cli.options import quiet_enabled, recipe_params
from pecli.errors import PecliInputError, spelled_as_options

if TYPE_CHECKING:
    from rich.console import Console

    from pecli.kinds.base import Recipe
    from pecli.table import Table

EXIT_OK, EXIT_DIFFERENT, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141
#: SIGHUP (the terminal closed, ``ssh`` dropped): 128 + 1, as a shell reports a process it killed.
EXIT_HANGUP = 129
#: SIGTERM (``kill``, a job scheduler's stop): 128 + 15, likewise.
EXIT_TERMINATED = 143

EPILOG = """\b
Exit status: 0 success; 1 tables differ ('diff'); 2 error (bad option,
unreadable input, unwritable output); 129 hung up (SIGHUP); 130 interrupted
(Ctrl-C); 143 terminated (SIGTERM); 141 output pipe closed (e.g. | head).
Nothing partial is ever left behind. A SOURCE of - is standard input.
Completion: eval "$(_PECLI_COMPLETE=bash_source pecli)" (zsh, fish: docs)
"""


class PecliError(click.ClickException):
    """Any error a user can fix; printed as one line, exit code 2."""

    exit_code = EXIT_ERROR

    def format_message(self) -> str:
        # Messages quote file names, dataset keys and paths: their control characters are shown
        # escaped (\x1b, \n), never sent to the terminal, and the message stays one line.
        return _visible(self.message)


class App:
    """Per-invocation state: consoles are made here, never at import time (NO_COLOR, tests)."""

    def __init__(self, no_color: bool) -> None:
        self.no_color = no_color
        self._out: Console | None = None
        self._err: Console | None = None

    def _console(self, stderr: bool) -> Console:
        from rich.console import Console

        console = Console(stderr=stderr, no_color=self.no_color or None, highlight=False, soft_wrap=False)
        # Rich's own handler exits 1 on a closed pipe, and 1 means "tables differ" here.
        console.on_broken_pipe = _on_broken_pipe  # type: ignore[method-assign]
        return console

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

    @property
    def styled(self) -> bool:
        """Whether stdout gets styles: Rich's own rule (TTY_COMPATIBLE, FORCE_COLOR, a terminal)."""
        env = os.environ
        if env.get("TTY_COMPATIBLE", "") in ("0", "1"):
            return env["TTY_COMPATIBLE"] == "1"
        if "FORCE_COLOR" in env:
            return env["FORCE_COLOR"] != ""
        try:
            return sys.stdout.isatty()
        except ValueError:
            return False

    @property
    def width(self) -> int:
        """The width of stdout, as Rich reckons it (without making a Console where it styles nothing)."""
        return self.out.width if self.styled else _rich_plain_width()

    def show(self, renderables: list[Any]) -> None:
        from pecli.views.console import Line, plain_text

        texts = None if self.styled else plain_text(renderables, self.width)
        if texts is not None:  # what Rich would print, without importing its console
            for text in texts:  # each written and flushed as Rich does (`| head -1` ends after the title: 141)
                sys.stdout.write(text)
                sys.stdout.flush()
            return
        for r in renderables:
            if isinstance(r, Line):
                from rich.text import Text

                r = Text(r, style=r.style)
            # Title and header lines are never wrapped by Rich (a long path stays one line).
            self.out.print(r, soft_wrap=isinstance(r, str) or type(r).__name__ == "Text")

    @contextmanager
    def progress(self, total: int, what: str, hide: bool = False) -> Iterator[Callable[[int], None] | None]:
        """A progress bar on stderr for work that lasts over a second, only on a terminal (and
        neither with -q/--quiet nor when ``hide``: machine output)."""
        if hide or quiet_enabled() or not self.err.is_terminal:
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
    from pecli.interruption import abandon_writes, deferring, settled

    if settled():  # the output is in place: nothing to stop, and the status must say so (0)
        return
    if signum == getattr(signal, "SIGHUP", None):
        stop = _Stop(EXIT_HANGUP, "Interrupted (hang-up): nothing was written.")
    elif signum == signal.SIGTERM:
        stop = _Stop(EXIT_TERMINATED, "Interrupted: nothing was written.")
    else:
        stop = _Stop(EXIT_INTERRUPTED, "Interrupted: nothing was written.")
    # Raised wherever the program is; if a library's callback swallows it, the write it
    # interrupted still fails before its rename, and main() exits with this status.  Inside an
    # import that runs Python from C++ (torch's), it waits for the import to end (Deferred).
    abandon_writes(stop)
    if not deferring():
        raise stop


def _on_broken_pipe() -> NoReturn:
    """The reader of stdout went away (e.g. `| head`): stop quietly with SIGPIPE's status, like cat.

    A _Stop, not a BrokenPipeError: an ``except OSError`` on the way out cannot turn it into an error.
    """
    raise _Stop(EXIT_BROKEN_PIPE)


def _visible(text: str) -> str:
    from pecli.views.console import visible

    return visible(text)


def _note(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    """pecli's own warning (a stale sidecar, say) as one line on stderr: ``note: …`` (not with -q).

    Other libraries' warnings (NumPy's "All-NaN slice", matplotlib's axis limits) speak of their
    internals, not of the user's table: every view says itself what it could not compute."""
    from pecli.errors import PecliWarning
    from pecli.views.console import visible

    if issubclass(category, PecliWarning) and not quiet_enabled():
        click.echo(f"note: {visible(str(message))}", err=True)


class LazyCommands(MutableMapping[str, click.Command]):
    """The group's commands by name, each imported from ``module:attribute`` when first looked up:
    ``pecli generate`` does not build the options of the other commands.  Iterating gives
    the names in registration order without importing anything."""

    def __init__(self, **where: str) -> None:
        self._where = where
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            module, _, attribute = self._where[name].partition(":")
            self._loaded[name] = getattr(importlib.import_module(module), attribute)
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._where.setdefault(name, "")
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


class PecliGroup(click.Group):
    """Owns the exit-code contract: every error is one ``Error:`` line on stderr, exit 2."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        # `pecli --help | head` and `--version`: printed while the arguments are parsed.
        try:
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:
            _on_broken_pipe()

    def invoke(self, ctx: click.Context) -> Any:
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.showwarning = _note  # the library's warnings are notes for people: stderr
                return super().invoke(ctx)
        except PecliInputError as exc:
            raise PecliError(str(exc)) from exc
        except BrokenPipeError:
            _on_broken_pipe()

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
        from pecli.cli.boundary import guard_closed_streams, quiet_unraisable
        from pecli.interruption import abandoned, forget_abandoned

        args = _global_options_first(sys.argv[1:] if args is None else list(args))
        guard_closed_streams()
        forget_abandoned()
        handlers = _install_signal_handlers()
        unraisablehook, sys.unraisablehook = sys.unraisablehook, quiet_unraisable
        _tolerate_unencodable()
        # Click would import shutil (and with it bz2, lzma, zlib: ~3 ms) just to ask the width.
        extra.setdefault("terminal_width", _terminal_columns())
        try:
            try:
                rv = super().main(args, prog_name or "pecli", complete_var, False, **extra)
                sys.stdout.flush()  # here, where a full disk under it is still an error, not at exit
            except BaseException as exc:
                stop = abandoned()
                if stop is not None and exc is not stop:
                    # A signal arrived and what failed after it is its consequence (torch's
                    # serializer turns the interruption into a RuntimeError): the signal wins.
                    raise stop from None
                if isinstance(exc, OSError | MemoryError):
                    _fail(exc)
                raise
            stop = abandoned()
            if stop is not None:  # a signal whose exception a library swallowed: it still decides the status
                raise stop
        except _Stop as stop:
            if stop.code == EXIT_BROKEN_PIPE:
                _silence_stdout()
            if stop.message:
                try:  # after a hang-up stderr may be a terminal that is gone (EIO)
                    click.echo(stop.message, err=True)
                except (OSError, ValueError):
                    pass
            sys.exit(stop.code)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
            sys.exit(EXIT_ERROR)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            click.echo(f"Error: {_visible(exc.format_message())}{hint}", err=True)
            sys.exit(EXIT_ERROR)
        except click.ClickException as exc:
            click.echo(f"Error: {_visible(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            click.echo("Interrupted: nothing was written.", err=True)
            sys.exit(EXIT_INTERRUPTED)
        finally:
            sys.unraisablehook = unraisablehook
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


def _fail(exc: OSError | MemoryError) -> NoReturn:
    """The boundary for the operating system's failures (see :mod:`pecli.cli.boundary`)."""
    from pecli.cli.boundary import describe_failure, drop_pending_output

    if isinstance(exc, BrokenPipeError) or getattr(exc, "errno", None) == errno.EPIPE:
        _on_broken_pipe()
    message = describe_failure(exc)  # before the drop: the traceback's frames name the stream
    drop_pending_output()
    raise PecliError(message) from None


#: Options of `pecli` itself that are also accepted after the command (`pecli inspect t.npy --no-color`).
GLOBAL_FLAGS = ("--no-color",)


def _global_options_first(args: list[str]) -> list[str]:
    """Move global flags given after the command to the front (up to a ``--``)."""
    end = args.index("--") if "--" in args else len(args)
    moved = [a for a in args[:end] if a in GLOBAL_FLAGS]
    if not moved:
        return args
    return [*dict.fromkeys(moved), *(a for a in args[:end] if a not in GLOBAL_FLAGS), *args[end:]]


def _install_signal_handlers() -> dict[int, Any]:
    """Ctrl-C, SIGTERM and SIGHUP unwind like an exception, so temporary files are removed on the
    way out.

    Only default handlers are replaced (an embedding program keeps its own, and ``nohup``'s
    ignored SIGHUP stays ignored), and only in the main thread, where Python allows it.
    """
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    replaced: dict[int, Any] = {}
    wanted = [(signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)]
    if hasattr(signal, "SIGHUP"):  # not on Windows
        wanted.append((signal.SIGHUP, signal.SIG_DFL))
    for signum, default in wanted:
        if signal.getsignal(signum) is default:
            replaced[signum] = signal.signal(signum, _on_signal)
    return replaced


def _tolerate_unencodable() -> None:
    """Characters the output encoding lacks (PYTHONIOENCODING=ascii, a C locale) print as '?'.

    The alternative is a UnicodeEncodeError traceback halfway through a table.  Not undone on
    the way out: main() ends the process, and reconfiguring flushes, which can fail on a closed pipe.
    """
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="replace")
            except (OSError, ValueError):
                pass


def _rich_plain_width() -> int:
    """The width Rich gives a console that is not a terminal: $COLUMNS, else the size of a
    terminal on stdin, stdout or stderr, else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


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


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from pecli._version import version_message

        click.echo(version_message())
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
      pecli generate --preset fairseq -o fs.npy     fairseq's (see pecli presets)
      pecli inspect --len 120 --dim 8 --pos 2       explain one position
      pecli inspect pe.h5                           header, statistics, a window
      pecli export pe.h5 -o pe.safetensors          convert, keeping the recipe
      pecli diff mine.npy sinusoidal:len=120,dim=8  compare, say why they differ
      pecli identify mine.npy                       which recipe made this table?

    \b
    A SOURCE is a file, FILE:KEY (one array of an .h5/.npz/.safetensors/.pt file)
    or a recipe KIND:PARAM=VALUE,... e.g. sinusoidal:len=120,dim=8,layout=split
    or PRESET:PARAM=VALUE,... e.g. fairseq:len=2048,dim=512
    or a model's config.json, directory or GGUF file: the cache it implies
    """
    ctx.obj, _ = App(no_color), ctx.with_resource(spelled_as_options())  # errors name the options


def recipe_from_options(ctx: click.Context, params: dict[str, Any], ids_given: bool = False) -> Recipe:
    """The recipe the options describe.  ``ids_given``: --positions gives the rows' ids, so a kind
    whose tokens carry their own ids (M-RoPE) needs no sequence to derive them from."""
    from pecli.kinds import DEFAULT_KIND, get_kind, implied_kind, kind_recipe

    given = {name: params[name] for name in recipe_params(ctx)}
    preset, kind, config = given.pop("preset", None), given.pop("kind", None), given.pop("hf_config", None)
    if ids_given and preset is None and config is None:
        given = {**get_kind(kind or implied_kind(given)).ids_stand_in, **given}
    if config is not None:
        from pecli.hfconfig import recipe_from_config

        if preset is not None:
            raise click.UsageError("give --preset or --hf-config, not both", ctx)
        from pecli.presets import make_recipe

        return make_recipe(given, kind=kind, base=recipe_from_config(config, f"--hf-config {config}"))
    if preset is None and (kind or implied_kind(given)) == DEFAULT_KIND:
        missing = [opt for opt, name in (("--len", "length"), ("--dim", "dim")) if params[name] is None]
        if missing:
            raise click.UsageError(
                f"Missing option {' and '.join(missing)}: a recipe needs --len N and --dim D (or --preset NAME).",
                ctx,
            )
    if preset is None:
        return kind_recipe(given, kind)  # without the presets' tables (start-up)
    from pecli.presets import make_recipe

    return make_recipe(given, preset, kind)


def table_from_options(ctx: click.Context, params: dict[str, Any], ids_given: bool = False) -> Table:
    """The recipe's table; ``--dtype complex64``/``complex128`` stores its (real, imaginary)
    column pairs as complex numbers (:meth:`Table.converted`)."""
    from pecli.dtypes import COMPLEX
    from pecli.table import Table

    stored = params.get("dtype")
    parts = {**params, "dtype": COMPLEX[stored]} if stored in COMPLEX else params
    table = Table.from_recipe(recipe_from_options(ctx, parts, ids_given))
    return table.converted(stored) if stored in COMPLEX else table


@contextmanager
def table_input(
    ctx: click.Context,
    source: str | None,
    params: dict[str, Any],
    fmt: str | None,
    allow: tuple[str, ...] = (),
    ids_given: bool = False,
) -> Iterator[Table]:
    """The table a command works on: SOURCE (file[:key] or KIND:params) or the recipe options.

    ``allow`` names recipe options that still make sense with a SOURCE (export's --dtype).
    """
    from pecli.sources import open_source

    given = [n for n in recipe_params(ctx) if n not in allow]
    if source is not None and given:
        from pecli.params import spell

        opts = ", ".join(spell(n) for n in given)
        raise click.UsageError(f"give a SOURCE or recipe options, not both ({opts} given with {source})", ctx)
    if source is None:
        if not recipe_params(ctx):
            raise click.UsageError(
                "give a SOURCE (a file, FILE:KEY or sinusoidal:len=N,dim=D) "
                "or recipe options such as --len 120 --dim 8",
                ctx,
            )
        yield table_from_options(ctx, params, ids_given)
        return
    with open_source(source, fmt) as table:
        yield table


def show_table(app: App, table: Table, rows: Any, cols: Any, precision: int) -> None:
    from pecli.spans import window
    from pecli.views.table import table_view

    app.show(table_view(app.width, table, window(table, rows, cols), precision))


def write_output(app: App, table: Table, out: dict[str, Any]) -> None:
    """Write ``table`` as the output options in ``out`` say (to a path, or stdout for ``-``)."""
    from pecli.formats import Format, WriteOptions, resolve_format, write_table

    options = WriteOptions(key=out["key"], compress=out["compress"], digits=out["digits"])
    output, fmt = out["output"], out["fmt"]
    if out["transpose"]:
        from pecli.transposition import transposed

        table = transposed(table)
    if out["compress"] is not None and (output == "-" or not resolve_format(output, fmt, "--to").compresses):
        from pecli.cli.options import extensions, titles

        def can(f: Format) -> bool:
            return f.compresses

        raise PecliError(f"--compress applies to {titles(can)} output only ({extensions(can, '/', every=True)})")
    if output == "-":
        if fmt is None:
            raise PecliError("writing to stdout needs --to, e.g. --to npy or --to csv")
        with app.progress(table.shape[0], "writing") as advance:
            write_table(table, sys.stdout.buffer, fmt, options=options, progress=advance)
            sys.stdout.buffer.flush()
        return
    with app.progress(table.shape[0], f"writing {output}") as advance:
        write_table(table, output, fmt, options=options, force=out["force"], sidecar=out["sidecar"], progress=advance)


def echo_json(payload: Any, allow_nan: bool = True) -> None:
    """Machine output on stdout (json is imported here: `pecli --help` never needs it)."""
    import json

    click.echo(json.dumps(payload, indent=2, allow_nan=allow_nan))


def split_params(params: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: params.pop(name) for name in names}


def main() -> None:
    """The ``pecli`` program (console script and ``python -m pecli``).

    After a signal (129, 130, 143) the process ends at once, once its temporary files are gone
    and its streams flushed: Python's own exit would join the worker threads, and a signal that
    lands inside ``ThreadPoolExecutor``'s bookkeeping leaves a thread no one wakes (1 in 12
    interrupted CSV writes hung at exit, in ``threading._shutdown``)."""
    try:
        cli.main(prog_name="pecli")
    except SystemExit as done:
        if done.code in (EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_TERMINATED):
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError, AttributeError):
                    pass
            os._exit(done.code)
        raise
