"""How a command stops: its exit statuses, and the signals (Ctrl-C, SIGTERM, SIGHUP) and closed
output pipes that end it early, unwinding like an exception so that no temporary file is left.

:class:`~pecli.cli.app.PecliGroup` installs the handlers and turns a :class:`Stop` into the status.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, NoReturn

EXIT_OK, EXIT_DIFFERENT, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 0, 1, 2, 130, 141
#: SIGHUP (the terminal closed, ``ssh`` dropped): 128 + 1, as a shell reports a process it killed.
EXIT_HANGUP = 129
#: SIGTERM (``kill``, a job scheduler's stop): 128 + 15, likewise.
EXIT_TERMINATED = 143


class Stop(BaseException):
    """Unwinds the command (removing temporary files) and sets the exit status.

    A BaseException that Click does not intercept: Click would print a blank line for Ctrl-C and
    exit 1 on a closed pipe, and 1 means "tables differ" here.
    """

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(code, message)
        self.code, self.message = code, message


def on_signal(signum: int, frame: Any) -> None:
    from pecli.interruption import abandon_writes, deferring, settled

    if settled():  # the output is in place: nothing to stop, and the status must say so (0)
        return
    if signum == getattr(signal, "SIGHUP", None):
        stop = Stop(EXIT_HANGUP, "Interrupted (hang-up): nothing was written.")
    elif signum == signal.SIGTERM:
        stop = Stop(EXIT_TERMINATED, "Interrupted: nothing was written.")
    else:
        stop = Stop(EXIT_INTERRUPTED, "Interrupted: nothing was written.")
    # Raised wherever the program is; if a library's callback swallows it, the write it
    # interrupted still fails before its rename, and main() exits with this status.  Inside an
    # import that runs Python from C++ (torch's), it waits for the import to end (Deferred).
    abandon_writes(stop)
    if not deferring():
        raise stop


def on_broken_pipe() -> NoReturn:
    """The reader of stdout went away (e.g. `| head`): stop quietly with SIGPIPE's status, like cat.

    A Stop, not a BrokenPipeError: an ``except OSError`` on the way out cannot turn it into an error.
    """
    raise Stop(EXIT_BROKEN_PIPE)


def install_signal_handlers() -> dict[int, Any]:
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
            replaced[signum] = signal.signal(signum, on_signal)
    return replaced


def silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
