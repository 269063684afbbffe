"""Where stdout is not a terminal, the small tables are written without Rich's console (start-up),
and the text is exactly what Rich prints there."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import Result

import pecli.views.console

VIEWS = [
    ("generate", "--len", "120", "--dim", "8"),  # the quick start: rows summarised
    ("generate", "--len", "5", "--dim", "3"),  # everything shown
    ("generate", "--len", "4", "--dim", "200"),  # columns cut around an ellipsis
    ("generate", "--kind", "alibi", "--heads", "4", "--len", "6", "--part", "bias"),  # a "head" label
    ("generate", "--preset", "llama", "--len", "40", "--part", "cos", "--rows", "3:9"),
    ("generate", "--len", "30", "--dim", "8", "--positions", "0:3,7"),
]


@pytest.mark.parametrize("args", VIEWS, ids=lambda a: " ".join(a[1:]))
def test_plain_text_is_what_rich_prints_there(
    args: tuple[str, ...], run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = run(*args)
    assert plain.exit_code == 0, plain.output
    monkeypatch.setattr(pecli.views.console, "plain_text", lambda renderables, width: None)  # Rich prints them
    rich = run(*args)
    assert rich.exit_code == 0
    assert plain.stdout == rich.stdout


def test_the_small_table_does_not_import_richs_console() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from pecli.cli import cli\n"
        "try:\n    cli.main(['generate', '--len', '120', '--dim', '8'])\n"
        "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "print('rich.console' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "False"
    assert out.stdout.startswith("sinusoidal (120, 8) float32")
