"""How many threads pecli computes with: --threads, PECLI_THREADS, the affinity mask and a cgroup's
CPU quota; and that the bits never depend on it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from pecli import PecliInputError
from pecli.kernels import threads
from pecli.sources import parse_recipe


@pytest.fixture(autouse=True)
def _default_threads(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.delenv(threads.THREADS_ENV, raising=False)
    yield
    threads.set_threads(None)


def test_the_default_is_the_affinity_mask_capped_by_the_cgroup_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5})
    monkeypatch.setattr(threads, "_cgroup_quota", lambda: 2)
    monkeypatch.setattr(threads, "_available", None)  # read once a process: read again here
    assert threads.cpu_threads() == 2
    monkeypatch.setattr(threads, "_cgroup_quota", lambda: None)
    monkeypatch.setattr(threads, "_available", None)
    assert threads.cpu_threads() == 6


@pytest.mark.parametrize(
    ("files", "cpus"),
    [
        ({"cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs of quota: 2 threads
        ({"cpu.max": "100000 100000\n"}, 1),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "400000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 4),  # cgroup v1
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
        ({"cpu.max": "garbage\n"}, None),
    ],
)
def test_cgroup_quota(tmp_path: Path, files: dict[str, str], cpus: int | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert threads._cgroup_quota(str(tmp_path)) == cpus


def test_env_and_option_override_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(threads.THREADS_ENV, "3")
    assert threads.cpu_threads() == 3
    threads.set_threads(5)  # --threads wins over the environment
    assert threads.cpu_threads() == 5
    monkeypatch.setenv(threads.THREADS_ENV, "zero")
    threads.set_threads(None)
    with pytest.raises(PecliInputError, match="PECLI_THREADS='zero' is not a thread count"):
        threads.cpu_threads()
    with pytest.raises(PecliInputError, match="threads must be a whole number"):
        threads.set_threads(0)


def test_one_thread_runs_every_block_in_the_callers_thread() -> None:
    threads.set_threads(1)
    seen: set[int] = set()
    threads.run_blocks(lambda a, b: seen.add(threading.get_ident()), [(i, i + 1) for i in range(8)])
    assert seen == {threading.get_ident()}
    threads.set_threads(3)
    seen.clear()
    threads.run_blocks(lambda a, b: seen.add(threading.get_ident()), [(i, i + 1) for i in range(8)])
    assert len(seen) > 1 or (os.cpu_count() or 1) == 1


@pytest.mark.parametrize(
    "spec",
    [
        "sinusoidal:len=3000,dim=256",
        "fairseq:len=2000,dim=256",
        "llama:len=3000,dim=128",
        "alibi:heads=8,length=600,part=bias",
    ],
)
def test_the_bits_do_not_depend_on_the_thread_count(spec: str) -> None:
    recipe = parse_recipe(spec)
    threads.set_threads(1)
    one = recipe.build()
    threads.set_threads(3)
    three = recipe.build()
    assert one.tobytes() == three.tobytes()
    assert np.isfinite(one).all()


def test_the_option_and_its_error(run) -> None:  # type: ignore[no-untyped-def]
    one = run("generate", "--len", "40", "--dim", "8", "--threads", "1")
    two = run("generate", "--len", "40", "--dim", "8", "--threads", "2")
    assert one.exit_code == two.exit_code == 0 and one.stdout == two.stdout
    bad = run("generate", "--len", "4", "--dim", "4", "--threads", "0")
    assert bad.exit_code == 2 and "Invalid value for '--threads'" in bad.stderr
