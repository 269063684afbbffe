"""``pecli identify CHECKPOINT`` against the issue's target, side by side with reading the file once.

    python benchmarks/checkpoints.py                  # 1 GB, 200 tensors, 3 runs, warm and cold (~1 min)
    python benchmarks/checkpoints.py --size-mb 256 --runs 5
    python benchmarks/checkpoints.py --format npz     # or h5, gguf, pt (each format's library installed)

Target (issue 42): "scanning a checkpoint of 1 GB with 200 tensors takes no longer than reading it once".

- The checkpoint (``safetensors.numpy.save_file``; ``--format``: ``np.savez``, h5py, llama.cpp's
  ``GGUFWriter`` or ``torch.save``): 197 weight matrices of random normal values
  (``--size-mb`` in all), and three positional tables made by independent NumPy code: a learned
  table drawn like GPT-2's ``wpe`` (1024×768, std 0.02), transformers' ``inv_freq`` (64 float32
  values) and the paper's sinusoid (2048×1024, float64 cast once to float32) under a name that
  says nothing (found by its first row).
- The sides, each a fresh process, alternated ``--runs`` times after one untimed run of each:
  (a) ``pecli identify CKPT`` (the report to /dev/null); (b) a Python process that reads every
  tensor once with ``safetensors``' ``safe_open`` (the format's own library: ``np.load``, h5py,
  ``GGUFReader``, ``torch.load(mmap=True)``), one at a time, and sums it: the cost of
  "reading it once".  Wall time medians; peak RSS and the bytes read from disk (``ru_inblock``)
  of each side's process (``wait4``).
- Two cases: the file in the page cache (read once before), and the file not cached: its pages
  dropped before each run (``posix_fadvise(POSIX_FADV_DONTNEED)``, Linux; the case is left out
  where the pages stay), as a checkpoint just copied or not read since boot.  Reading from disk
  is the cost the target speaks of; a warm page cache serves a GB in a tenth of a second, against
  which pecli's fixed cost (start-up and the proof of each positional table) weighs alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
from _harness import Report, cli_env, mb, pecli_cmd, read_through, warm_memory
from performance import launch, launch_reading

TARGET = 1.0  # pecli / reading once

#: Each format's "reading it once": a process that reads every tensor, one at a time, and sums it,
#: with the format's own library (the one pecli reads it with).
READ_ONCE = {
    "safetensors": """
import sys
import numpy as np
from safetensors import safe_open
total = 0.0
with safe_open(sys.argv[1], framework="np") as f:
    for key in f.keys():
        total += float(np.asarray(f.get_tensor(key), dtype=np.float64).sum())
print(total)
""",
    "npz": """
import sys
import numpy as np
total = 0.0
with np.load(sys.argv[1]) as f:
    for key in f.files:
        total += float(np.asarray(f[key], dtype=np.float64).sum())
print(total)
""",
    "h5": """
import sys
import h5py
import numpy as np
total = 0.0
with h5py.File(sys.argv[1], "r") as f:
    for key in f:
        total += float(np.asarray(f[key][...], dtype=np.float64).sum())
print(total)
""",
    "gguf": """
import sys
import numpy as np
from gguf import GGUFReader
total = 0.0
for t in GGUFReader(sys.argv[1], "r").tensors:
    total += float(np.asarray(t.data, dtype=np.float64).sum())
print(total)
""",
    "pt": """
import sys
import numpy as np
import torch
total = 0.0
for key, t in torch.load(sys.argv[1], map_location="cpu", weights_only=True, mmap=True).items():
    total += float(np.asarray(t.numpy(), dtype=np.float64).sum())
