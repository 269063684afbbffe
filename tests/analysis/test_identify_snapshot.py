"""scripts/identify_snapshot.py, the harness that compares identify's whole answers across two
commits: its comparison names each table whose answer differs, and exits 1 then."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "identify_snapshot.py"


def compare(old: dict[str, object], new: dict[str, object], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    paths = tmp_path / "old.json", tmp_path / "new.json"
    for path, data in zip(paths, (old, new), strict=True):
        path.write_text(json.dumps(data), encoding="utf-8")
    args = [sys.executable, str(SCRIPT), "--compare", *map(str, paths)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("new", "said", "status"),
    [
        ({"a": {"verdict": "match"}, "b": {"verdict": "learned"}}, "2 and 2 tables; no answer differs", 0),
        ({"a": {"verdict": "close"}, "b": {"verdict": "learned"}}, "2 and 2 tables; 1 answer differs: a", 1),
        ({"a": {"verdict": "match"}}, "2 and 1 tables; 1 answer differs: b", 1),
        ({"a": {"verdict": "close"}, "c": {}}, "2 and 2 tables; 3 answers differ: a, b, c", 1),
    ],
)
def test_the_comparison_names_every_answer_that_differs(
    new: dict[str, object], said: str, status: int, tmp_path: Path
) -> None:
    done = compare({"a": {"verdict": "match"}, "b": {"verdict": "learned"}}, new, tmp_path)
    assert (done.stdout.strip(), done.returncode) == (said, status), done.stderr
