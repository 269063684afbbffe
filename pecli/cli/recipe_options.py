"""The recipe options: one per parameter of any kind, plus where the recipe starts from
(``--preset``, ``--hf-config``, ``--kind``).  Stacked on every command that builds or names a
recipe (``generate``, ``export``, ``inspect``, ``identify``, ``analyze``, ``plot``); a test holds
them to the kinds' fields both ways, and each kind's default is read from the kind for ``--help``.
"""

from __future__ import annotations

from pecli.cli.options import completion, field_choices, kind_names, recipe_option, shared_stack
from pecli.cli.paramtypes import LazyChoice


def _dtypes() -> tuple[str, ...]:
    """Every kind's dtypes, then the complex ones a table with (real, imaginary) column pairs is
    stored in (:data:`pecli.dtypes.COMPLEX`)."""
    from pecli.dtypes import COMPLEX

    return field_choices("dtype")() + tuple(COMPLEX)


#: Every recipe option, in the order ``--help`` lists them.
recipe_options = shared_stack(
    recipe_option(
        "--preset",
        metavar="NAME",
        shell_complete=completion("complete_preset"),
        help="Start from a framework's table (see `pecli presets`); other recipe options override it.",
    ),
    recipe_option(
        "--hf-config",
        metavar="CONFIG",
        shell_complete=completion("complete_file"),
        help="Start from a transformers model's config.json (or its directory, or a llama.cpp .gguf): the "
        "cos/sin cache (or sinusoid) transformers 5.23 builds for it, without torch; other recipe options "
        "override it.  "
        "CONFIG:LAYER picks a layer type's RoPE where they differ (Gemma 3: config.json:full_attention).",
    ),
    recipe_option(
        "--kind",
        type=LazyChoice(kind_names),
        default=None,
        help="Recipe kind (default sinusoidal; --grid/--order/--cls imply sincos2d, --heads alibi, "
        "--scaling rope, --std/--init/--seed/--rng learned, --sequence mrope, --axes-dim/--tokens axial, "
        "--scale-base xpos, --feat-shape rope2d).",
    ),
    recipe_option("--len", "length", type=int, metavar="N", help="Number of positions (rows)."),
    recipe_option(
        "--dim",
        type=int,
        metavar="D",
        help="Model width d_model (columns); odd D is allowed (rope: D−1 columns, D with --odd truncate).",
    ),
    recipe_option(
        "--base",
        type=float,
        default=None,
        metavar="B",
        help="Frequency base (max timescale; temperature for grids): ω_i = B^(−2i/D).",
    ),
    recipe_option(
        "--layout",
        type=LazyChoice(field_choices("layout")),
        default=None,
        help="interleaved: sin,cos,sin,cos… (the paper); split: all sin columns, then all cos (HuggingFace); "
        "cos-first: all cos, then all sin (MusicGen).  rope (default half): half = [f0…f_{h−1}, f0…f_{h−1}] "
        "(HF rotate_half, GPT-NeoX); pairs = [f0, f0, f1, f1, …] (GPT-J, lucidrains); once = [f0…f_{h−1}] "
        "(HF's freqs, Meta's freqs_cis).  rope2d: half = timm's rotate_half=True.  xpos: pairs (default, "
        "rotary-embedding-torch) or half (PaLM-rlhf-pytorch's torch.cat((scale, scale))).",
    ),
    recipe_option(
        "--start",
        type=int,
        default=None,
        metavar="P",
        help="Position of the first row (e.g. a past-key-values offset).",
    ),
    recipe_option(
        "--dtype",
        type=LazyChoice(_dtypes),
        default=None,
        help="Output dtype; values are computed in extended precision and rounded once (a "
        "framework's float32 pipeline: from its float32 values, as torch casts them).  complex64/complex128: "
        "rope --part cis as complex numbers, cos + i·sin (Meta's freqs_cis), in .npy/.npz/.h5/.pt "
        "(.safetensors: complex64).",
    ),
    recipe_option(
        "--freq",
        type=LazyChoice(field_choices("freq")),
        default=None,
        help="Frequency rule: paper B^(−2i/D); t2t B^(−i/(half−1)) (tensor2tensor, fairseq, Whisper); "
        "half B^(−i/half).  sincos2d, each axis's q frequencies: paper B^(−k/q) (MAE, timm); "
        "t2t B^(−k/(q−1)) (vit-pytorch); loftr-bug e^(−2k) whatever B (--order loftr: kornia's LoFTR, "
        "temp_bug_fix=False).",
    ),
    recipe_option(
        "--coords",
        type=LazyChoice(field_choices("coords")),
        default=None,
        help="sincos2d --order tatp or loftr, an HxW grid: each axis's coordinate of cell c (0-based, m cells): "
        "index = c "
        "(default); DETR's PositionEmbeddingSine: count = c + 1 (normalize=False), detr = (c + 1)/(m + 1e-6)·2π "
        "(normalize=True: DETR, Conditional DETR, Mask2Former), deformable = (c + 0.5)/(m + 1e-6)·2π "
        "(Deformable DETR); LoFTR counts from 1 too.  Their (d, H, W) map is this table transposed: "
        "pos.flatten(1).T.",
    ),
    recipe_option(
        "--min-timescale",
        type=float,
        default=None,
        metavar="M",
        help="tensor2tensor's min_timescale: ω_i = M·(B/M)^(−e_i).",
    ),
    recipe_option(
        "--scale",
        type=float,
        default=None,
        metavar="S",
        help="sinusoidal: every value times S, in the pipeline's dtype (exact: before the one rounding); "
        "x-transformers' ScaledSinusoidalEmbedding starts at dim^-0.5 (its preset follows --dim).",
    ),
    recipe_option(
        "--odd",
        type=LazyChoice(field_choices("odd")),
        default=None,
        help="Odd D: sin = one more sin column (HF); zero = zero last column (fairseq); "
        "truncate = build D+1, drop the last (positional-encodings); error = refuse.  "
        "rope: drop = D//2 frequencies over D−1 columns, the last feature unrotated (rotary-embedding-torch); "
        "truncate = ⌈D/2⌉ frequencies base^(−2i/D), the layout's last column cut (litgpt).",
    ),
    recipe_option(
        "--padding-idx",
        type=int,
        default=None,
        metavar="K",
        help="fairseq's padding row: K+1 rows before the positions, row K zero (first token at row K+1); "
        "learned too (RoBERTa: 1).",
    ),
    recipe_option(
        "--compute",
        type=LazyChoice(field_choices("compute")),
        default=None,
        help="exact: one rounding from the exact value; float64/float32: the framework's own pipeline; "
        'bfloat16 (sinusoidal, rope): that pipeline with every step rounded to bfloat16 (keras\' dtype="bfloat16"). '
        "rope also: inv-float16, inv-bfloat16 (inv_freq cast with the model), positions-bfloat16 (rows repeat "
        "past 256): the porting bugs of docs/pipelines.md.",
    ),
    recipe_option(
        "--form",
        type=LazyChoice(field_choices("form")),
        default=None,
        help="How that pipeline evaluates frequencies: exp(−k·ln B/n), exp((−ln B·k)/n) (exp-div: diffusers' "
        "timesteps), 1/B^(k/n) (pow), (1/B)^(k/n) (inv-pow: keras-hub's SinePositionEncoding), "
        "B^(−k/n) (neg-pow: x-transformers), or p/B^(k/n) (div).  "
        "alibi slopes: list (ofirpress, default), pow (Bloom), recip (MPT).  rope's float32 inv_freq: pow "
        "(default, 1/B^(2i/d): HF, vLLM, torchtune) or neg-pow (B^(−2i/d) in one pow: keras-hub).",
    ),
    recipe_option(
        "--base-grid",
        metavar="HxW",
        help="axial video: the grid the model was trained at (CogVideoX 1.0: 30x45); another video grid's rows and "
        "columns take the fractional positions of its centered crop into it, as CogVideoXPipeline gives them.",
    ),
    recipe_option(
        "--grid", metavar="HxW", help="sincos2d: the grid, e.g. 14x14 (FxHxW: --order mae, tatp or cogvideox)."
    ),
    recipe_option(
        "--order",
        type=LazyChoice(field_choices("order")),
        default=None,
        help="sincos2d: row and column order (mae, timm…, tatp = positional-encodings and DETR, cogvideox = "
        "diffusers 3-D; mae on FxHxW = vit-pytorch 3-D: six blocks of D//6, zero columns after; loftr = LoFTR's "
        "[sin x, cos x, sin y, cos y] a frequency, with --coords count).",
    ),
    recipe_option("--cls/--no-cls", default=False, help="sincos2d: a zero class-token row first."),
    recipe_option(
        "--extra-tokens",
        type=int,
        default=None,
        metavar="N",
        help="sincos2d: N zero rows first (diffusers' get_2d_sincos_pos_embed cls_token=True, extra_tokens=N).",
    ),
    recipe_option(
        "--interpolation-scale",
        type=float,
        default=None,
        metavar="S",
        help="sincos2d: diffusers' interpolation_scale, grid coordinates divided by S (PixArt 1024: 2).",
    ),
    recipe_option(
        "--base-size",
        type=int,
        default=None,
        metavar="N",
        help="sincos2d: diffusers' base_size, an axis of m cells scaled by N/m (PixArt: sample_size/patch_size).",
    ),
    recipe_option(
        "--max-size",
        type=int,
        default=None,
        metavar="M",
        help="sincos2d: SD3's pos_embed_max_size, the grid cropped from the centre of an MxM table.",
    ),
    recipe_option(
        "--temporal-interpolation-scale",
        type=float,
        default=None,
        metavar="S",
        help="sincos2d --order cogvideox: the time axis's coordinates divided by S (default 1).",
    ),
    recipe_option(
        "--part",
        type=LazyChoice(field_choices("part")),
        default=None,
        help="rope, mrope, axial: cos (default), sin, angle (p·inv_freq) or inv_freq (one row); rope also "
        "cos-sin ([cos | sin] side by side: vLLM's cos_sin_cache, torchtune's Qwen2 cache) or cis ((cos, sin) "
        "per frequency: freqs_cis viewed as real; its layout is once); mrope, axial also ids (each token's "
        "position ids, one token per row: get_rope_index's transposed, Flux's txt_ids and img_ids); alibi: slopes "
        "(default), bias (heads × keys) or matrix (the (heads, queries, keys) bias as heads·len rows: "
        "x-transformers'); xpos: q (default, the queries' scales) or k (the keys'); rope2d: cat (default, "
        "[sin | cos]), sin, cos, angle (coordinate·band: lucidrains' get_axial_freqs) or cis (each band's "
        "(cos, sin): torchtune's vision cache).",
    ),
    recipe_option(
        "--scaling",
        type=LazyChoice(field_choices("scaling")),
        default=None,
        help="rope: HF rope_type (transformers 5.23 modeling_rope_utils), or keras-dynamic (keras-hub's "
        "rope_type dynamic) or litgpt-yarn (litgpt's YaRN).",
    ),
    recipe_option("--factor", type=float, default=None, metavar="F", help="rope scaling factor (linear…llama3)."),
    recipe_option(
        "--original-max-position-embeddings",
        type=int,
        default=None,
        metavar="N",
        help="rope: the trained length (dynamic: HF's max_position_embeddings).",
    ),
    recipe_option("--low-freq-factor", type=float, default=None, metavar="F", help="rope llama3 (Llama 3.1: 1)."),
    recipe_option("--high-freq-factor", type=float, default=None, metavar="F", help="rope llama3 (Llama 3.1: 4)."),
    recipe_option("--beta-fast", type=float, default=None, metavar="B", help="rope yarn, litgpt-yarn (default 32)."),
    recipe_option("--beta-slow", type=float, default=None, metavar="B", help="rope yarn, litgpt-yarn (default 1)."),
    recipe_option(
        "--attention-factor",
        type=float,
        default=None,
        metavar="A",
        help="rope yarn/longrope/litgpt-yarn: cos and sin multiplier (default from --factor).",
    ),
    recipe_option("--mscale", type=float, default=None, metavar="M", help="rope yarn, litgpt-yarn (DeepSeek)."),
    recipe_option(
        "--partial-rotary-factor",
        type=float,
        default=None,
        metavar="P",
        help="rope proportional (Gemma 4: 0.25): the share of the dim/2 frequencies that turn, int(P·dim // 2); "
        "the others are zero, and the exponents stay 2i/dim.",
    ),
    recipe_option("--mscale-all-dim", type=float, default=None, metavar="M", help="rope yarn, litgpt-yarn (DeepSeek)."),
    recipe_option("--short-factor", metavar="F,F,…", default=None, help="rope longrope: dim/2 factors."),
    recipe_option("--long-factor", metavar="F,F,…", default=None, help="rope longrope: dim/2 factors."),
    recipe_option("--truncate/--no-truncate", default=True, help="rope yarn, litgpt-yarn: floor/ceil the ramp's ends."),
    recipe_option(
        "--sequence", metavar="SEGMENTS", help="mrope: tokens, e.g. text=16,image=1x8x8,text=8 (TxHxW, video=TxHxW@S)."
    ),
    recipe_option(
        "--mrope-section", metavar="T;H;W", help="mrope: temporal;height;width frequencies, sum dim/2 (16;24;24)."
    ),
    recipe_option(
        "--mrope-interleaved/--no-mrope-interleaved",
        default=False,
        help="mrope: Qwen3-VL's interleaved sections (height every 3rd frequency from the 2nd, width from the 3rd; "
        "24;20;20), not three contiguous ones.",
    ),
    recipe_option(
        "--tokens-per-second", type=float, metavar="N", help="mrope: Qwen2.5-VL's video frames N·S apart (Qwen2-VL: 1)."
    ),
    recipe_option("--heads", type=int, default=None, metavar="N", help="alibi: number of attention heads."),
    recipe_option(
        "--slope-series",
        type=LazyChoice(field_choices("slope_series")),
        default=None,
        help="alibi: interleave (ofirpress's closest-power interleave for a head count that is no power of 2, "
        "default) or geometric (one series 2^(−8k/n) over all heads).",
    ),
    recipe_option(
        "--origin",
        type=LazyChoice(field_choices("origin")),
        default=None,
        help="alibi bias: first = slope·j (Bloom, default); last = slope·(j − len + 1) (MPT).",
    ),
    recipe_option(
        "--query",
        type=int,
        default=None,
        metavar="Q",
        help="alibi bias: the row of the query at position Q, slope·(j − Q) (a decoding step's; --origin first "
        "is query 0).",
    ),
    recipe_option(
        "--bias-max",
        type=int,
        default=None,
        metavar="B",
        help="alibi: the 8 of the slopes 2^(−8k/n), MPT's alibi_bias_max (with --form recip or --compute exact).",
    ),
    recipe_option(
        "--total-heads",
        type=int,
        default=None,
        metavar="N",
        help="alibi: N heads in all, those after --heads without a bias (zero rows: x-transformers' alibi_num_heads).",
    ),
    recipe_option("--std", type=float, default=None, metavar="S", help="learned: standard deviation (default 0.02)."),
    recipe_option(
        "--init",
        type=LazyChoice(field_choices("init")),
        default=None,
        help="learned: normal (HF) or truncated-normal (±2σ, TF's BERT).",
    ),
    recipe_option("--seed", type=int, default=None, metavar="N", help="learned: seed of the draw (default 0)."),
    recipe_option(
        "--rng",
        type=LazyChoice(field_choices("rng")),
        default=None,
        help="learned: splitmix (default): each value from its own cell's SplitMix64 word, any rows on every "
        "core; pcg64: pecli 0.1-0.2's NumPy PCG64 stream per row, to rebuild the tables they wrote.",
    ),
    recipe_option(
        "--offset", type=int, default=None, metavar="K", help="learned: K drawn rows before position 0 (BART: 2)."
    ),
    recipe_option(
        "--axes-dim",
        metavar="A;B;C",
        help="axial: columns per id axis, each even (Flux: 16;56;56); with --tokens or --len (one axis); "
        "--layout pairs (default) or half.",
    ),
    recipe_option(
        "--tokens",
        metavar="SEGMENTS",
        help="axial: text=N (ids all 0), image=HxW (ids (0, row, col)) and video=TxHxW (ids (frame, row, col): "
        "CogVideoX) segments, e.g. text=512;image=64x64.",
    ),
    recipe_option(
        "--linear-factor",
        type=float,
        default=None,
        metavar="F",
        help="axial: diffusers' linear_factor, inv_freq divided by F (default 1).",
    ),
    recipe_option(
        "--ntk-factor",
        type=float,
        default=None,
        metavar="F",
        help="axial: diffusers' ntk_factor, θ multiplied by F (default 1).",
    ),
    recipe_option(
        "--scale-base",
        type=float,
        default=None,
        metavar="B",
        help="xpos: the scale base B of ζ_i^((p − len/2)/B) (rotary-embedding-torch's xpos_scale_base: 512).",
    ),
    recipe_option(
        "--rotary",
        type=LazyChoice(field_choices("rotary")),
        default=None,
        help="xpos: none = the scale alone (default); cos or sin = the scale times the rotary cos or sin of "
        "p·10000^(−2i/D), the one table torchscale's XPOS multiplies by (duplicate_interleave(cos·scale)).",
    ),
    recipe_option(
        "--center",
        type=LazyChoice(field_choices("center")),
        default=None,
        help="xpos: the row whose scale is 1, floor = ⌊len/2⌋ (rotary-embedding-torch, default) or "
        "ceil = ⌈len/2⌉ (torchscale: −(length + offset) // 2); they differ for an odd --len.",
    ),
    recipe_option(
        "--bands",
        type=LazyChoice(field_choices("bands")),
        default=None,
        help="rope2d: lang = base^(−k/q) on cell indices (timm in_pixels=False, EVA-02; lucidrains' "
        "freqs_for='lang'); pixel = π·2^linspace(0, log2 R − 1, q) on linspace(−1, 1) (timm's default; "
        "lucidrains' freqs_for='pixel' is --linear-bands --max-res max_freq).",
    ),
    recipe_option(
        "--grid-indexing",
        type=LazyChoice(field_choices("grid_indexing")),
        default=None,
        help="rope2d: ij = the bands in --feat-shape's axis order (default); xy = the first two axes swapped, "
        "width's bands before height's (timm's grid_indexing='xy').",
    ),
    recipe_option(
        "--axis-bands",
        type=LazyChoice(field_choices("axis_bands")),
        default=None,
        help="rope2d --bands lang: same = every axis the bands base^(−k/q) (default); alternate = the axes take "
        "turns at the frequencies base^(−2i/dim), height the even, width the odd (Pixtral's 2-D RoPE).",
    ),
    recipe_option(
        "--axis-columns",
        type=LazyChoice(field_choices("axis_columns")),
        default=None,
        help="rope2d: blocks = each axis's bands together (default); interleaved = the axes take turns at each "
        "band, [h0, w0, h1, w1, …] (diffusers' Lumina).",
    ),
    recipe_option(
        "--merge",
        type=int,
        default=None,
        metavar="M",
        help="rope2d: rows in M×M merge windows over the last two axes, the windows and the cells in each in "
        "C order (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, GLM-4V vision RoPE: spatial_merge_size 2); 1 = C order (default).",
    ),
    recipe_option(
        "--first-index",
        type=int,
        default=None,
        metavar="C",
        help="rope2d --bands lang: the index of each axis's first cell (default 0; torchtune's vision RoPE: 1).",
    ),
    recipe_option(
        "--cls-row",
        type=LazyChoice(field_choices("cls_row")),
        default=None,
        help="rope2d: a class token's row of angle 0 (cos 1, sin 0), first or last (torchtune's "
        "append_cls_token: last); none (default).",
    ),
    recipe_option(
        "--max-res", type=int, default=None, metavar="R", help="rope2d --bands pixel: timm's max_res (default 224)."
    ),
    recipe_option(
        "--linear-bands/--no-linear-bands",
        default=False,
        help="rope2d --bands pixel: π·linspace(1, R/2, q) instead of log-spaced bands (timm's linear_bands).",
    ),
    recipe_option(
        "--feat-shape",
        metavar="HxW",
        help="rope2d: timm's feat_shape, the grid of patches (rows h-major), e.g. 16x16 (EVA-02 at 224 px); "
        "TxHxW: 3 axes (lucidrains' get_axial_freqs(T, H, W), rows in C order).  --dim is timm's dim: "
        "dim/4 bands per axis, n·dim/2 columns for n axes (lucidrains' RotaryEmbedding(dim=E): --dim 2E).",
    ),
    recipe_option(
        "--ref-feat-shape",
        metavar="HxW",
        help="rope2d: timm's ref_feat_shape, an axis of s cells scaled by r/s (EVA-02: 16x16); as many axes "
        "as --feat-shape.",
    ),
)


__all__ = ["recipe_options"]
