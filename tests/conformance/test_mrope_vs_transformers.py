"""The mrope kind against transformers 5.23's own multimodal RoPE (Qwen2-VL, Qwen2.5-VL).

Each case is a token sequence as the processor hands it to the model (``mm_token_type_ids``, raw
``image_grid_thw``/``video_grid_thw`` before the 2×2 merge, Qwen2.5-VL's ``second_per_grid_ts``).
transformers computes the ids with the model's own ``get_rope_index`` and the cache with its own
rotary class (``references.hf_qwen_vl_mrope``); pecli computes both from the matching
``--sequence``.  Expected: the ids identical; cos and sin within the float32-pipeline bound
``4·2⁻²⁴·max(1, p)``, p the largest position id (torch's float32 cos/sin are not correctly
rounded).  Run with ``-s`` to print max |Δ| and the share of bit-identical values per table.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import references as ref
from click.testing import CliRunner

from pecli.cli import cli
from pecli.kinds import recipe_from_metadata
from pecli.kinds.mrope import Mrope, position_ids
from pecli.presets import get_preset

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="transformers is not installed"),
]

Segments = list[tuple[Any, ...]]
QWEN2, QWEN25 = "qwen2_vl", "qwen2_5_vl"
#: name, model, segments (("text", n) or (modality, t, h, w) raw grids), second_per_grid_ts,
#: head_dim, rope_theta, mrope_section.
CASES: list[tuple[str, str, Segments, list[float] | None, int, float, tuple[int, int, int]]] = [
    ("text-only", QWEN2, [("text", 40)], None, 128, 1e6, (16, 24, 24)),
    ("one-image", QWEN2, [("text", 16), ("image", 1, 16, 16), ("text", 8)], None, 128, 1e6, (16, 24, 24)),
    (
        "two-images",
        QWEN2,
        [("text", 5), ("image", 1, 12, 20), ("text", 3), ("image", 1, 8, 4), ("text", 6)],
        None,
        128,
        1e6,
        (16, 24, 24),
    ),
    ("video", QWEN2, [("text", 4), ("video", 3, 8, 8), ("text", 5)], None, 128, 1e6, (16, 24, 24)),
    # More frames than max(h, w): 5.23 starts the text at start + max(h, w), inside the frames' ids.
    ("long-video", QWEN2, [("text", 3), ("video", 6, 4, 4), ("text", 4)], None, 128, 1e6, (16, 24, 24)),
    (
        "mixed",
        QWEN2,
        [("text", 7), ("image", 1, 6, 10), ("text", 2), ("video", 2, 4, 6), ("text", 3)],
        None,
        128,
        1e6,
        (16, 24, 24),
    ),
    ("2.5-video", QWEN25, [("text", 6), ("video", 4, 4, 8), ("text", 5)], None, 128, 1e6, (16, 24, 24)),
    ("2.5-video-3fps", QWEN25, [("text", 2), ("video", 5, 4, 4), ("text", 3)], [0.6666667], 128, 1e6, (16, 24, 24)),
    (
        "2.5-mixed",
        QWEN25,
        [("text", 16), ("image", 1, 16, 16), ("text", 8), ("video", 2, 8, 8), ("text", 8)],
        [1.0],
        128,
        1e6,
        (16, 24, 24),
    ),
    ("sections-8-12-12", QWEN2, [("text", 9), ("image", 1, 10, 14), ("text", 4)], None, 64, 1e4, (8, 12, 12)),
    ("sections-24-20-20", QWEN25, [("text", 3), ("video", 3, 6, 6), ("text", 2)], [0.5], 128, 1e6, (24, 20, 20)),
    ("sections-4-6-6-far", QWEN2, [("text", 3000), ("image", 1, 20, 24), ("text", 50)], None, 32, 1e6, (4, 6, 6)),
]


def hf_inputs(segments: Segments) -> dict[str, Any]:
    """``mm_token_type_ids`` and the raw grids of a segment list (the processor's outputs)."""
    types: list[int] = []
    grids: dict[str, list[list[int]]] = {"image": [], "video": []}
    for kind, *size in segments:
        if kind == "text":
            types += [0] * size[0]
        else:
            t, h, w = size
            types += [1 if kind == "image" else 2] * (t * (h // 2) * (w // 2))
            grids[kind].append([t, h, w])
    return {
        "mm_token_type_ids": types,
        "image_grid_thw": grids["image"] or None,
        "video_grid_thw": grids["video"] or None,
    }


def sequence(segments: Segments, seconds: list[float] | None) -> str:
    """The same sequence as ``--sequence`` writes it: grids in merged tokens, a video's @seconds."""
    out, videos = [], iter(seconds or [])
    for kind, *size in segments:
        if kind == "text":
            out.append(f"text={size[0]}")
            continue
        t, h, w = size
        at = f"@{next(videos)}" if kind == "video" and seconds is not None else ""
        out.append(f"{kind}={t}x{h // 2}x{w // 2}{at}")
    return ",".join(out)


def recipe(case: tuple[Any, ...], part: str = "cos", **extra: Any) -> Mrope:
    _, model, segments, seconds, head, theta, sections = case
    tps = 2.0 if model == QWEN25 else None
    return Mrope(head, sequence(segments, seconds), theta, ";".join(map(str, sections)), tps, part, **extra)  # type: ignore[arg-type]


def theirs(case: tuple[Any, ...], x_dtype: str = "float32") -> dict[str, np.ndarray]:
    _, model, segments, seconds, head, theta, sections = case
    return ref.hf_qwen_vl_mrope(
        **hf_inputs(segments),
        second_per_grid_ts=seconds,
        model=model,
        head_dim=head,
        rope_theta=theta,
        mrope_section=sections,
        x_dtype=x_dtype,
    )


RESULTS: list[tuple[str, str, str, float, float]] = []


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_get_rope_index_ids_saved_as_int64_are_read_diffed_and_identified(
    tmp_path: Path, case: tuple[Any, ...]
) -> None:
    """A user's own ids, as ``get_rope_index`` returns them (int64, one token per column) and saved
    transposed with ``np.save``: ``pecli diff`` reads the integers exactly and finds them SAME as
    ``--part ids`` of the recipe."""
    ids = theirs(case)["position_ids"]
    assert ids.dtype == np.int64
    np.save(tmp_path / "ids.npy", ids.T)
    result = CliRunner().invoke(cli, ["diff", str(tmp_path / "ids.npy"), recipe(case, "ids").spec()])
    assert result.exit_code == 0 and result.stdout.startswith("SAME"), result.output
    # identify reads the sequence back from the ids alone (Qwen2.5-VL's videos: its tokens per second);
    # text alone is three equal columns, rope's positions, which mrope does not claim
    doc = json.loads(CliRunner().invoke(cli, ["identify", str(tmp_path / "ids.npy"), "--json"]).stdout)
    if all(kind == "text" for kind, *_ in case[2]):
        assert doc["verdict"] != "match", doc["best"]
        return
    assert doc["verdict"] == "match" and doc["kind"] == "mrope", doc.get("summary", doc)
    found = recipe_from_metadata(doc["best"]["recipe"])
    assert isinstance(found, Mrope) and found.part == "ids"
    np.testing.assert_array_equal(position_ids(found.sequence, tokens_per_second=found.tokens_per_second), ids)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_mrope_matches_transformers(case: tuple[Any, ...]) -> None:
    hf = theirs(case)
    ours = recipe(case)
    ids = position_ids(ours.sequence, tokens_per_second=ours.tokens_per_second)
    np.testing.assert_array_equal(ids, hf["position_ids"])  # get_rope_index's own ids
    # --part ids writes them, one token per row (get_rope_index's (3, tokens) transposed), exactly
    np.testing.assert_array_equal(recipe(case, "ids").build(), hf["position_ids"].T.astype(np.float32))
    p_max = int(hf["position_ids"].max())
    for part in ("cos", "sin"):
        table = recipe(case, part).build()
        assert table.shape == hf[part].shape and table.dtype == hf[part].dtype
        diff = float(np.abs(table.astype(np.float64) - hf[part]).max())
        same = float(np.mean(table == hf[part]))
        RESULTS.append((case[0], part, "x".join(map(str, table.shape)), diff, same))
        print(
            f"\n{case[0]:20s} {part} {table.shape[0]}x{table.shape[1]} (p ≤ {p_max}): max|Δ| {diff:.3g}, "
            f"{same:.4%} bit-identical"
        )
        assert diff <= 4 * 2.0**-24 * max(1, p_max), (part, diff, p_max)
    inv = recipe(case, "inv_freq").build()[0]
    assert np.max(np.abs(inv - hf["inv_freq"]) / hf["inv_freq"]) <= 2**-23  # ≤ 1 ulp (torch's pow)


@pytest.mark.parametrize("name", ["qwen2-vl", "qwen2.5-vl"])
def test_the_presets_are_the_models_default_sequence(name: str) -> None:
    """Each preset's own table is what its model's classes build for that sequence."""
    case = next(c for c in CASES if c[0] == {"qwen2-vl": "one-image", "qwen2.5-vl": "2.5-mixed"}[name])
    ours = get_preset(name).recipe().build()
    hf = theirs(case)
    assert get_preset(name).recipe() == recipe(case)
    assert np.abs(ours - hf["cos"]).max() <= 4 * 2.0**-24 * max(1, int(hf["position_ids"].max()))


def _bf16_spacing(v: np.ndarray) -> np.ndarray:
    _, e = np.frexp(np.abs(v).astype(np.float64))
    return np.ldexp(1.0, np.maximum(e - 1, -126) - 7)


@pytest.mark.parametrize("name", ["one-image", "2.5-video-3fps"])
def test_bfloat16_is_the_float32_pipeline_cast_as_torch_casts(name: str) -> None:
    """``--dtype bfloat16`` against the rotary class's output for a bfloat16 ``x`` (cos/sin in float32,
    then ``.to(x.dtype)``): equal wherever the float32 values agree, else one bfloat16 ulp apart at most."""
    case = next(c for c in CASES if c[0] == name)
    hf16, hf32 = theirs(case, "bfloat16"), theirs(case)
    p_max = int(hf32["position_ids"].max())
    for part in ("cos", "sin"):
        ours = recipe(case, part, dtype="bfloat16").build().astype(np.float32)
        ours32 = recipe(case, part).build()
        agree = ours32 == hf32[part]
        assert np.array_equal(ours[agree], hf16[part][agree])
        bound = _bf16_spacing(hf16[part]) + 4 * 2.0**-24 * max(1, p_max)
        assert np.all(np.abs(ours.astype(np.float64) - hf16[part]) <= bound), part
        print(f"\n{name:20s} {part} bf16: {np.mean(ours == hf16[part]):.4%} bit-identical")


IDENTIFIED = [
    ("one-image", "cos", "qwen2-vl"),
    ("two-images", "sin", "qwen2-vl"),
    ("mixed", "cos", "qwen2-vl"),
    ("long-video", "cos", "qwen2-vl"),
    ("2.5-video-3fps", "cos", "qwen2.5-vl"),
    ("2.5-video", "cos", "qwen2.5-vl"),
    ("2.5-mixed", "sin", "qwen2.5-vl"),
    ("sections-8-12-12", "cos", None),
    ("sections-4-6-6-far", "cos", None),
]


@pytest.mark.parametrize(("name", "part", "preset"), IDENTIFIED, ids=[f"{n}-{p}" for n, p, _ in IDENTIFIED])
def test_identify_names_a_table_transformers_wrote(tmp_path: Path, name: str, part: str, preset: str | None) -> None:
    """A cos (sin) cache written by the model's own rotary class: identify names the mrope recipe (and
    the preset whose parameters it has), proved on the whole table, and its SOURCE passes diff."""
    case = next(c for c in CASES if c[0] == name)
    path, hf = tmp_path / "cache.npy", theirs(case)
    np.save(path, hf[part])
    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["identify", str(path), "--json"]).stdout)
    print(f"\n{name:20s} {part}: {doc['verdict']} {doc['names']} max|Δ| {doc['best']['verified']['max_abs']:.3g}")
    assert doc["verdict"] == "match" and doc["kind"] == "mrope", doc.get("summary", doc)
    assert doc["best"]["verified"]["rows"] == doc["shape"][0]
    assert preset is None or preset in doc["names"], doc["names"]
    found = recipe_from_metadata(doc["best"]["recipe"])
    # The same ids (a video's seconds per frame may be a rounder number that spaces its frames alike).
    assert isinstance(found, Mrope)
    np.testing.assert_array_equal(
        position_ids(found.sequence, tokens_per_second=found.tokens_per_second), hf["position_ids"]
    )
    assert found.mrope_section == recipe(case).mrope_section and found.base == recipe(case).base
    check = runner.invoke(cli, shlex.split(doc["check"])[1:])
    assert check.exit_code == 0, check.output


@pytest.mark.parametrize("model", [QWEN2, QWEN25])
def test_position_ids_of_a_padded_batch_from_get_rope_index(tmp_path: Path, model: str) -> None:
    """``--positions @ids.npy`` with the ``(3, batch, tokens)`` ids ``get_rope_index`` returns for a
    left-padded batch of two prompts with images: every row the rotary module's cos/sin, the batch
    written sequence after sequence; padding (id 0) is no sequence, so the file has no recipe."""
    types = np.array([[0] * 5 + [1] * 6 + [0] * 3, [0] * 4 + [0] * 6 + [1] * 4])
    mask = np.array([[1] * 14, [0] * 4 + [1] * 10])
    theirs = ref.hf_qwen_vl_mrope_batch(types, mask, [[1, 4, 6], [1, 4, 4]], model)
    np.save(tmp_path / "ids.npy", theirs["position_ids"])
    preset = "qwen2-vl" if model == QWEN2 else "qwen2.5-vl"
    p = float(theirs["position_ids"].max())
    for part in ("cos", "sin"):
        out = tmp_path / f"{part}.npy"
        args = [
            "generate",
            "--preset",
            preset,
            "--part",
            part,
            "--positions",
            f"@{tmp_path / 'ids.npy'}",
            "-o",
            str(out),
        ]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        ours, want = np.load(out), theirs[part].reshape(28, 128)
        diff = float(np.abs(ours.astype(np.float64) - want).max())
        print(f"\npadded batch {model} {part}: max|Δ| {diff:.3g}, {np.mean(ours == want):.2%} bit-identical")
        assert ours.shape == want.shape and diff <= 4 * 2.0**-24 * max(1.0, p)
        assert not (tmp_path / f"{part}.npy.json").exists()  # ids with padding follow no sequence: no recipe


def test_ids_that_follow_get_rope_index_keep_their_recipe(tmp_path: Path) -> None:
    types = [0] * 5 + [1] * 6 + [0] * 3
    theirs = ref.hf_qwen_vl_mrope(types, image_grid_thw=[[1, 4, 6]])
    np.save(tmp_path / "ids.npy", theirs["position_ids"][:, None, :])  # (3, 1, tokens), as the model returns them
    out = tmp_path / "cos.npy"
    result = CliRunner().invoke(
        cli, ["generate", "--preset", "qwen2-vl", "--positions", f"@{tmp_path / 'ids.npy'}", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    recipe = recipe_from_metadata(json.loads((tmp_path / "cos.npy.json").read_text())["recipe"])
    assert recipe == get_preset("qwen2-vl").recipe(sequence="text=5;image=1x2x3;text=3")
    assert np.array_equal(np.load(out), recipe.build())


@pytest.mark.parametrize("sequence", ["text=4;image=1x6x8;text=3", "text=10;image=1x16x16;text=20;video=2x8x8;text=5"])
def test_qwen3_vl_interleaved_sections_are_transformers_own(sequence: str) -> None:
    """``Qwen3VLTextRotaryEmbedding`` (its ``recomposition_frequencies`` interleaves the sections,
    whatever the config says) on the ids of ``sequence``: ``--mrope-interleaved`` within the
    float32 bound, and identify names it with interleaved sections."""
    torch = ref._torch()
    from transformers import Qwen3VLTextConfig
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

    from pecli.identification import identify
    from pecli.table import Table

    ids = position_ids(sequence)
    config = Qwen3VLTextConfig(
        head_dim=128, hidden_size=128, num_attention_heads=1, num_key_value_heads=1,
        rope_parameters={"rope_type": "default", "rope_theta": 500000.0, "mrope_section": [24, 20, 20]},
    )  # fmt: skip
    with torch.no_grad():
        cos, _ = Qwen3VLTextRotaryEmbedding(config)(torch.zeros(1), torch.as_tensor(ids[:, None, :]))
    theirs = cos[0].numpy().astype(np.float64)
    recipe = Mrope(128, sequence, 500000.0, "24;20;20", mrope_interleaved=True)
    bound = 4 * 2.0**-24 * max(1.0, float(ids.max()))
    gap = float(np.abs(recipe.build().astype(np.float64) - theirs).max())
    print(sequence, "max |Δ|", gap)
    assert gap <= bound
    assert float(np.abs(Mrope(128, sequence, 500000.0, "24;20;20").build() - theirs).max()) > 0.1  # chunked is not it
    found = identify(Table(theirs.astype(np.float32), None, "qwen3vl.npy"))
    assert found.verdict == "match" and found.best is not None, found.summary
    assert getattr(found.best.recipe, "mrope_interleaved", False), found.summary
