"""Export timings: a 32768×1024 float32 table written to every format.

    python benchmarks/export_formats.py [--rows 32768] [--dim 1024] [--formats npy,h5,...]

The source is a .npy file (memory-mapped), so the numbers are the cost of each writer, not of
generating the table.  Each write goes through pecli's atomic path, as `pecli export` does.
Printed: format, seconds, output size, MB/s of table data.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pecli import Sinusoidal, open_table, write_table
from pecli.formats import FORMATS, WriteOptions
from pecli.table import Table

#: Each format's first extension, from the registry (a new format is benchmarked automatically).
EXT = {name: f.extensions[0] for name, f in FORMATS.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=32768)
    ap.add_argument("--dim", type=int, default=1024)
    ap.add_argument("--formats", default=",".join(FORMATS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        src = Path(tmp) / "source.npy"
        t0 = time.perf_counter()
        write_table(Table.from_recipe(Sinusoidal(args.rows, args.dim)), src)
        print(f"source {args.rows}x{args.dim} float32 generated in {time.perf_counter() - t0:.2f} s")
        print(f"{'format':<12} {'seconds':>8} {'size MB':>9} {'MB/s':>8}  extra")
        for name in args.formats.split(","):
            dst = Path(tmp) / f"out{EXT[name]}"
            variants = [("", WriteOptions())]
            if name == "h5":
                variants.append(("gzip:4", WriteOptions(compress=("gzip", 4))))
            for label, options in variants:
                with open_table(src) as table:
                    t0 = time.perf_counter()
                    try:
                        write_table(table, dst, options=options, force=True)
                    except Exception as exc:  # e.g. .pt without torch
                        print(f"{name:<12} skipped: {exc}")
                        continue
                    dt = time.perf_counter() - t0
                size = dst.stat().st_size / 1e6
                print(f"{name:<12} {dt:>8.2f} {size:>9.1f} {table.nbytes / 1e6 / dt:>8.0f}  {label}", flush=True)
                dst.unlink()


if __name__ == "__main__":
    main()
