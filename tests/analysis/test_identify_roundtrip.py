"""identify's round trip (issue 41): every preset and 500 drawn recipes, built by pecli, named back
by identify with a recipe that rebuilds the table (scripts/identify_roundtrip.py).  No false match
ever; the share named must not fall below what it was measured at when the test was written (the
misses are listed in docs/diff-identify.md as limits)."""

from __future__ import annotations

import io

import pytest

from tests.helpers import load_script

roundtrip = load_script("identify_roundtrip")

#: Measured on 2026-11-29 (seed 41): 368 of 570 named (64.6 %) when the test was written; 533 of
#: 570 (93.5 %) once axial, rope2d, M-RoPE angle and bfloat16 tables, bfloat16 sinusoids, short
#: xPos and CogVideoX grids and pecli's own learned draws were read back; 560 of 570 (98.2 %) once
#: one- and two-row tables, odd-width and cast inv_freq rows, 16-bit angle tables and float16
#: M-RoPE angles were (560 again once xPos's layout and the proportional scaling changed the draws); 563
#: of 570 (98.8 %) once litgpt's odd dims, vit-pytorch's grids and caches whose bfloat16 position ids
#: repeat the first rows were, and 560 on the draws xPos's rotary factor and centre brought (the draws
#: follow the kinds' parameters); 0 false matches.  The misses are in docs/diff-identify.md ("What
#: identify does not reach").  Issue 41 asks for 98 %: the floor (559 of 570) is that goal.
NAMED_FLOOR = 0.98


@pytest.mark.slow
def test_identify_names_what_pecli_builds_and_never_matches_falsely() -> None:
    results = roundtrip.run(500, 41, with_presets=True, out=io.StringIO())
    text = roundtrip.summary(results)
    print(text)
    assert not [r for r in results if r.false_match], text
    presets = [r for r in results if r.label.startswith("preset ")]
    assert all(r.named for r in presets), text
    assert sum(r.named for r in results) >= NAMED_FLOOR * len(results), text


def test_a_few_draws_round_trip_in_the_quick_suite() -> None:
    results = roundtrip.run(12, 7, with_presets=False, out=io.StringIO())
    assert len(results) == 12 and not any(r.false_match for r in results), roundtrip.summary(results)