print(total)
""",
}


def save(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """``tensors`` written in the format ``path``'s suffix names, by that format's own library."""
    if path.suffix == ".safetensors":
        from safetensors.numpy import save_file

        save_file(tensors, str(path))
    elif path.suffix == ".npz":
        np.savez(path, **tensors)
    elif path.suffix == ".h5":
        import h5py

        with h5py.File(path, "w") as f:
            for key, value in tensors.items():
                f[key] = value
    elif path.suffix == ".gguf":
        import gguf

        writer = gguf.GGUFWriter(str(path), "llama")
        for key, value in tensors.items():
            writer.add_tensor(key, value)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
    else:
        import torch

        torch.save({k: torch.from_numpy(v) for k, v in tensors.items()}, path)


def make_checkpoint(path: Path, size_mb: int) -> int:
    """The checkpoint described in the module docstring; its size in bytes."""
    rng = np.random.default_rng(0)
    rows = max(1, size_mb * (1 << 20) // (197 * 1024 * 4))
    tensors = {f"layers.{i}.mlp.weight": rng.standard_normal((rows, 1024), dtype=np.float32) for i in range(197)}
    tensors["wpe.weight"] = (rng.standard_normal((1024, 768)) * 0.02).astype(np.float32)
    exponents = np.arange(0, 128, 2, dtype=np.int64).astype(np.float32) / np.float32(128)
    tensors["model.rotary_emb.inv_freq"] = (np.float32(1) / np.float32(10000.0) ** exponents).astype(np.float32)
    pos = np.arange(2048, dtype=np.float64)[:, None]
    div = np.exp(np.arange(0, 1024, 2) * (-np.log(10000.0) / 1024))
    table = np.zeros((2048, 1024))
    table[:, 0::2], table[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
    tensors["encoder.table"] = table.astype(np.float32)
    save(path, tensors)
    return path.stat().st_size


def evict(path: Path) -> bool:
    """Drop ``path``'s pages from the page cache; whether it worked (its next read comes from disk)."""
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    _, _, disk = launch_reading([sys.executable, "-c", "import sys; open(sys.argv[1], 'rb').read(1 << 20)", str(path)])
    return disk > 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="size of the weight matrices in all")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--format", choices=list(READ_ONCE), default="safetensors", help="the checkpoint's format (default safetensors)"
    )
    args = parser.parse_args()
    report = Report("peak RSS pecli / baseline; read from disk pecli / baseline")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"model.{args.format}"
        size = make_checkpoint(path, args.size_mb)
        read_through(path)
        pecli = [*pecli_cmd(), "identify", str(path)]
        baseline = [sys.executable, "-c", READ_ONCE[args.format], str(path)]
        # Both sides in a user's environment: .pyc files written (a shell's PYTHONDONTWRITEBYTECODE would
        # leave an editable install compiling its modules on every run), then one untimed run each.
        env = cli_env()
        launch(pecli, env), launch(baseline, env)
        cases = [("page cache warm", False)] + ([("file not cached", True)] if evict(path) else [])
        for case, cold in cases:
            times: dict[str, list[float]] = {"pecli": [], "baseline": []}
            rss = {"pecli": 0, "baseline": 0}
            disk = {"pecli": 0, "baseline": 0}
            for _ in range(args.runs):
                for side, cmd in (("pecli", pecli), ("baseline", baseline)):
                    if cold:
                        evict(path)
                    else:
                        read_through(path)
                    warm_memory(size // 4)
                    wall, peak, read = launch_reading(cmd, env)
                    times[side].append(wall)
                    rss[side], disk[side] = max(rss[side], peak), max(disk[side], read)
            t_pecli, t_base = statistics.median(times["pecli"]), statistics.median(times["baseline"])
            ratio = t_pecli / t_base
            report.row(
                f"identify {mb(size)} {args.format}, 200 tensors, {case}",
                f"{t_pecli:.2f} s",
                f"{t_base:.2f} s (read once)",
                f"{ratio:.2f}",
                f"≤ {TARGET:g}",
                ratio <= TARGET,
                f"{mb(rss['pecli'])} / {mb(rss['baseline'])}; {mb(disk['pecli'])} / {mb(disk['baseline'])}",
            )
    report.print()


if __name__ == "__main__":
    main()
