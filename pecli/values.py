"""Values pecli reads as a table, wherever they come from: float16/32/64 as they are, bfloat16 as
float32 (exactly), complex numbers as (real, imaginary) column pairs, integers (position ids) as
float64; and :func:`read_array`, the same for an array a script holds
(:meth:`pecli.table.Table.from_array`)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from pecli.dtypes import COMPLEX, integers_as_float64, integers_note, is_integer_dtype
from pecli.errors import FormatError, PecliInputError


def read_array(x: Any, name: str) -> tuple[np.ndarray, dict[str, Any], str | None]:
    """``x`` (a NumPy array, anything with ``__dlpack__`` on the CPU, anything ``np.asarray``
    takes) as a 2-D float array, what reports say of how it was read, and the dtype it is stored
    in when that is not the array's (``bfloat16``, a complex dtype).  A bad array is one line
    (:class:`~pecli.errors.PecliInputError`) saying why."""
    bfloat16 = _torch_bfloat16(x)
    try:
        arr = bfloat16 if bfloat16 is not None else np.from_dlpack(x) if hasattr(x, "__dlpack__") else np.asarray(x)
    except (BufferError, TypeError, RuntimeError, ValueError) as exc:
        try:  # a dtype DLPack does not carry, or a device NumPy cannot read
            arr = np.asarray(x)
        except Exception:
            text = (str(exc).strip() or type(exc).__name__).splitlines()[0]
            raise PecliInputError(
                f"cannot read {name} as a NumPy array ({text}): move it to the CPU as float32 first, "
                "e.g. x.float().cpu()"
            ) from None
    info: dict[str, Any] = {"source": "an array in memory"}
    storage = "bfloat16" if bfloat16 is not None else None
    if arr.dtype.kind in "OUS":  # None, a dict, strings: no numbers at all (bfloat16 is kind V: a number)
        raise FormatError(
            f"{name} is not an array of numbers (a {type(x).__name__}): give a NumPy array, a list of rows "
            "or a CPU tensor"
        )
    if arr.ndim == 0:
        raise FormatError(f"{name} holds a single number: expected a table (positions × dims), a vector or a grid")
    if arr.ndim > 2 and 0 in arr.shape:
        raise FormatError(f"{name} has shape {arr.shape}, with no values: expected a table (positions × dims)")
    if arr.dtype.name == "bfloat16":  # ml_dtypes' bfloat16: served as float32, exactly
        arr, storage = arr.astype(np.float32), "bfloat16"
    elif arr.dtype.name in COMPLEX:  # (real, imaginary) column pairs, exactly
        arr, storage = complex_as_pairs(arr), arr.dtype.name
    elif is_integer_dtype(arr.dtype):  # position ids: float64, exactly
        info["stored dtype"], info["note"] = arr.dtype.name, integers_note(arr.dtype)
        arr = integers_as_float64(arr, name)
    check_float_dtype(arr.dtype, name)
    # The bytes that hold the values: a broadcast or strided view holds far fewer than it declares
    # (np.broadcast_to(1.0, (10**9, 10**4)): 8 bytes), which Table.mostly_unstored refuses to read whole.
    extent = arr.itemsize + sum(abs(s) * (n - 1) for s, n in zip(arr.strides, arr.shape, strict=True) if n > 0)
    if arr.size and extent < arr.nbytes:
        info["storage size"] = extent
    if arr.ndim != 2:
        shape = arr.shape
        arr = arr.reshape(1, -1) if arr.ndim == 1 else arr.reshape(-1, shape[-1])
        info["reshaped"] = f"{shape} → {arr.shape}"
    return arr, info, storage


def _torch_bfloat16(x: Any) -> np.ndarray | None:
    """A CPU torch tensor of bfloat16 as float32, exactly (its bits moved to float32's top half:
    neither DLPack's NumPy side nor ``Tensor.numpy()`` carries bfloat16); None for anything else."""
    torch = sys.modules.get("torch")  # a torch tensor means torch is imported already
    if torch is None or not isinstance(x, torch.Tensor) or x.dtype != torch.bfloat16 or x.device.type != "cpu":
        return None
    bits = x.detach().contiguous().view(torch.int16).numpy().view(np.uint16)
    out: np.ndarray = (bits.astype(np.uint32) << 16).view(np.float32)
    return out


def check_float_dtype(dtype: Any, source: str) -> None:
    """Refuse values pecli does not read as a table: booleans, strings, objects… (complex numbers
    are read as their parts: :func:`complex_as_pairs`; integers as float64:
    :func:`pecli.dtypes.integers_as_float64`)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or dtype.name not in ("float16", "float32", "float64"):
        raise FormatError(
            f"{source} holds {dtype} values: pecli reads numeric tables (float16/32/64; bfloat16 read as "
            "float32; integers as float64; complex64/128 as (real, imaginary) column pairs)"
        )


def complex_as_pairs(values: np.ndarray) -> np.ndarray:
    """Complex numbers as their (real, imaginary) parts side by side, ``[re0, im0, re1, im1, …]``:
    the same bytes viewed as floats (``torch.view_as_real`` with the last two axes merged), in the
    machine's byte order (a big-endian file's numbers are swapped first)."""
    native = values.dtype.newbyteorder("=")
    values = np.ascontiguousarray(values).astype(native, copy=False)
    pairs: np.ndarray = values.view(np.dtype(COMPLEX[values.dtype.name]))
    return pairs


__all__ = ["check_float_dtype", "complex_as_pairs", "read_array"]
