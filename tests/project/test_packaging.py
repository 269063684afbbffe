"""What ``pip install .`` gives (issue 42, item 6): the distribution's name and numba's marker."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())


#: Where numba 0.68.1 publishes wheels, read from the package index (``pip download numba==0.68.1
#: --no-deps --only-binary=:all: --platform TAG``): (sys_platform, platform_machine) → has a wheel.
NUMBA_WHEELS = {
    ("linux", "x86_64"): True,  # manylinux_2_28_x86_64
    ("linux", "aarch64"): True,  # manylinux_2_28_aarch64
    ("darwin", "arm64"): True,  # macosx_12_0_arm64
    ("win32", "AMD64"): True,
    ("win32", "ARM64"): True,
    ("darwin", "x86_64"): False,  # none since 0.63
    ("linux", "i686"): False,
    ("linux", "x86"): False,
    ("linux", "ppc64le"): False,
    ("win32", "x86"): False,
}


@pytest.mark.parametrize(("platform", "machine"), list(NUMBA_WHEELS))
def test_numba_is_required_exactly_where_it_has_wheels(platform: str, machine: str) -> None:
    numba = next(Requirement(d) for d in PYPROJECT["project"]["dependencies"] if d.startswith("numba"))
    assert numba.marker is not None
    env = {"sys_platform": platform, "platform_machine": machine}
    assert numba.marker.evaluate(env) is NUMBA_WHEELS[(platform, machine)]


def test_the_distribution_has_a_name_of_its_own_and_the_command_is_pecli() -> None:
    """``pecli`` on the package index is another project (``pecli 0.1.4``, "Another PE info tool")."""
    assert PYPROJECT["project"]["name"] == "pecli-tables"
    assert PYPROJECT["project"]["scripts"] == {"pecli": "pecli.cli:main"}
