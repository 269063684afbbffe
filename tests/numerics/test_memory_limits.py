"""Memory limits: work that cannot fit is refused before it starts, readers stay within a few
times their file, and conversions that would overflow are refused before anything is written.

Every case here is fast and allocates nothing big: the memory pecli believes available is
replaced (``pecli.resources.available_memory``) or capped (``PECLI_MEMORY_LIMIT``, ``ulimit -v``
in a child process), and the widths that would need terabytes are refused by arithmetic.
Each refusal is the bad-input contract: exit 2, one ``Error:`` line naming the problem and the
fix, nothing on stdout, no traceback, the directory unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pecli
from pecli import Sinusoidal, TableTooLargeError
from pecli.errors import FormatError, PecliInputError
from pecli.formats import text as text_format
from pecli.resources import available_memory, memory_limit
from pecli.table import Table

MB = 1 << 20
#: What the patched machine has available: small enough that a 60,000-wide sinusoid row
#: (~170 MB of rotation-kernel scratch) is refused, large enough for everything moderate.
LIMIT = 100 * MB


@pytest.fixture
def small_machine(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr("pecli.resources.available_memory", lambda: LIMIT)
    return LIMIT


def snapshot(d: Path) -> dict[str, str]:
    """Each file's hash (a file over 64 MB, a sparse giant: its size, blocks and mtime)."""

    def mark(p: Path) -> str:
        st = p.stat()
        if st.st_size > 64 * MB:
            return f"{st.st_size}/{st.st_blocks}/{st.st_mtime_ns}"
        return hashlib.sha256(p.read_bytes()).hexdigest()

    return {str(p.relative_to(d)): mark(p) for p in sorted(d.rglob("*"))}


def refused(run, d: Path, args: list[str], *needles: str) -> str:
    before = snapshot(d)
    r = run(*args)
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert r.stdout == ""
    assert r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr
    assert snapshot(d) == before
    return str(r.stderr)


