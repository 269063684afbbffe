"""keras-hub's rotary dialect (issue 24): ``--form neg-pow`` takes ``base^(−2i/dim)`` in one float32
pow, and ``--scaling keras-dynamic`` divides every frequency by ``factor^(dim/(dim−2))``.

Truth: mpmath at 60 digits, rounded once to float32 (a correctly rounded pow, which the float32
pipeline's one pow is); keras-hub's own layer is in ``tests/conformance/test_rope_vs_keras_hub.py``.
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
    with pytest.raises(RecipeError, match="goes with --compute float32"):
        Rope(16, 64, form="neg-pow", compute="exact")


def test_a_config_cannot_name_kerass_dynamic(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # keras-dynamic is keras-hub's, not a rope_type of transformers: a config.json naming it is refused.
    import json

    from pecli.errors import PecliInputError
    from pecli.hfconfig import recipe_from_config

    config = {
        "model_type": "llama",
        "hidden_size": 256,
        "num_attention_heads": 4,
        "max_position_embeddings": 64,
        "rope_scaling": {"rope_type": "keras-dynamic", "factor": 2.0},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(PecliInputError, match="rope_type 'keras-dynamic' is not one pecli builds"):
        recipe_from_config(path)
