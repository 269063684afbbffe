"""A C/C++ header: ``static const float name[ROWS][COLS]`` plus shape macros (write only).

float32 values are written with 9 significant digits and an ``f`` suffix, float64 with 17: a C
compiler reads both back to the same bits (checked in the tests by compiling the header).
float16 and bfloat16 have no standard C type and are written as exact float literals.
"""

from __future__ import annotations

import json
import re
from typing import IO

import numpy as np

from pecli.errors import FormatError
from pecli.formats._common import Format, WriteOptions
from pecli.formats.metadata import table_metadata
from pecli.table import Progress, Table

#: Reserved words of C (up to C23, with GNU's asm) and of C++ (up to C++20): none can name the array.
RESERVED_WORDS = frozenset(
    """
    auto break case char const continue default do double else enum extern float for goto if inline int
    long register restrict return short signed sizeof static struct switch typedef union unsigned void
    volatile while _Alignas _Alignof _Atomic _BitInt _Bool _Complex _Decimal32 _Decimal64 _Decimal128
    _Generic _Imaginary _Noreturn _Static_assert _Thread_local alignas alignof bool constexpr false
    nullptr static_assert thread_local true typeof typeof_unqual asm
    and and_eq bitand bitor catch char8_t char16_t char32_t class compl concept consteval constinit
    const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export friend mutable
    namespace new noexcept not not_eq operator or or_eq private protected public reinterpret_cast
    requires static_cast template this throw try typeid typename using virtual wchar_t xor xor_eq
    """.split()
)

_MATH_FUNCTIONS = """
    acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh drem erf erfc exp exp10 exp2 expm1
    fabs fdim finite floor fma fmax fmin fmod frexp gamma hypot ilogb isinf isnan j0 j1 jn ldexp lgamma
    lgamma_r llrint llround log log10 log1p log2 logb lrint lround modf nan nearbyint nextafter nexttoward
    pow pow10 remainder remquo rint round scalb scalbln scalbn significand sin sincos sinh sqrt tan tanh
    tgamma trunc y0 y1 yn
""".split()

#: Names <math.h> (which the header includes) already declares, as functions (each with its float
#: and long double twins), macros or types; with GCC's predefined ``linux`` and ``unix``.
MATH_NAMES = frozenset(
    [name + suffix for name in _MATH_FUNCTIONS for suffix in ("", "f", "l")]
    + """
    fpclassify isfinite isgreater isgreaterequal isless islessequal islessgreater isnormal isunordered
    signbit math_errhandling float_t double_t abs NAN INFINITY HUGE_VAL HUGE_VALF HUGE_VALL MATH_ERRNO
    MATH_ERREXCEPT FP_NAN FP_INFINITE FP_ZERO FP_SUBNORMAL FP_NORMAL FP_ILOGB0 FP_ILOGBNAN FP_FAST_FMA
    FP_FAST_FMAF FP_FAST_FMAL M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI
    M_2_SQRTPI M_SQRT2 M_SQRT1_2 linux unix i386
    """.split()
)


def c_identifier(key: str) -> str:
    """``--key`` as the name of the C array, or a FormatError naming the rule it breaks.

    The name is used as it is (a changed name would not be the one asked for), so it must be an
    identifier that compiles as C and as C++ after ``#include <math.h>``.
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        raise FormatError(
            f"--key {key!r} is not a C identifier, which a C header needs for its array name: "
            "use letters, digits and _, not starting with a digit, e.g. --key pe_table"
        )
    if key in RESERVED_WORDS:
        raise FormatError(
            f"--key {key} is a reserved word of C or C++ and cannot name the header's array: "
            f"choose another name, e.g. --key pe_{key.strip('_')}"
        )
    if key.startswith("__") or (key[0] == "_" and key[1:2].isupper()):
        raise FormatError(
            f"--key {key} is reserved for the C compiler (it starts with __ or _ and a capital): "
            f"choose another name, e.g. --key pe_{key.strip('_')}"
        )
    if key in MATH_NAMES:
        raise FormatError(
            f"--key {key} is already a name in <math.h> (which the header includes) or a compiler macro: "
            f"choose another name, e.g. --key pe_{key}"
        )
    return key


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
    if macro[0].isdigit():  # --key _1: "#define 1_ROWS" is no macro
        macro = f"PE_{macro}"
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
    name="h",
    extensions=(".h", ".hpp"),
    summary="C/C++ header: static const array + ROWS/COLS macros (write only)",
    writes_to="stream",
    write=_write,
    read=None,
    metadata="inline",
    bytes_per_value=lambda dt: 10.0,
)
