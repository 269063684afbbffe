"""identify on tables wider than its column screen (issue 44): candidates scored on 1024 columns
spread over the table, the winner proved on every value.  The tables are a user's own NumPy
code, the same bits on every CPU (float64 formulas rounded once, float32 steps via ``f32_step``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pecli.identification import SCREEN_COLUMNS, identify
from tests.helpers import f32_step


def test_a_wide_paper_sinusoid_is_named_after_a_screen_of_its_columns() -> None:
    n, d = 24, 3000
    p = np.arange(n, dtype=np.float64)[:, None]
    angle = p / np.power(10000.0, np.arange(0, d, 2) / d)
    table = np.empty((n, d))
    table[:, 0::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    found = identify(table.astype(np.float32))
    assert d > SCREEN_COLUMNS and f"screened on {SCREEN_COLUMNS} of its {d} columns" in found.sample
    assert found.verdict == "match" and found.best is not None and found.best.recipe.kind == "sinusoidal"
    params = found.best.recipe.params()
    assert (params["base"], params["layout"], params["start"]) == (10000.0, "interleaved", 0)
    assert found.best.verification is not None and found.best.verification.holds


def test_a_wide_hf_rope_cos_cache_is_named_after_a_screen_of_its_columns() -> None:
    n, d = 40, 2304
    # transformers' default RoPE in float32 steps: 1 / base ** (arange(0, d, 2) / d), t * inv, cat, cos
    exponent = f32_step(np.divide, np.arange(0, d, 2).astype(np.float32), np.float32(d))
    inv = f32_step(np.divide, np.float32(1.0), f32_step(np.power, np.float32(10000.0), exponent))
    freqs = f32_step(np.multiply, np.arange(n, dtype=np.float32)[:, None], inv[None, :])
    table = f32_step(np.cos, np.concatenate([freqs, freqs], axis=1))
    found = identify(table)
    assert f"screened on {SCREEN_COLUMNS} of its {d} columns" in found.sample
    assert found.verdict == "match" and found.best is not None and found.best.recipe.kind == "rope"
    params = found.best.recipe.params()
    assert (params["base"], params["layout"], params["part"]) == (10000.0, "half", "cos")
    assert found.best.verification is not None and found.best.verification.holds


def test_a_wide_table_of_a_kind_without_columns_at_is_screened_on_one_whole_row_a_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kind that cannot compute a few columns alone (pecli 0.2's learned draw, a PCG64 stream
    a row) builds one whole row of each screen span, rows 0 and n − 8, not 16 (16 rows of a
    65536-wide table: 16 ms a candidate); a candidate that passes is scored on the whole sample
    and proved, as before."""
    from pecli.kinds.learned import Learned

    recipe = Learned(64, 2048, std=0.02, seed=3, rng="pcg64")
    table = recipe.build()
    asked: list[tuple[int, int]] = []
    real = Learned.rows

    def rows(self: Learned, a: int, b: int) -> np.ndarray:
        asked.append((a, b))
        return real(self, a, b)

    monkeypatch.setattr(Learned, "rows", rows)
    found = identify(table)
    assert found.verdict == "match" and found.best is not None and found.best.recipe == recipe
    assert "(or whole, on rows 0 and 56)" in found.sample
    assert (0, 1) in asked and (56, 57) in asked and (0, 8) not in asked and (56, 64) not in asked


