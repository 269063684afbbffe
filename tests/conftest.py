from __future__ import annotations

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
