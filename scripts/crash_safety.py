"""SIGKILL pecli while it writes: the destination is the previous file, the complete new one, or absent.

What it proves: ``pecli generate|export … -o DEST`` never leaves a truncated or partial DEST, even
when the process dies by SIGKILL (no handler runs, nothing is cleaned up) at a random moment.  Each
run starts one command and kills it at a seeded random moment: nine runs in ten at a random point
of the write (timed from when the temporary file appears, over the time an uninterrupted write
takes, plus 10% to catch the rename), one in ten while Python is still starting.  Half the runs
start with a complete DEST written by an earlier ``pecli generate --force`` of a different recipe,
half with no DEST.  Afterwards DEST must be byte-identical to that previous file, or absent (fresh
runs only), or the complete new file (the kill came after the rename).  Anything else (a truncated
file, a lost previous file) is a violation.  Leftover ``.DEST.*.part`` temporaries are expected
after SIGKILL, which nothing can clean up: they are counted, not failed.  For .npy and .csv the
recipe sidecar ``DEST.json`` is replaced around DEST: the old one is removed just before DEST is
renamed into place, the new one renamed just after.  A kill between those steps leaves DEST (the
previous or the new table) without a sidecar: it reads back with no recipe, which is counted as
"missing sidecar", not failed.  A sidecar that is not the one written with the table in DEST
would label the data with the wrong recipe: "stale sidecar", a violation.

Run from the repository root::

    PYTHONPATH=. python scripts/crash_safety.py                    # 24 kills over 6 formats
    PYTHONPATH=. python scripts/crash_safety.py --runs 48 --seed 7
    PYTHONPATH=. python scripts/crash_safety.py --runs 4 --formats npy,h5 --len 60000   # the test's size

The summary table goes to stdout, one line per run to stderr.  Exit status 1 on any violation.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("npy", "h5", "csv", "safetensors", "npz", "json")
#: Text writers produce ~4x the bytes at a fraction of the speed: they get shorter tables.
TEXT = ("csv", "tsv", "json")
SIDECAR = ("npy", "csv", "tsv")
COMMANDS = ("generate", "export")


@dataclass(frozen=True)
class Reference:
    """What an uninterrupted run of one command produces, and how long it takes."""

    fingerprint: str
    size: int
    seconds: float
    #: Seconds until the temporary file appeared (the write began).
    write_starts: float
    sidecar: bytes | None


@dataclass
class Outcome:
    """One killed run."""

    fmt: str
    command: str
    preexisting: bool
    delay: float
    killed: bool
    dest: str  # "absent", "previous", "new" or "PARTIAL …"
    temps: int
    sidecar: str  # "consistent", "missing", "stale", or "" when the format has none
    landed: str  # "before the write", "mid-write", "after the rename", "completed"

    @property
    def violation(self) -> bool:
        lost = self.preexisting and self.dest == "absent"
        return self.dest.startswith("PARTIAL") or lost or self.sidecar == "stale"


@dataclass
class Summary:
    fmt: str
    outcomes: list[Outcome] = field(default_factory=list)


def fingerprint(path: Path) -> str:
    """sha256 of the file, or for a zip (npz) of each entry's name and bytes.

    Zip entries carry the time they were written (to 2 s), so two complete npz files of the same
    table differ in those bytes; a truncated or partial zip has no readable directory at all.
    """
    if zipfile.is_zipfile(path):
        digest = hashlib.sha256()
        try:
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist():
                    digest.update(info.filename.encode() + b"\0" + zf.read(info) + b"\0")
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            return "unreadable zip " + _sha256(path)
        return f"zip {path.stat().st_size} {digest.hexdigest()}"
    return _sha256(path)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fp:
        while chunk := fp.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def _temps(dest: Path) -> list[Path]:
    """The temporaries pecli's atomic writer creates beside DEST (the pattern covers its sidecar's too)."""
    return sorted(dest.parent.glob(f".{dest.name}.*.part"))


class Lab:
    """Builds commands for one work directory, and the references they are checked against."""

    def __init__(self, workdir: Path, length: int, text_length: int, dim: int) -> None:
        self.workdir, self.length, self.text_length, self.dim = workdir, length, text_length, dim
        self.references: dict[tuple[str, str], Reference] = {}

    def rows(self, fmt: str) -> int:
        return self.text_length if fmt in TEXT else self.length

    def pecli(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "pecli", *args, "-q"]

    def command(self, command: str, fmt: str, dest: Path) -> list[str]:
        """The command a run kills: write the table for ``fmt`` to ``dest``, replacing any file there."""
        if command == "generate":
            return self.pecli(
                "generate", "--len", str(self.rows(fmt)), "--dim", str(self.dim), "-o", str(dest), "--force"
            )
        return self.pecli("export", str(self.source(fmt)), "-o", str(dest), "--force")

    def previous(self, fmt: str, dest: Path) -> list[str]:
        """An earlier, complete write of another recipe (other length, other base) to ``dest``."""
        rows, dim = str(self.rows(fmt) - 7), str(self.dim)
        return self.pecli("generate", "--len", rows, "--dim", dim, "--base", "500", "-o", str(dest), "--force")

    def source(self, fmt: str) -> Path:
        """The .npy (with its sidecar) that ``export`` runs read: the same table ``generate`` writes."""
        path = self.workdir / "sources" / f"source-{self.rows(fmt)}.npy"
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            rows, dim = str(self.rows(fmt)), str(self.dim)
            run(self.pecli("generate", "--len", rows, "--dim", dim, "-o", str(path)))
        return path

    def reference(self, command: str, fmt: str) -> Reference:
        """Run the command to completion once: the new file's fingerprint and the write's timing."""
        key = (command, fmt)
        if key not in self.references:
            dest = self.workdir / "reference" / f"{command}.{fmt}"
            dest.parent.mkdir(exist_ok=True)
            argv = self.command(command, fmt, dest)
            errors = dest.parent / "stderr.txt"
            with open(errors, "wb") as err:
                began = time.monotonic()
                proc = subprocess.Popen(argv, env=_env(), stdout=subprocess.DEVNULL, stderr=err)
                write_starts = None
                while proc.poll() is None:
                    if write_starts is None and _temps(dest):
                        write_starts = time.monotonic() - began
                    time.sleep(0.002)
                seconds = time.monotonic() - began
            if proc.returncode != 0:
                raise SystemExit(f"reference run failed: {' '.join(argv)}\n{errors.read_text()}")
            sidecar = Path(str(dest) + ".json")
            self.references[key] = Reference(
                fingerprint(dest),
                dest.stat().st_size,
                seconds,
                write_starts if write_starts is not None else seconds * 0.5,
                sidecar.read_bytes() if sidecar.exists() else None,
            )
            dest.unlink()
            sidecar.unlink(missing_ok=True)
        return self.references[key]


def run(argv: list[str]) -> None:
    done = subprocess.run(argv, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"setup command failed ({done.returncode}): {' '.join(argv)}\n{done.stderr}")


def one_run(lab: Lab, fmt: str, command: str, preexisting: bool, rng: random.Random) -> Outcome:
    """Start ``command`` writing DEST, SIGKILL it at a random moment, and judge what is left."""
    ref = lab.reference(command, fmt)
    dest = lab.workdir / f"dest.{fmt}"
    sidecar = Path(str(dest) + ".json")
    for stale in [dest, sidecar, *_temps(dest)]:
        stale.unlink(missing_ok=True)
    previous_digest = previous_sidecar = None
    if preexisting:
        run(lab.previous(fmt, dest))
        previous_digest = _sha256(dest)
        previous_sidecar = sidecar.read_bytes() if sidecar.exists() else None
    proc = subprocess.Popen(lab.command(command, fmt, dest), env=_env(), stdout=subprocess.DEVNULL)
    began = time.monotonic()
    if rng.random() < 0.1:  # now and then while Python starts, before any file exists
        delay = rng.uniform(0, ref.write_starts)
        time.sleep(delay)
    else:  # mostly during the write (timed from when the temporary file appears), a few after the rename
        wait = rng.uniform(0, 1.1 * (ref.seconds - ref.write_starts))
        while proc.poll() is None and not _temps(dest):
            time.sleep(0.001)
        time.sleep(wait)
        delay = time.monotonic() - began
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    temps = _temps(dest)

    if not dest.exists():
        state = "absent"
    elif previous_digest is not None and _sha256(dest) == previous_digest:
        state = "previous"
    elif fingerprint(dest) == ref.fingerprint:
        state = "new"
    else:
        state = f"PARTIAL ({dest.stat().st_size:,} bytes; complete files have {ref.size:,})"

    sidecar_state = ""
    if fmt in SIDECAR:
        now = sidecar.read_bytes() if sidecar.exists() else None
        expected = {"absent": None, "previous": previous_sidecar, "new": ref.sidecar}.get(state, now)
        if now == expected:
            sidecar_state = "consistent"
        elif now is None:  # the kill came between removing the old sidecar and renaming the new one
            sidecar_state = "missing"
        else:
            sidecar_state = "stale"

    if not killed:
        landed = "completed"
    elif state == "new":
        landed = "after the rename"
    elif temps:
        landed = "mid-write"
    else:
        landed = "before the write"
    for temp in temps:  # SIGKILL leaves them; count them, then clear the way for the next run
        temp.unlink()
    return Outcome(fmt, command, preexisting, delay, killed, state, len(temps), sidecar_state, landed)


def report(summaries: list[Summary]) -> str:
    """One row per format: where the kills landed, what DEST was afterwards, violations, temporaries."""
    head: tuple[str, ...] = ("format", "runs", "with DEST", "mid-write", "before", "after", "absent", "previous")
    head += ("new", "PARTIAL", "temps left", "missing sidecar", "stale sidecar")
    rows = []
    total = Summary("total", [o for each in summaries for o in each.outcomes])
    for s in [*summaries, total]:
        landed = Counter(o.landed for o in s.outcomes)
        dest = Counter(o.dest if not o.dest.startswith("PARTIAL") else "PARTIAL" for o in s.outcomes)
        rows.append(
            (
                s.fmt,
                len(s.outcomes),
                sum(o.preexisting for o in s.outcomes),
                landed["mid-write"],
                landed["before the write"],
                landed["after the rename"] + landed["completed"],
                dest["absent"],
                dest["previous"],
                dest["new"],
                dest["PARTIAL"] + sum(o.preexisting and o.dest == "absent" for o in s.outcomes),
                sum(o.temps for o in s.outcomes),
                sum(o.sidecar == "missing" for o in s.outcomes),
                sum(o.sidecar == "stale" for o in s.outcomes),
            )
        )
    cells = [head, *[tuple(str(c) for c in row) for row in rows]]
    widths = [max(len(row[k]) for row in cells) for k in range(len(head))]

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(row, widths, strict=True)))

    rule = "  ".join("-" * w for w in widths)
    body = [line(r) for r in cells]
    return "\n".join([body[0], rule, *body[1:-1], rule, body[-1]])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=24, help="killed runs, spread over the formats (default 24)")
    ap.add_argument("--formats", default=",".join(FORMATS), help=f"comma-separated (default {','.join(FORMATS)})")
    ap.add_argument("--len", dest="length", type=int, default=300_000, help="rows of binary tables (default 300000)")
    ap.add_argument("--text-len", type=int, default=60_000, help="rows of csv/tsv/json tables (default 60000)")
    ap.add_argument("--dim", type=int, default=64, help="columns (default 64)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill times (default 0)")
    ap.add_argument("--workdir", type=Path, help="where to write (default: a new temporary directory, removed)")
    return ap.parse_args(argv)


def campaign(args: argparse.Namespace) -> list[Summary]:
    """Run ``args.runs`` killed writes, each format in turn: fresh, with DEST, then both again with export."""
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="pecli-crash-"))
    workdir.mkdir(parents=True, exist_ok=True)
    lab = Lab(workdir, args.length, min(args.text_len, args.length), args.dim)
    rng = random.Random(args.seed)
    summaries = {f: Summary(f) for f in formats}
    try:
        for i in range(args.runs):
            fmt, k = formats[i % len(formats)], i // len(formats)
            preexisting, command = k % 2 == 1, COMMANDS[(k // 2) % 2]
            o = one_run(lab, fmt, command, preexisting, rng)
            summaries[fmt].outcomes.append(o)
            print(
                f"{i + 1:>3}/{args.runs} {fmt:<11} {command:<8} {'with DEST' if preexisting else 'fresh':<9} "
                f"kill at {o.delay:5.2f} s ({o.landed}): DEST {o.dest}, {o.temps} temporary file(s) left"
                + (f", sidecar {o.sidecar}" if o.sidecar else "")
                + ("  <-- VIOLATION" if o.violation else ""),
                file=sys.stderr,
                flush=True,
            )
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return list(summaries.values())


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    began = time.monotonic()
    summaries = campaign(args)
    outcomes = [o for s in summaries for o in s.outcomes]
    violations = [o for o in outcomes if o.violation]
    print(report(summaries))
    print(
        f"\n{len(outcomes)} runs ({sum(o.killed for o in outcomes)} killed) in {time.monotonic() - began:.0f} s, "
        f"seed {args.seed}: {len(violations)} violation(s); "
        f"{sum(o.temps for o in outcomes)} temporary file(s) left by SIGKILL (expected: no process can remove them)"
    )
    for o in violations:
        print(
            f"VIOLATION: {o.fmt} {o.command} {'with DEST' if o.preexisting else 'fresh'}, kill at {o.delay:.2f} s: "
            f"DEST {o.dest}" + (", sidecar stale" if o.sidecar == "stale" else "")
        )
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