@pytest.mark.parametrize("pairs", [1, 63, 64, 65, 65600, 131200])
def test_the_circle_check_reads_every_pair_a_piece_at_a_time(pairs: int) -> None:
    """``on_circle`` checks the first pairs first, then the rest in pieces: a pair off the circle
    anywhere, the edges of the pieces included, is found, and pairs all on it pass."""
    from pecli.fitting import on_circle

    angle = np.random.default_rng(pairs).uniform(0, 2 * np.pi, size=(2, pairs))
    rows = np.concatenate([np.sin(angle), np.cos(angle)], axis=1)
    sin_cols, cos_cols = np.arange(pairs), np.arange(pairs, 2 * pairs)
    assert on_circle(rows, sin_cols, cos_cols)
    for k in {0, 63, 64, pairs // 2, 65599, 65600, pairs - 1} & set(range(pairs)):
        off = rows.copy()
        off[1, k], off[1, pairs + k] = 0.6, 0.6  # radius² 0.72
        assert not on_circle(off, sin_cols, cos_cols), k


def _paper_sinusoid(n: int, d: int) -> np.ndarray:
    p = np.arange(n, dtype=np.float64)[:, None]
    angle = p / np.power(10000.0, np.arange(0, d, 2) / d)
    table = np.empty((n, d))
    table[:, 0::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    return table.astype(np.float32)


def test_a_table_wider_than_the_sample_columns_is_scored_on_them_and_proved_on_every_value() -> None:
    """Past SAMPLE_COLUMNS, candidates are scored on that many columns of the sampled rows; the
    one reported is still compared with every value, and the words say which columns."""
    from pecli.identification import SAMPLE_COLUMNS

    n, d = 24, SAMPLE_COLUMNS + 1904
    found = identify(_paper_sinusoid(n, d))
    assert f"all {n} rows at {SAMPLE_COLUMNS} of its {d} columns" in found.sample
    assert found.verdict == "match" and found.best is not None and found.best.recipe.kind == "sinusoidal"
    assert found.best.verification is not None and found.best.verification.holds
    assert found.best.verification.rows == n


def test_a_column_off_outside_the_sampled_columns_is_caught_by_the_proof() -> None:
    """A value changed in a column neither the screen nor the sample reads: the sampled score is
    a match, but the proof reads every value, so no MATCH is claimed."""
    from pecli.identification import SAMPLE_COLUMNS

    n, d = 24, SAMPLE_COLUMNS + 1904
    table = _paper_sinusoid(n, d)
    read = set(np.linspace(0, d - 1, SAMPLE_COLUMNS).round().astype(int).tolist())
    read |= set(np.linspace(0, d - 1, SCREEN_COLUMNS).round().astype(int).tolist())
    col = next(j for j in range(d // 2, d) if j not in read)
    table[n - 1, col] += 0.5
    found = identify(table)
    assert found.verdict != "match"
    assert any("matched the sampled rows but not the whole table" in note for note in found.notes)


def test_the_nearest_candidates_say_whether_a_score_rests_on_the_screen_or_the_sample(tmp_path: Path) -> None:
    """A wide random table's candidates fail the screen and keep its numbers: the table of nearest
    candidates says "screen" beside each, --json ``scored_on``; a narrow table's are "sample"."""
    import json

    from click.testing import CliRunner

    from pecli.cli import cli

    rng = np.random.default_rng(7)
    for d, on in ((2 * SCREEN_COLUMNS, "screen"), (64, "sample")):
        path = tmp_path / f"t{d}.npy"
        np.save(path, (rng.standard_normal((1, d)) * 0.5).astype(np.float32))
        shown = CliRunner().invoke(cli, ["identify", str(path)], terminal_width=120)
        assert shown.exit_code == 0 and "nearest candidates" in shown.stdout
        rows = shown.stdout.split("nearest candidates")[1].splitlines()
        assert any(f" {on} " in row for row in rows[3:]), shown.stdout
        data = json.loads(CliRunner().invoke(cli, ["identify", "--json", str(path)]).stdout)
        assert data["nearest"] and {c["scored_on"] for c in data["nearest"]} == {on}


def test_the_proof_s_progress_starts_again_for_each_pass_instead_of_passing_100_percent() -> None:
    """identify may read the table twice or more (a stage of bit-exact candidates, then the
    others); each pass after the first starts the count again with a negative number, so the
    rows counted never exceed the table's (the bar ran to 200 %)."""
    n, d = 300, 64
    exponent = f32_step(np.divide, np.arange(0, d, 2).astype(np.float32), np.float32(d))
    inv = f32_step(np.divide, np.float32(1.0), f32_step(np.power, np.float32(10000.0), exponent))
    freqs = f32_step(np.multiply, np.arange(n, dtype=np.float32)[:, None], inv[None, :])
    counts: list[int] = []
    found = identify(f32_step(np.cos, np.concatenate([freqs, freqs], axis=1)), progress=counts.append)
    assert found.verdict == "match"
    running = np.cumsum(counts)
    assert running.min() >= 0 and running.max() <= n and running[-1] == n
    passes = [c for c in counts if c < 0]
    assert passes and all(c == -n for c in passes)  # this table takes two passes: the test can fail