# -- 1. a width whose rows cannot fit is refused before any work --------------------------------
WIDE = "60000"
#: Rows enough to be rotated (more than the ``B + G`` rows its rotations cost): a table of 8 rows
#: is computed value by value, and 8 rows of 60000 fit in the patched machine.
LONG = "1000"
ROW_REFUSED = ("computing one row of 60000 float32 values", "but only 104.9 MB of memory is available", "--dim")


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "--len", LONG, "--dim", WIDE],
        ["generate", "--len", LONG, "--dim", WIDE, "-o", "t.npy"],
        ["generate", "--len", LONG, "--dim", WIDE, "-o", "-", "--to", "csv"],
        ["export", "--len", LONG, "--dim", WIDE, "-o", "t.csv"],
        ["export", f"sinusoidal:len={LONG},dim={WIDE}", "-o", "t.h5"],
        ["inspect", "--len", LONG, "--dim", WIDE],
        ["inspect", "--len", LONG, "--dim", WIDE, "--pos", "1"],
        ["inspect", "--grid", "4x4", "--dim", "800000", "--json"],
        ["identify", f"sinusoidal:len={LONG},dim={WIDE}"],
        ["analyze", f"sinusoidal:len={LONG},dim={WIDE}"],
        ["diff", f"sinusoidal:len={LONG},dim={WIDE}", f"sinusoidal:len={LONG},dim={WIDE},base=500"],
        ["plot", f"sinusoidal:len={LONG},dim={WIDE}", "-o", "p.png"],
    ],
    ids=lambda a: " ".join(a)[:50],
)
def test_a_row_that_cannot_fit_is_refused_by_every_command(
    run, small_machine: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("unchanged")
    message = refused(run, tmp_path, args, "needs", "of float64 scratch", "use a smaller --dim")
    if "--grid" not in args:
        assert all(n in message for n in ROW_REFUSED), message


@pytest.mark.parametrize("dim", [10**9, 10**12])
def test_absurd_widths_are_refused_by_arithmetic(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dim: int
) -> None:
    """The real machine's memory, no patch: a billion float32 columns need 84 GB (the row, its
    frequencies and the kernel's pieces), a trillion 84 TB."""
    monkeypatch.chdir(tmp_path)
    for args in (
        ["generate", "--len", "8", "--dim", str(dim)],
        ["generate", "--len", "8", "--dim", str(dim), "-o", "t.npy"],
        ["inspect", "--len", "8", "--dim", str(dim), "--pos", "1"],
        ["inspect", "--grid", "4x4", "--dim", str(dim)],
    ):
        message = refused(run, tmp_path, args, f"computing one row of {dim} float32 values", "needs")
        assert message.rstrip().endswith("use a smaller --dim"), message


def peak_scratch(recipe: pecli.recipe.Recipe, r0: int, r1: int) -> int:
    """Bytes ``recipe.rows(r0, r1)`` allocated at its peak beyond the rows it returned, measured
    by tracemalloc (NumPy's allocations are traced) from cold caches."""
    import gc
    import tracemalloc

    from pecli.kernels import exact, rotation

    for cache in (exact._frequencies, rotation._z0_cached, rotation._steps_cached):
        cache.cache_clear()
    gc.collect()
    tracemalloc.start()
    try:
        out = recipe.rows(r0, r1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - out.nbytes


@pytest.mark.parametrize(
    ("recipe", "rows"),
    [
        (Sinusoidal(100, 65536), 1),  # rotated: the cached rotations' fixed cost per frequency
        (Sinusoidal(4, 65536), 1),  # too short to rotate: the exact kernel, value by value
        (Sinusoidal(2000, 65536), 2000),
        (Sinusoidal(5000, 8192), 5000),
        (Sinusoidal(3, 70_000), 3),  # wider than ROTATE_MAX_FREQUENCIES: exact, in column pieces
        # A row wider than a block (tracemalloc slows the 300,000 frequencies' decimal loop: 20 s each).
        pytest.param(Sinusoidal(3, 600_000, dtype="float64"), 3, marks=pytest.mark.slow),
        pytest.param(Sinusoidal(3, 600_000, dtype="bfloat16"), 3, marks=pytest.mark.slow),
        (Sinusoidal(20_000, 3000, dtype="float16"), 20_000),
    ],
    ids=lambda v: f"{v.shape[1]}x{v.dtype}" if isinstance(v, Sinusoidal) else str(v),
)
def test_the_row_estimate_is_above_the_measured_scratch(recipe: Sinusoidal, rows: int) -> None:
    """The estimate a refusal rests on stays above what building the rows really allocates."""
    assert peak_scratch(recipe, 0, rows) <= recipe.scratch_bytes(rows)


@pytest.mark.slow  # 300,000 frequencies under tracemalloc: 20 s
def test_a_wide_row_costs_memory_in_pieces_not_in_its_width() -> None:
    """A row of 300,000 frequencies is computed in column pieces: its scratch is the frequencies
    (160 B each) and a block per thread, not ~100 float64 temporaries of the whole row (the exact
    kernel took 4.1 kB a column, and one row of 5·10⁶ float32 values was refused for 41.8 GB)."""
    recipe = Sinusoidal(2, 600_000)
    assert peak_scratch(recipe, 0, 1) < 100 * 600_000
    assert recipe.scratch_bytes(1) < 200 * 600_000


def test_the_table_streams_in_small_blocks() -> None:
    # Narrow computed tables stream in ~4 MB blocks, one being computed by each thread and one
    # being written (issue 25), with a few MB of scratch.
    from pecli.kernels.threads import set_threads

    table = Table.from_recipe(Sinusoidal(100_000, 512))
    try:
        set_threads(2)
        assert table.stream_rows() == 3 * 4 * MB // (512 * 4)
        assert table.work_bytes(table.stream_rows()) < 32 * MB
    finally:
        set_threads(None)


def test_recipe_rows_and_tables_refuse_before_allocating(small_machine: int) -> None:
    recipe = Sinusoidal(1000, 60_000)
    with pytest.raises(TableTooLargeError, match="computing one row of 60000 float32 values"):
        recipe.rows(0, 1)  # identify's candidates and diff's explanations call a recipe directly
    with pytest.raises(TableTooLargeError, match="use a smaller --dim"):
        Table.from_recipe(recipe)
    with pytest.raises(TableTooLargeError, match="use a smaller --len"):
        pecli.Alibi(8, length=1_000_000, part="bias", compute="exact").rows(0, 8)
    with pytest.raises(TableTooLargeError, match="write it to a file with -o instead"):
        Sinusoidal(100_000, 512).build()
    assert Sinusoidal(8, 1000).rows(0, 8).shape == (8, 1000)  # small work never asks


def test_a_short_wide_table_is_computed_value_by_value_within_the_limit(small_machine: int) -> None:
    """8 rows of 60000 (refused before: the rotations alone, ~170 MB, outgrew the machine) are
    too few to pay for rotating: the exact kernel computes each value, rounded once, in column
    pieces that fit, and every row range is the whole table's bits."""
    from pecli.kernels.exact import frequencies, sincos

    recipe = Sinusoidal(8, 60_000)
    assert recipe.scratch_bytes(8) < LIMIT  # and rows() checks it (refused above at 1000 rows)
    table = recipe.rows(0, 8)
    _, w_hi, w_lo = frequencies(10000.0, 1.0, recipe.exponents())
    s, c = sincos(np.arange(8, dtype=np.float64), w_hi, w_lo)  # the exact kernel, float64
    assert np.array_equal(table[:, 0::2], s.astype(np.float32)) and np.array_equal(table[:, 1::2], c.astype(np.float32))
    assert np.array_equal(recipe.rows(5, 7), table[5:7])


@pytest.mark.slow  # big table: 256 MB written and read back
def test_a_long_table_of_moderate_width_still_streams(run, small_machine: int, tmp_path: Path) -> None:
    """256 MB of float32 under a 100 MB limit: written in blocks, shown as a summary."""
    out = tmp_path / "long.npy"
    r = run("generate", "--len", "1000000", "--dim", "64", "-o", out, "-q")
    assert r.exit_code == 0, r.output
    assert np.load(out, mmap_mode="r").shape == (1_000_000, 64)
    r = run("generate", "--len", "1000000", "--dim", "64")
    assert r.exit_code == 0, r.output
    r = run("inspect", out, "--pos", "999999")
    assert r.exit_code == 0, r.output
    r = run("generate", "--len", "1000000", "--dim", "64", "--rows", "0:5000")
    assert r.exit_code == 0, r.output  # 5000 rows: 1.3 MB


def test_too_many_rows_at_once_names_rows_not_width(run, small_machine: int, tmp_path: Path) -> None:
    refused(run, tmp_path, ["generate", "--len", "100000", "--dim", "4096", "--rows", "0:9000"], "9000 rows", "--rows")


def test_statistics_blocks_are_checked(
    run, small_machine: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "wide.npy", np.zeros((4, 3_000_000), np.float32))  # 12 MB rows, 108 MB of statistics work
    refused(run, tmp_path, ["inspect", "wide.npy"], "one row of 3000000 float32 values of wide.npy", "--rows or --pos")
    r = run("inspect", "wide.npy", "--pos", "3", "--cols", "0:4")
    assert r.exit_code == 0, r.output


def test_file_rows_that_cannot_fit_are_refused(small_machine: int, tmp_path: Path) -> None:
    np.save(tmp_path / "t.npy", np.zeros((64, 1_000_000), np.float32))
    with pecli.open_table(tmp_path / "t.npy") as table:
        with pytest.raises(TableTooLargeError, match=r"reading rows 0\.\.64 of .*t\.npy \(64 × 1000000 float32\)"):
            table.rows(0, 64)
        assert table.rows(0, 4).shape == (4, 1_000_000)


def test_the_limit_can_be_set_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for text, value in (("1000", 1000), ("512M", 512 * MB), ("2G", 2 << 30), ("1.5 GB", 3 << 29), ("64k", 64 << 10)):
        monkeypatch.setenv("PECLI_MEMORY_LIMIT", text)
        assert memory_limit() == value
        assert available_memory() <= value
    for bad in ("lots", "-1", "nan", "1X"):
        monkeypatch.setenv("PECLI_MEMORY_LIMIT", bad)
        with pytest.raises(PecliInputError, match="PECLI_MEMORY_LIMIT"):
            memory_limit()
    monkeypatch.delenv("PECLI_MEMORY_LIMIT")
    assert memory_limit() is None


def _child(code: str, cap_bytes: int | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    def cap() -> None:
        if cap_bytes is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=cap,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")
@pytest.mark.parametrize("dim", ["100000000", "1000000000", "1000000000000"])
def test_an_address_space_cap_counts_as_the_memory_available(dim: str, tmp_path: Path) -> None:
    """Under ``ulimit -v`` 3 GiB: a clean refusal (exit 2), never a MemoryError traceback."""
    code = f"""
        import sys
        from pecli.cli import cli
        sys.argv = ["pecli", "generate", "--len", "8", "--dim", "{dim}", "-o", r"{tmp_path / "t.npy"}"]
        cli.main(prog_name="pecli")
    """
    r = _child(code, cap_bytes=3 << 30)
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    assert r.stderr.startswith("Error: computing one row of") and r.stderr.count("\n") == 1, r.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux's")
def test_a_wide_table_that_fits_under_the_address_space_cap_is_written(tmp_path: Path) -> None:
    """8 rows of 500,000 float32 values need ~100 MB: written under a 3 GiB cap (the estimate of
    the old kernel, 4 GB of scratch, refused them)."""
    out = tmp_path / "t.npy"
    code = f"""
        import sys
        from pecli.cli import cli
        sys.argv = ["pecli", "generate", "--len", "8", "--dim", "500000", "-o", r"{out}", "-q"]
        cli.main(prog_name="pecli")
    """
    r = _child(code, cap_bytes=3 << 30)
    assert r.returncode == 0, r.stderr
    expected = Sinusoidal(8, 500_000).rows(5, 6)[0]
    assert np.array_equal(np.load(out)[5], expected)


def test_the_environment_limit_reaches_the_command_line(tmp_path: Path) -> None:
    code = """
        import sys
        from pecli.cli import cli
        sys.argv = ["pecli", "generate", "--len", "1000", "--dim", "30000"]
        cli.main(prog_name="pecli")
    """
    r = _child(code, env={"PECLI_MEMORY_LIMIT": "64M"})
    assert r.returncode == 2, r.stderr
    assert "but only 67.1 MB of memory is available: use a smaller --dim" in r.stderr, r.stderr


# -- 2. CSV/TSV: streamed, at most a few times the file, every rule kept ---------------------------
def _write_csv(path: Path, rows: int, dim: int, sidecar: bool = True) -> None:
    """Random float32 values written by pecli (a recipe this wide would cost more than the file)."""
    values = np.random.default_rng(rows * dim).standard_normal((rows, dim)).astype(np.float32)
    np.save(path.with_suffix(".npy"), values)
    with pecli.open_table(path.with_suffix(".npy")) as table:
        pecli.write_table(table, path, sidecar=sidecar)
    path.with_suffix(".npy").unlink()


def _peak(code: str) -> dict[str, float]:
    """Run ``code`` in a child that reports its peak RSS before and after (ru_maxrss, bytes)."""
    head = "import resource, json, numpy, pecli\nbase = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
    tail = "\nprint(json.dumps({'base': base, 'peak': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))\n"
    r = _child(head + textwrap.dedent(code) + tail)
    assert r.returncode == 0, r.stderr
    result: dict[str, float] = json.loads(r.stdout.splitlines()[-1])
    return result


@pytest.mark.skipif(sys.platform == "darwin", reason="ru_maxrss is in kB on Linux only")
@pytest.mark.slow  # big table: a CSV of 2 M values per case, read in a subprocess
@pytest.mark.parametrize("shape", [(2048, 1024), (1, 2_000_000)], ids=["2048x1024", "one-line"])
def test_reading_a_csv_takes_at_most_four_times_the_file(tmp_path: Path, shape: tuple[int, int]) -> None:
    """Was 6.6x for an 8192x1024 float32 CSV (10x without its sidecar), 33x for a one-line CSV."""
    path = tmp_path / "t.csv"
    _write_csv(path, *shape)
    size = path.stat().st_size
    assert size > 16 * MB
    m = _peak(f"""
        with pecli.open_table(r"{path}") as t:
            assert t.shape == {shape}
    """)
    assert m["peak"] - m["base"] <= 4 * size, (m, size)


def test_the_reader_checks_its_real_needs(small_machine: int, tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    _write_csv(path, 4096, 512, sidecar=False)  # 2M values: 25 MB of values, 24 MB of text
    with pytest.raises(TableTooLargeError, match=r"reading .*t\.csv \(up to 409\d rows of 512 values, 2\d\.\d MB\)"):
        with pecli.open_table(path):
            pass


CASES: list[tuple[bytes, str | list[list[float]]]] = [
    (b"d0,d1\n1,2\n3,4\n", [[1, 2], [3, 4]]),
    (b"d0,d1\r\n1,2\r\n3,4\r\n\r\n  \r\n", [[1, 2], [3, 4]]),
    (b"d0,d1\r1,2\r3,4", [[1, 2], [3, 4]]),
    (b"1,2\n3,4", [[1, 2], [3, 4]]),
    (b"\xef\xbb\xbfd0,d1\n 1 , nan\n-inf,1_0\n", [[1, float("nan")], [float("-inf"), 10]]),
    (b"d0,d1\n1,2\n3\n", "line 3 has 1 values, expected 2 like the header"),
    (b"d0,d1\n1,2\n3,four\n", "line 3 has a non-numeric value 'four'"),
    (b"d0,d1\n1,2\n3,4,x\n", "line 3 has 3 values, expected 2"),
    (b"d0,d1\n1,2\n\n3,4\n", "line 3 is blank: remove blank lines between rows"),
    (b"d0,d1\n1,2\n \n\x0c3,4\n", "line 3 is blank"),
    (b"d0,d1\n", "has a header but no rows of numbers"),
    (b" \n\n ", "is empty: expected a header line"),
    (b"d0,d1\n1,2\n\xff\n", "is not a text CSV file (byte 10 is not UTF-8)"),
    (b"d0,d1\n" + b"1," * 3000 + b"2\n", "line 2 has 3001 values, expected 2"),
    (b"d0\n" + b"0.5\n" * 3000, [[0.5]] * 3000),
    (
        b",".join(b"d%d" % j for j in range(2000)) + b"\n" + b",".join(b"%d" % j for j in range(2000)) + b"\n",
        [list(range(2000))],
    ),
    (
        b",".join(b"%d" % j for j in range(2000)) + b"\n" + b",".join(b"x" * 3 for j in range(2000)) + b"\n",
        "line 2 has a non-numeric value 'xxx'",
    ),
]


@pytest.mark.parametrize("piece", [1, 3, 17, 1 << 21])
@pytest.mark.parametrize(("data", "expected"), CASES, ids=[repr(c[0][:24]) for c in CASES])
def test_csv_rules_hold_whatever_the_piece_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int, data: bytes, expected: str | list[list[float]]
) -> None:
    monkeypatch.setattr(text_format, "_PIECE_BYTES", piece)
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    if isinstance(expected, str):
        with pytest.raises(FormatError) as err:
            with pecli.open_table(path):
                pass
        assert expected in str(err.value)
        return
    with pecli.open_table(path) as t:
        np.testing.assert_array_equal(t.rows(0, t.shape[0]), np.array(expected))


@pytest.mark.parametrize("piece", [5, 1 << 21])
def test_tsv_line_of_tabs_is_blank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int) -> None:
    monkeypatch.setattr(text_format, "_PIECE_BYTES", piece)
    path = tmp_path / "t.tsv"
    path.write_bytes(b"d0\td1\n1\t2\n\t\t\n3\t4\n")
    with pytest.raises(FormatError, match="line 3 is blank"):
        with pecli.open_table(path):
            pass
    path.write_bytes(b"d0\td1\n1\t2\n\t\t\n")  # trailing: harmless
    with pecli.open_table(path) as t:
        assert t.shape == (1, 2)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("piece", [7, 1 << 21])
def test_csv_round_trip_is_bit_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: str, piece: int) -> None:
    monkeypatch.setattr(text_format, "_PIECE_BYTES", piece)
    table = Table.from_recipe(Sinusoidal(40, 24, dtype=dtype, start=123456))
    for name in ("t.csv", "t.tsv"):
        pecli.write_table(table, tmp_path / name)
        with pecli.open_table(tmp_path / name) as back:
            assert back.dtype.name == dtype
            assert back.rows(0, 40).tobytes() == table.rows(0, 40).tobytes()


def test_csv_without_sidecar_is_read_as_float32_when_every_number_is_one(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("d0,d1\n0.5,0.25\n1,-2\n")
    with pecli.open_table(path) as t:
        assert t.dtype.name == "float32" and "read as" in t.info
    path.write_text("d0,d1\n0.1,0.25\n1,-2\n")  # 0.1 is no float32
    with pecli.open_table(path) as t:
        assert t.dtype.name == "float64" and "read as" not in t.info


# -- 3. a conversion that would overflow is refused, nothing written ------------------------------
@pytest.mark.parametrize("output", [["-o", "t16.npy"], ["-o", "t16.csv"], ["-o", "-", "--to", "csv"]])
def test_export_refuses_values_beyond_the_new_dtype(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.csv").write_text("d0,d1\n1,2\n3,1e300\n-70000,4\n")
    refused(
        run, tmp_path, ["export", "big.csv", "--dtype", "float16", *output], "row 1 holds 1e+300", "largest value 65504"
    )


def test_export_narrowing_edges(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "edge.csv").write_text("d0,d1\n65504,-65519\ninf,nan\n")  # -65519 rounds to -65504
    r = run("export", "edge.csv", "--dtype", "float16", "-o", "-", "--to", "csv")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1:] == ["65504,-65504", "inf,nan"]
    assert "RuntimeWarning" not in r.stderr and "overflow" not in r.stderr
    (tmp_path / "over.csv").write_text("d0,d1\n1,-65520\n")
    refused(run, tmp_path, ["export", "over.csv", "--dtype", "float16", "-o", "o.npy"], "-65520", "float16")
    np.save(tmp_path / "wide.npy", np.array([[1.0, 3e38], [4e38, -1e300]]))
    refused(
        run,
        tmp_path,
        ["export", "wide.npy", "--dtype", "float32", "-o", "o.npy"],
        "row 1 holds -1e+300, beyond float32's largest value 3.40282e+38",
    )


def test_cast_refuses_overflow_in_the_library(tmp_path: Path) -> None:
    np.save(tmp_path / "t.npy", np.array([[1.0, 2.0], [1e10, 0.0]]))
    with pecli.open_table(tmp_path / "t.npy") as table:
        half = table.converted("float16")
        assert half.rows(0, 1).tolist() == [[1.0, 2.0]]
        with pytest.raises(FormatError, match="row 1 holds 1e\\+10"):
            half.rows(0, 2)


def test_the_fingerprint_of_a_wide_table_reads_a_block_at_a_time() -> None:
    """An ALiBi bias table has few rows and wide ones: its 64 fingerprint rows were the whole table,
    read at once (1.1 GB peak writing 64 heads × 2M keys, against 96 MB now).  Measured with
    tracemalloc, which sees NumPy's buffers; the fingerprint itself is unchanged (same bytes hashed)."""
    import tracemalloc

    from pecli.formats.metadata import fingerprint
    from pecli.kinds.alibi import Alibi

    table = Table.from_recipe(Alibi(heads=64, length=1 << 18, part="bias"))  # 64 MB
    tracemalloc.start()
    try:
        fingerprint(table)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20, f"{peak / 2**20:.0f} MB"


# -- 3. tables that declare far more than they store -----------------------------------------------
def _sparse_npy(path: Path, rows: int, dim: int) -> Path:
    with open(path, "wb") as fp:
        np.lib.format.write_array_header_1_0(fp, {"descr": "<f4", "fortran_order": False, "shape": (rows, dim)})
        fp.truncate(fp.tell() + rows * dim * 4)
    if path.stat().st_blocks * 512 >= path.stat().st_size:
        pytest.skip("this file system does not keep sparse files")
    return path


def _empty_h5(path: Path, rows: int, dim: int) -> Path:
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "w") as f:
        f.create_dataset("pe", shape=(rows, dim), dtype="f4", chunks=(1024, dim))
    return path


@pytest.mark.parametrize(
    ("make", "needle"), [(_sparse_npy, "the file's holes read as zeros"), (_empty_h5, "unwritten chunks")]
)
def test_diff_of_a_table_that_stores_almost_nothing_is_refused_at_once(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make, needle: str
) -> None:
    """A 1.6 TB sparse .npy (4 kB on disk) and an HDF5 file declaring 10¹² rows: diff read them
    for hours (the .npy's mapped pages reached 13 GB of RSS in a minute).  Now one line, at once;
    inspect shows the rows and skips the statistics."""
    monkeypatch.chdir(tmp_path)
    big = make(tmp_path / ("big.npy" if make is _sparse_npy else "big.h5"), 10**11, 4)
    message = refused(run, tmp_path, ["diff", big.name, "sinusoidal:len=100000000000,dim=4"], needle, "declared")
    assert "diff would read every declared value" in message
    refused(run, tmp_path, ["diff", big.name, big.name], needle)
    r = run("inspect", big.name)
    assert r.exit_code == 0, r.output
    assert "statistics skipped: 1.6 TB declared" in r.stdout and needle in r.stdout


def test_available_memory_is_known_without_proc_meminfo(monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS has no /proc/meminfo and no SC_AVPHYS_PAGES: the count comes from psutil there (a
    dependency on every platform but Linux), and without either it is unknown, never an error."""
    import sys
    import types

    from pecli import resources

    real = resources._first_number
    monkeypatch.setattr(
        resources, "_first_number", lambda path, prefix: None if path == "/proc/meminfo" else real(path, prefix)
    )
    fake = types.ModuleType("psutil")
    fake.virtual_memory = lambda: types.SimpleNamespace(available=123_456_789)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "psutil", fake)
    assert resources.system_available_memory() == 123_456_789

    monkeypatch.setitem(sys.modules, "psutil", None)  # not installed

    def no_sysconf(name: str) -> int:
        raise ValueError(f"unrecognized configuration name {name!r}")  # as macOS says for SC_AVPHYS_PAGES

    monkeypatch.setattr(resources.os, "sysconf", no_sysconf)
    assert resources.system_available_memory() is None


def test_on_linux_the_count_is_memavailable() -> None:
    from pecli import resources

    if not os.path.exists("/proc/meminfo"):
        pytest.skip("no /proc/meminfo")
    with open("/proc/meminfo", encoding="ascii") as fp:
        kib = next(int(line.split()[1]) for line in fp if line.startswith("MemAvailable:"))
    # Read twice a few microseconds apart: the machine's other processes move it a little.
    assert abs(resources.system_available_memory() - kib * 1024) < 256 << 20
