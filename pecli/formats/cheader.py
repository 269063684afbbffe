"""A C/C++ header: ``static const float name[ROWS][COLS]`` plus shape macros (write only).

float32 values are written with 9 significant digits and an ``f`` suffix, float64 with 17: a C
compiler reads both back to the same bits (checked in the tests by compiling the header).
float16 has no standard C type and is written as exact float literals.
"""

from __future__ import annotations

import json
import re
from typing import IO

import numpy as np

from pecli.formats._common import Format, WriteOptions, table_metadata
from pecli.table import Progress, Table


def c_identifier(key: str) -> str:
    name = re.sub(r"\W", "_", key, flags=re.ASCII)
    return "_" + name if not name or name[0].isdigit() else name


def _literal(x: float, ctype: str) -> str:
    if np.isnan(x):
        return "NAN"
    if np.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    text = f"{x:.17g}" if ctype == "double" else f"{x:.9g}"
    if "." not in text and "e" not in text:
        text += ".0"  # "1f" is not a C literal; "1.0f" is
    return text if ctype == "double" else text + "f"


def _write(table: Table, fp: IO[bytes], options: WriteOptions, progress: Progress | None) -> None:
    n, d = table.shape
    name = c_identifier(options.key)
    macro = name.upper().lstrip("_") or "PE"
    ctype = "double" if table.dtype == np.float64 else "float"
    meta = table_metadata(table)
    recipe = json.dumps(meta).replace("*/", "* /") if meta else "none"
    lines = [
        f"/* Positional-encoding table written by pecli: {n} rows x {d} columns, {table.dtype.name}.",
        f" * Recipe: {recipe}",
        " */",
        f"#ifndef PECLI_{macro}_H",
        f"#define PECLI_{macro}_H",
        "#include <math.h> /* NAN, INFINITY */",
        "",
        f"#define {macro}_ROWS {n}",
        f"#define {macro}_COLS {d}",
        "",
        f"static const {ctype} {name}[{macro}_ROWS][{macro}_COLS] = {{",
    ]
    fp.write(("\n".join(lines) + "\n").encode())
    # '#' keeps the decimal point ("1.00000000f", never the invalid "1f"); same digits, same bits.
    row_fmt = "  {" + ", ".join(["%#.17g" if ctype == "double" else "%#.9gf"] * d) + "},\n"
    for block in table.blocks(progress):
        if np.isfinite(block).all():
            fp.write("".join([row_fmt % tuple(row) for row in block.tolist()]).encode())
        else:  # NaN/Inf need the math.h macros
            text = "".join("  {" + ", ".join(_literal(v, ctype) for v in row) + "},\n" for row in block.tolist())
            fp.write(text.encode())
    fp.write(f"}};\n\n#endif /* PECLI_{macro}_H */\n".encode())


CHEADER = Format(
    "h",
    (".h", ".hpp"),
    "C/C++ header: static const array + ROWS/COLS macros (write only)",
    "stream",
    _write,
    None,
    "inline",
    lambda dt: 10.0,
)
