from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pecli.cli import cli
from tests.helpers import WIDTH


@pytest.fixture
def run() -> Callable[..., Result]:
    """Invoke the CLI like a user would: fixed 80-column terminal, no colour."""
    runner = CliRunner()

    def invoke(*args: str | Path, input: bytes | str | None = None) -> Result:
        return runner.invoke(
            cli, [str(a) for a in args], input=input, env={"COLUMNS": WIDTH, "NO_COLOR": "1", "TERM": "dumb"}
        )

    return invoke


def pytest_configure(config: pytest.Config) -> None:
    """Signals as an interactive shell leaves them, whoever started the run: a non-interactive shell's
    ``cmd &`` starts it with SIGINT ignored and ``nohup`` with SIGHUP ignored, and the subprocesses
    the signal tests start inherit an ignored signal (pecli keeps it ignored, as it should), so
    "a SIGINT stops the write" would fail for how CI was launched, not for pecli."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGHUP, signal.SIGTERM):
        if signal.getsignal(signum) is signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
