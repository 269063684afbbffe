"""The rope kind's reduced pipelines (pecli.precision) against torch and transformers 5.23.0 doing the
casts the reports describe, with their own code:

* ``inv-float16`` / ``inv-bfloat16``: ``LlamaRotaryEmbedding`` after ``module.half()`` /
  ``module.to(torch.bfloat16)`` (the ``inv_freq`` buffer is cast; ``forward`` takes ``.float()`` of it);
* ``positions-bfloat16``: the same module's ``forward`` given bfloat16 ``position_ids`` (its
  ``position_ids[:, None, :].float()`` keeps the bfloat16 values);
* ``bfloat16``: the cache code of GPT-NeoX-era rotary classes after a bfloat16 cast,
  ``t = torch.arange(n, dtype=inv_freq.dtype)``, ``freqs = torch.outer(t, inv_freq)``, ``freqs.cos()``,
  every op a bfloat16 one.

Each table within the float32-pipeline bound ``4·2⁻²⁴·max(1, p)`` of pecli's (torch's float32 cos is
not correctly rounded; a bfloat16 step is then at most one bfloat16 ulp off), and ``identify`` names
the pipeline on torch's own table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import references as ref

from pecli.identification import identify
from pecli.kinds.rope import Rope
from pecli.table import Table

pytestmark = ref.marks("transformers", "torch")

N, DIM, THETA = 4096, 128, 10000.0


def _llama(cast: str | None, positions: str | None) -> np.ndarray:
    torch = ref._torch()
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(
        vocab_size=8, hidden_size=DIM, intermediate_size=4, num_hidden_layers=1, num_attention_heads=1,
        head_dim=DIM, max_position_embeddings=N, rope_parameters={"rope_type": "default", "rope_theta": THETA},
    )  # fmt: skip
    with torch.no_grad():
        module = LlamaRotaryEmbedding(config)
        if cast is not None:
            module = module.to(getattr(torch, cast))
        ids = ref._position_ids(range(N))
        if positions is not None:
            ids = ids.to(getattr(torch, positions))
        cos, _ = module(torch.zeros(1, dtype=torch.float32), ids)
        return ref._np(cos[0].float())


def _neox_bfloat16() -> np.ndarray:
    torch = ref._torch()
    with torch.no_grad():
        inv_freq = (1.0 / (THETA ** (torch.arange(0, DIM, 2).float() / DIM))).to(torch.bfloat16)
        t = torch.arange(N, dtype=inv_freq.dtype)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return ref._np(emb.cos().float())


CASES: dict[str, Any] = {
    "inv-float16": lambda: _llama("float16", None),
    "inv-bfloat16": lambda: _llama("bfloat16", None),
    "positions-bfloat16": lambda: _llama(None, "bfloat16"),
    "bfloat16": _neox_bfloat16,
}


@pytest.mark.parametrize("compute", list(CASES))
def test_each_reduced_pipeline_is_torchs_within_the_float32_bound(compute: str) -> None:
    theirs = CASES[compute]()
    ours = Rope(N, DIM, base=THETA, compute=compute).build()  # type: ignore[arg-type]
    p = np.arange(N, dtype=np.float64)[:, None]
    bound = 4 * 2.0**-24 * np.maximum(1.0, p)
    if compute == "bfloat16":
        bound = np.maximum(bound, 2.0**-8)  # one bfloat16 ulp at 1.0: torch's cos may round the other way
    gap = np.abs(ours.astype(np.float64) - theirs)
    print(compute, "max |Δ|", gap.max())
    assert np.all(gap <= bound), (compute, float(gap.max()))
    # the float32 pipeline is no stand-in: it is far from torch's reduced table
    assert np.abs(Rope(N, DIM, base=THETA).build().astype(np.float64) - theirs).max() > 1e-2


@pytest.mark.parametrize("compute", list(CASES))
def test_identify_names_the_pipeline_on_torchs_table(compute: str) -> None:
    found = identify(Table(CASES[compute]().astype(np.float32), None, f"{compute}.npy"))
    assert found.verdict == "match" and found.best is not None, found.summary
    assert getattr(found.best.recipe, "compute", None) == compute, found.summary
