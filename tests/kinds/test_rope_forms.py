"""Rotary dialects of other libraries (issue 24): keras-hub's ``--form neg-pow`` (``base^(−2i/dim)``
in one float32 pow) and ``--scaling keras-dynamic`` (every frequency over ``factor^(dim/(dim−2))``),
and litgpt's YaRN (``--scaling litgpt-yarn``: its ramp weighs the extrapolated frequencies, it stops
at ``dim/2 − 1``, and its attention factor applies only with mscale).

Truth: mpmath at 60 digits, rounded once to float32 (a correctly rounded pow, which the float32
pipeline's one pow is), and litgpt's formulas written out here; keras-hub's and litgpt's own code is
in ``tests/conformance/test_rope_vs_keras_hub.py`` and ``test_rope_vs_litgpt.py``.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from pecli.errors import RecipeError
from pecli.kinds.rope import Rope


@pytest.mark.parametrize(("dim", "base"), [(128, 10000.0), (64, 500000.0), (96, 1e6)])
def test_neg_pow_is_one_rounding_of_the_power(dim: int, base: float) -> None:
    mpmath.mp.dps = 60
    exponents = np.arange(0, dim, 2).astype(np.float32) / np.float32(dim)  # keras: float32 idx / float32 dim
    exact = [np.float32(float(mpmath.power(mpmath.mpf(base), -mpmath.mpf(float(e))))) for e in exponents]
    np.testing.assert_array_equal(Rope(16, dim, base=base, form="neg-pow").inv_freq(), np.array(exact))
    # transformers' 1 / base^e rounds twice: not the same float32 values.
    assert not np.array_equal(Rope(16, dim, base=base).inv_freq(), np.array(exact))


@pytest.mark.parametrize(("dim", "factor"), [(64, 4.0), (128, 2.0), (8, 8.0)])
def test_keras_dynamic_divides_every_frequency_by_the_factors_power(dim: int, factor: float) -> None:
    mpmath.mp.dps = 60
    got = Rope(16, dim, scaling="keras-dynamic", factor=factor, compute="exact", dtype="float64").inv_freq()
    for i, value in enumerate(got):
        exact = mpmath.power(10000, -mpmath.mpf(2 * i) / dim) / mpmath.power(factor, mpmath.mpf(dim) / (dim - 2))
        assert abs(value - float(exact)) <= 2 * np.spacing(value), (i, value, exact)


def test_neg_pow_is_a_float32_pipelines_rounding() -> None:
    with pytest.raises(RecipeError, match="goes with compute=float32"):
        Rope(16, 64, form="neg-pow", compute="exact")


@pytest.mark.parametrize("rope_type", ["keras-dynamic", "litgpt-yarn"])
def test_a_config_cannot_name_another_librarys_scaling(tmp_path, rope_type: str) -> None:  # type: ignore[no-untyped-def]
    # These are keras-hub's and litgpt's, not rope_types of transformers: a config.json naming one is refused.
    import json

    from pecli.errors import PecliInputError
    from pecli.hfconfig import recipe_from_config

    config = {
        "model_type": "llama",
        "hidden_size": 256,
        "num_attention_heads": 4,
        "max_position_embeddings": 64,
        "rope_scaling": {"rope_type": rope_type, "factor": 2.0},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(PecliInputError, match=f"rope_type '{rope_type}' is not one pecli builds"):
        recipe_from_config(path)


@pytest.mark.parametrize(("dim", "factor", "orig"), [(64, 4.0, 4096), (128, 8.0, 2048), (32, 16.0, 1024)])
def test_litgpt_yarn_weighs_the_extrapolated_frequencies_by_the_ramp(dim: int, factor: float, orig: int) -> None:
    import math

    base, half = 10000.0, dim // 2

    def correction(rotations: float) -> float:
        return dim * math.log(orig / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(correction(32)), 0), min(math.ceil(correction(1)), half - 1)
    ramp = np.clip((np.arange(half) - low) / (high - low), 0, 1)
    plain = base ** (-np.arange(0, dim, 2) / dim)
    expected = plain / factor * (1 - ramp) + plain * ramp
    recipe = Rope(16, dim, scaling="litgpt-yarn", factor=factor, original_max_position_embeddings=orig)
    np.testing.assert_allclose(recipe.with_params(compute="exact", dtype="float64").inv_freq(), expected, rtol=1e-14)
    # No mscale: cos and sin are not scaled (transformers' yarn multiplies them by 0.1·ln f + 1).
    assert recipe.attention_scaling() == 1.0
    assert Rope(16, dim, scaling="yarn", factor=factor, original_max_position_embeddings=orig).attention_scaling() > 1
    mscale = recipe.with_params(mscale=1.0)
    assert mscale.attention_scaling() == pytest.approx(0.1 * math.log(factor) + 1, rel=1e-15)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("dim", "theta", "factor"), [(64, 10000.0, 2.0), (128, 10000.0, 4.0), (32, 500000.0, 1.5)])
def test_an_ntk_rescaled_base_is_known_for_its_formula(dim: int, theta: float, factor: float) -> None:
    # θ·f^(d/(d−2)) (x-transformers' base_rescale_factor, rotary-embedding-torch's theta_rescale_factor)
    # has 17 digits but was chosen: diff says it with its formula.
    recipe = Rope(16, dim, base=theta * factor ** (dim / (dim - 2)))
    assert recipe.rescaled_base() == (theta, factor)
    assert Rope(16, dim, base=10123.456789012).rescaled_base() is None
    assert recipe.value_words("base", recipe.base).endswith(f"({theta:g}·{factor:g}^({dim}/{dim - 2}))")


def test_a_form_only_stays_where_the_scaling_uses_it() -> None:
    # yarn, longrope, dynamic and litgpt-yarn take 1/base^(2i/dim) themselves (keras-hub's yarn too):
    # --preset keras-hub-rope --scaling yarn is transformers' yarn, and its recipe says form=pow.
    yarn = Rope(64, 64, form="neg-pow", scaling="yarn", factor=4.0, original_max_position_embeddings=1024)
    assert yarn.form == "pow" and yarn.pipeline() == "float32"
    llama3 = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 16}
    kept = Rope(64, 64, form="neg-pow", scaling="llama3", **llama3)  # type: ignore[arg-type]
    assert kept.form == "neg-pow"  # llama3 starts from the default inv_freq: the form changes it
    assert not np.array_equal(kept.inv_freq(), Rope(64, 64, scaling="llama3", **llama3).inv_freq())  # type: ignore[arg-type]


def test_a_round_base_is_not_said_as_a_rescaled_one() -> None:
    # 10000 = 2500·2^(4/2): a 4-wide recipe's round base is what it says.
    recipe = Rope(16, 4, base=10000.0)
    assert recipe.rescaled_base() is None and recipe.value_words("base", 500000.0) == "500000"
