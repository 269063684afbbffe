"""The ``pecli`` group: its consoles, its error boundary and the exit-code contract it keeps
(:mod:`pecli.cli.stops` says how a command stops; :mod:`pecli.cli.tables` what table a command
takes and where it goes).

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

from pecli.cli.options import quiet_enabled
from pecli.cli.stops import (
    EXIT_BROKEN_PIPE,
    EXIT_ERROR,
    EXIT_HANGUP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    Stop,
    install_signal_handlers,
    on_broken_pipe,
    silence_stdout,
)
from pecli.errors import PecliInputError, spelled_as_options

if TYPE_CHECKING:
    from rich.console import Console


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
        console.on_broken_pipe = on_broken_pipe  # type: ignore[method-assign]
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
        """Whether stdout gets styles (:func:`terminal`)."""
        return terminal(sys.stdout)

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
        if hide or quiet_enabled() or not terminal(sys.stderr):  # Rich's console only for a bar
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
            if n < 0:  # another pass over the same rows (pecli.table.Progress)
                bar.reset(task)
            else:
                bar.advance(task, n)
            if not started and time.monotonic() - began > 1.0:
                bar.start()
                started = True

        try:
            yield advance
        finally:
            if started:
                bar.stop()


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
            on_broken_pipe()

    def invoke(self, ctx: click.Context) -> Any:
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.showwarning = _note  # the library's warnings are notes for people: stderr
                return super().invoke(ctx)
        except PecliInputError as exc:
            raise PecliError(str(exc)) from exc
        except BrokenPipeError:
            on_broken_pipe()

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
        handlers = install_signal_handlers()
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
        except Stop as stop:
            if stop.code == EXIT_BROKEN_PIPE:
                silence_stdout()
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
        on_broken_pipe()
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


def terminal(stream: Any) -> bool:
    """Whether Rich takes ``stream`` for a terminal (its ``Console.is_terminal``: TTY_COMPATIBLE
    0 or 1, a set FORCE_COLOR, else ``isatty()``), told without importing its console (15 ms of
    every command whose output is not a terminal).  Under IDLE or IPython, whose consoles Rich
    says are none whatever the variables, Rich's console itself is asked."""
    if "idlelib" in sys.modules or "IPython" in sys.modules:
        from rich.console import Console

        return bool(Console(file=stream).is_terminal)
    env = os.environ
    if env.get("TTY_COMPATIBLE", "") in ("0", "1"):
        return env["TTY_COMPATIBLE"] == "1"
    if "FORCE_COLOR" in env:
        return env["FORCE_COLOR"] != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


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
