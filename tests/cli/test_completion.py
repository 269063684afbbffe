"""Shell completion: files, FILE:KEY keys read from the file, preset and kind names, a recipe's
parameters, through Click's own completion machinery and through a real `pecli` process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.shell_completion import ShellComplete

from pecli.cli import cli
from pecli.kinds import field_names, kinds
from pecli.presets import PRESETS


def complete(args: list[str], incomplete: str) -> list[tuple[str, str]]:
    comp = ShellComplete(cli, {}, "pecli", "_PECLI_COMPLETE")
    return [(c.type, c.value) for c in comp.get_completions(args, incomplete)]


def test_a_source_completes_to_kinds_presets_and_files() -> None:
    got = complete(["inspect"], "")
    names = {v[:-1] for t, v in got if t == "plain"}
    assert names == set(kinds()) | set(PRESETS)  # read from the registries
    assert ("file", "") in got
    assert complete(["diff", "a.npy"], "fair") == [("plain", "fairseq:"), ("file", "fair")]


def test_file_key_completes_to_the_arrays_inside(tmp_path: Path) -> None:
    path = tmp_path / "ck.npz"
    np.savez(path, wpe=np.zeros((4, 4)), wte=np.zeros((2, 4)), other=np.ones((2, 2)))
    assert complete(["export"], f"{path}:w") == [("plain", f"{path}:wpe"), ("plain", f"{path}:wte")]
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"PK\x03\x04 not a zip")
    assert complete(["inspect"], f"{broken}:") == []  # an unreadable file completes to nothing


@pytest.mark.parametrize("kind", sorted(kinds()))
def test_a_recipe_operand_completes_its_parameters(kind: str) -> None:
    names = ["len" if f == "length" else f for f in field_names(kind)]
    got = complete(["identify"], f"{kind}:")
    assert got == [("plain", f"{kind}:{n}=") for n in names]
    # Parameters already given are not offered again.
    first = names[0]
    again = complete(["identify"], f"{kind}:{first}=8,")
    assert again == [("plain", f"{kind}:{first}=8,{n}=") for n in names if n != first]


def test_preset_option_and_output_path() -> None:
    assert complete(["generate", "--preset"], "hf-x") == [("plain", "hf-xglm"), ("plain", "hf-xlm")]
    assert complete(["generate", "--len", "4", "--dim", "4", "-o"], "t") == [("file", "t")]
    assert ("plain", "--to") in complete(["generate"], "--t")


def test_a_real_process_answers_bash_and_prints_each_shell_script(tmp_path: Path) -> None:
    env = {**os.environ, "_PECLI_COMPLETE": "bash_complete", "COMP_WORDS": "pecli inspect fair", "COMP_CWORD": "2"}
    r = subprocess.run([sys.executable, "-m", "pecli"], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.splitlines() == ["plain,fairseq:", "file,fair"]
    for shell in ("bash", "zsh", "fish"):
        env = {**os.environ, "_PECLI_COMPLETE": f"{shell}_source"}
        script = subprocess.run([sys.executable, "-m", "pecli"], env=env, capture_output=True, text=True, timeout=60)
        assert script.returncode == 0 and "_PECLI_COMPLETE" in script.stdout, shell
