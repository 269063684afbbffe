"""HDF5 links: pecli resolves every link of a key inside the file and reads nothing outside it.

libhdf5 follows soft and external links anywhere on a path, so checking only a key's last link is
not enough: ``g -> secret.h5:/`` plus ``pe -> /g/pe`` would read secret.h5 through ``evil.h5:pe``.
Every refusal must be exit 2, one ``Error:`` line naming the key and the link, nothing on stdout,
no output file, and none of secret.h5's values anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pecli.cli import cli
from pecli.errors import FormatError
from pecli.formats import list_arrays, open_table

SECRET = np.full((3, 2), 271828.5)  # the values that must never come out
MINE = np.arange(6, dtype="f8").reshape(3, 2) + 0.25
OUTSIDE = "pecli reads nothing outside the file"
LINK_OUT = "{} is an external link to {} in secret.h5: pecli does not follow links out of the file"


def _secret(d: Path) -> None:
    with h5py.File(d / "secret.h5", "w") as f:
        f["pe"] = SECRET
        f["hidden_name"] = SECRET


def _intermediate(f: h5py.File) -> None:
    f["g"] = h5py.ExternalLink("secret.h5", "/")
    f["pe"] = h5py.SoftLink("/g/pe")


def _last(f: h5py.File) -> None:
    f["pe"] = h5py.ExternalLink("secret.h5", "/pe")


def _deep(f: h5py.File) -> None:
    # a hard group, a relative soft link in it, then the external link
    f.create_group("a")
    f["a/t"] = h5py.SoftLink("u")
    f["a/u"] = h5py.SoftLink("/ext")
    f["ext"] = h5py.ExternalLink("secret.h5", "/")


def _loop(f: h5py.File) -> None:
    f["a"] = h5py.SoftLink("/b")
    f["b"] = h5py.SoftLink("/a")
    f["pe"] = h5py.SoftLink("/a")


def _virtual(f: h5py.File) -> None:
    layout = h5py.VirtualLayout(shape=SECRET.shape, dtype="f8")
    layout[:] = h5py.VirtualSource("secret.h5", "pe", shape=SECRET.shape)
    f.create_virtual_dataset("pe", layout)


def _external_storage(f: h5py.File) -> None:
    f.create_dataset("pe", SECRET.shape, "f8", external=[("raw.bin", 0, h5py.h5f.UNLIMITED)])


def _build(d: Path, build: Callable[[h5py.File], None]) -> None:
    _secret(d)
    with h5py.File(d / "evil.h5", "w") as f:
        build(f)
        f["mine"] = MINE  # a harmless dataset beside the trap
    (d / "raw.bin").write_bytes(SECRET.astype("<f8").tobytes())
    np.save(d / "ref.npy", MINE)


REFUSED = [
    pytest.param(_intermediate, "pe", LINK_OUT.format("evil.h5:pe: g", "/"), id="soft-through-external"),
    pytest.param(_intermediate, "g/pe", LINK_OUT.format("evil.h5:g/pe: g", "/"), id="external-group"),
    pytest.param(_last, "pe", LINK_OUT.format("evil.h5:pe: pe", "/pe"), id="external-last"),
    pytest.param(_deep, "a/t/pe", LINK_OUT.format("evil.h5:a/t/pe: ext", "/"), id="relative-soft-chain"),
    pytest.param(
        _loop, "pe", "evil.h5:pe: more than 16 soft links to follow (at b -> /a); the links loop", id="soft-loop"
    ),
    pytest.param(_virtual, "pe", "evil.h5:pe is a virtual dataset (its data is in secret.h5); " + OUTSIDE, id="vds"),
    pytest.param(
        _external_storage, "pe", "evil.h5:pe keeps its data in external files (raw.bin); " + OUTSIDE, id="ext-storage"
    ),
]

COMMANDS = {
    "inspect": lambda src: ["inspect", src],
    "inspect-json": lambda src: ["inspect", src, "--json"],
    "export": lambda src: ["export", src, "-o", "out.npy"],
    "diff-a": lambda src: ["diff", src, "ref.npy"],
    "diff-b": lambda src: ["diff", "ref.npy", src],
}


def _run(d: Path, args: list[str]):
    return CliRunner().invoke(cli, args, env={"COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb"})


def _assert_secret_absent(text: str) -> None:
    assert "271828" not in text and "2.71828" not in text and "hidden_name" not in text, text


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize(("build", "key", "message"), REFUSED)
def test_refused_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: Callable, key: str, message: str, command: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _build(tmp_path, build)
    before = sorted(p.name for p in tmp_path.iterdir())
    r = _run(tmp_path, COMMANDS[command](f"evil.h5:{key}"))
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert r.stdout == ""
    assert r.stderr == f"Error: {message}\n"
    assert "Traceback" not in r.output
    _assert_secret_absent(r.output)
    assert not (tmp_path / "out.npy").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no partial output either


@pytest.mark.parametrize(("build", "key", "message"), REFUSED)
def test_refused_by_the_library(tmp_path: Path, build: Callable, key: str, message: str) -> None:
    _build(tmp_path, build)
    with pytest.raises(FormatError) as info, open_table(tmp_path / "evil.h5", key=key):
        pass
    assert str(info.value) == message.replace("evil.h5", str(tmp_path / "evil.h5"), 1)


def test_soft_links_inside_the_file_still_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _secret(tmp_path)
    with h5py.File(tmp_path / "ok.h5", "w") as f:
        f["data/x"] = MINE
        f["pe"] = h5py.SoftLink("/data/x")  # absolute
        f["data/alias"] = h5py.SoftLink("x")  # relative to its group
        f["via"] = h5py.SoftLink("/data")  # a soft link to a group, then a name in it
        f["a"] = h5py.SoftLink("/b")  # a chain of soft links that ends
        f["b"] = h5py.SoftLink("/pe")
    for key in ("pe", "/pe", "data/alias", "via/x", "via/alias", "a", "./data//x"):
        with open_table(tmp_path / "ok.h5", key=key) as t:
            np.testing.assert_array_equal(t.rows(0, 3), MINE)
    r = _run(tmp_path, ["inspect", "ok.h5:via/alias"])
    assert r.exit_code == 0, r.output
    assert "5.2500" in r.stdout
    r = _run(tmp_path, ["export", "ok.h5:a", "-o", "out.npy"])
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), MINE)


def test_missing_link_target_is_no_dataset(tmp_path: Path) -> None:
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f["pe"] = h5py.SoftLink("/nowhere")
        f["x"] = MINE
        f["y"] = MINE
    with pytest.raises(FormatError, match=r"has no dataset 'pe': its datasets are x, y"):
        with open_table(tmp_path / "d.h5", key="pe"):
            pass
    with pytest.raises(FormatError, match=r"has no dataset 'x/pe'"):  # a path through a dataset
        with open_table(tmp_path / "d.h5", key="x/pe"):
            pass


@pytest.mark.parametrize(
    "build", [pytest.param(b, id=n) for b, n in ((_intermediate, "intermediate"), (_last, "last"), (_deep, "deep"))]
)
def test_listing_never_follows_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: Callable) -> None:
    monkeypatch.chdir(tmp_path)
    _build(tmp_path, build)
    with h5py.File(tmp_path / "evil.h5", "a") as f:
        f["other"] = MINE
    assert [a.key for a in list_arrays(tmp_path / "evil.h5") or []] == ["mine", "other"]
    r = _run(tmp_path, ["inspect", "evil.h5"])
    assert r.exit_code == 0, r.output
    assert "mine" in r.stdout and "other" in r.stdout
    _assert_secret_absent(r.output)
    r = _run(tmp_path, ["inspect", "evil.h5", "--json"])
    assert r.exit_code == 0, r.output
    assert [a["key"] for a in json.loads(r.stdout)["arrays"]] == ["mine", "other"]


def test_default_key_never_follows_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key given: 'pe' is a link out of the file, so the file's only stored table is read instead."""
    monkeypatch.chdir(tmp_path)
    _build(tmp_path, _intermediate)
    r = _run(tmp_path, ["export", "evil.h5", "-o", "out.npy"])
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), MINE)
    with h5py.File(tmp_path / "only.h5", "w") as f:
        _intermediate(f)
    r = _run(tmp_path, ["inspect", "only.h5"])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", "Error: only.h5 holds no arrays\n")
