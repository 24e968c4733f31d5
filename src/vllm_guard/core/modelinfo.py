"""What the planner needs to know about a model, read from its ``config.json`` and safetensors headers.

Pure: the caller reads the files (``vllm_guard.adapters.modelfs``) and passes the parsed JSON here.

Handles the Qwen2 / Qwen2.5 / Qwen3 families, dense and mixture-of-experts, plain or quantized
(AWQ, GPTQ, FP8 ``quantization_config``), and configs that nest the text model under ``text_config``
(vision-language wrappers) or ``thinker_config`` (Qwen2.5-Omni, whose thinker is what vLLM serves). Other
decoder-only models with the usual Hugging Face keys work too. MLA models (DeepSeek-V2 style:
``kv_lora_rank``) are recognised so their KV entry is sized right.

Multimodal Qwen models (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen2.5-Omni) carry their vision tower in
``vision_config`` (and Omni its audio tower in ``audio_config``): its shape sizes the tower's weights and the
encoder run vLLM profiles with (``vllm_guard.core.planner.encoder_profile``). The image processor's pixel
bounds come from ``preprocessor_config.json`` (``with_preprocessor``), else the family's published defaults.

    >>> info = model_info_from_config({"num_hidden_layers": 28, "hidden_size": 3584,
    ...     "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
    ...     "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"})
    >>> info.head_dim, info.kv_heads
    (128, 4)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vllm_guard.errors import ModelError

# Bytes per element of the dtype names found in config.json and in safetensors headers.
DTYPE_BYTES: dict[str, float] = {
    "float32": 4,
    "float": 4,
    "F32": 4,
    "float16": 2,
    "half": 2,
    "F16": 2,
    "bfloat16": 2,
    "BF16": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "fp8": 1,
    "int8": 1,
    "I8": 1,
    "U8": 1,
    "uint8": 1,
    "I16": 2,
    "I32": 4,
    "U32": 4,
    "I64": 8,
    "F64": 8,
    "BOOL": 1,
}

# rope_scaling types that stretch the context beyond max_position_embeddings (transformers' names).
STRETCHING_ROPE = ("yarn", "dynamic", "linear", "longrope")


@dataclass(frozen=True)
class Quantization:
    """The ``quantization_config`` of a checkpoint, as far as memory is concerned."""

    method: str  # awq, gptq, fp8, compressed-tensors, bitsandbytes, ...
    bits: int | None = None  # weight bits (4 for AWQ/GPTQ int4, 8 for FP8)
    group_size: int | None = None


@dataclass(frozen=True)
class RopeScaling:
    kind: str
    factor: float
    original_max_position_embeddings: int | None = None


@dataclass(frozen=True)
class WeightSummary:
    """What the safetensors headers say: exact tensor bytes, counts per dtype, and expected file sizes."""

    total_bytes: int
    tensors: int
    bytes_by_dtype: dict[str, int] = field(default_factory=dict)
    # file name -> the size the file must have (8 + header length + end of the last tensor)
    expected_file_sizes: dict[str, int] = field(default_factory=dict)
    # bytes per name prefix of one and of two components ("visual", "model.visual", "thinker", "talker", ...):
    # the parts of a checkpoint vLLM does not load (Qwen2.5-Omni's talker and token2wav; a vision tower
    # switched off) are taken off by their prefix
    bytes_by_prefix: dict[str, int] = field(default_factory=dict)


# The pixel bounds of the image processors (preprocessor_config.json) the families ship with:
# Qwen2-VL / Qwen2.5-VL / Qwen2.5-Omni: min_pixels 3136 (56 x 56), max_pixels 12845056 (28 x 28 x 16384);
# Qwen3-VL: size.shortest_edge 65536, size.longest_edge 16777216 (32 x 32 x 16384), and its video processor
# size.longest_edge 25165824 (the pixels of a frame pair, temporal_patch_size 2 counted in).
VISION_PIXELS: dict[str, tuple[int, int]] = {
    "qwen2_vl": (3136, 12845056),
    "qwen2_5_vl": (3136, 12845056),
    "qwen3_vl": (65536, 16777216),
}
QWEN3_VL_VIDEO_MAX_PIXELS = 25165824


@dataclass(frozen=True)
class VisionTower:
    """The vision encoder of a Qwen VL model (``vision_config``), as vLLM builds it.

    kind: "qwen2_vl" (LayerNorm, fc1/GELU/fc2 MLP of embed_dim x mlp_ratio: vllm/model_executor/models/qwen2_vl.py),
    "qwen2_5_vl" (RMSNorm, gated SiLU MLP of intermediate_size, window attention: qwen2_5_vl.py; also
    Qwen2.5-Omni's thinker), "qwen3_vl" (LayerNorm, fc1/GELU/fc2 MLP, learned position embeddings and
    deepstack mergers whose outputs are concatenated to the tower's: qwen3_vl.py).
    """

    kind: str
    depth: int
    hidden_size: int  # the tower's width (Qwen2-VL: embed_dim)
    intermediate_size: int  # its MLP width (Qwen2-VL: embed_dim x mlp_ratio)
    num_heads: int
    out_hidden_size: int  # the merger's output: the language model's hidden size
    patch_size: int
    spatial_merge_size: int
    temporal_patch_size: int
    in_channels: int = 3
    deepstack_layers: int = 0  # Qwen3-VL: len(deepstack_visual_indexes)
    num_position_embeddings: int = 0  # Qwen3-VL's learned position table
    min_pixels: int = 3136
    max_pixels: int = 12845056
    video_max_pixels: int | None = None  # Qwen3-VL's video processor (a frame pair's pixels)

    @property
    def gated(self) -> bool:
        return self.kind == "qwen2_5_vl"

    @property
    def patch_values(self) -> int:
        """Values per patch fed to the patch embedding: channels x temporal_patch_size x patch_size^2."""
        return self.in_channels * self.temporal_patch_size * self.patch_size**2

    def param_count(self) -> int:
        e, i, out = self.hidden_size, self.intermediate_size, self.out_hidden_size
        norm = e if self.kind == "qwen2_5_vl" else 2 * e  # RMSNorm has a weight only; LayerNorm a bias too
        attn = e * 3 * e + 3 * e + e * e + e  # qkv and proj, with biases
        mlp = (2 * (e * i + i) + i * e + e) if self.gated else (e * i + i + i * e + e)
        patch = self.patch_values * e + (e if self.kind == "qwen3_vl" else 0)  # Conv3d (bias in Qwen3-VL only)
        merged = e * self.spatial_merge_size**2
        merger = norm + merged * merged + merged + merged * out + out
        # Qwen3-VL's deepstack mergers normalise the merged width (LayerNorm over 4 x hidden)
        deepstack = self.deepstack_layers * (2 * merged + merged * merged + merged + merged * out + out)
        pos = self.num_position_embeddings * e
        return self.depth * (2 * norm + attn + mlp) + patch + merger + deepstack + pos


@dataclass(frozen=True)
class AudioTower:
    """Qwen2.5-Omni's audio encoder (``audio_config``): Whisper-style convolutions and transformer layers, an
    average pool and a projection to the language model (vllm/model_executor/models/qwen2_5_omni_thinker.py)."""

    d_model: int
    layers: int
    ffn_dim: int
    num_mel_bins: int
    output_dim: int

    def param_count(self) -> int:
        d = self.d_model
        convs = self.num_mel_bins * d * 3 + d + d * d * 3 + d
        layer = 4 * d * d + 3 * d + 2 * (2 * d) + d * self.ffn_dim + self.ffn_dim + self.ffn_dim * d + d
        return convs + self.layers * layer + 2 * d + d * self.output_dim + self.output_dim


@dataclass(frozen=True)
class HybridLayout:
    """Layers that are not all full attention, as vLLM's V1 hybrid KV cache manager sees them: full-attention
    layers, sliding-window layers (a window of tokens each) and Gated DeltaNet linear-attention layers (a fixed
    conv and recurrent state per sequence: Qwen3-Next, Qwen3.5)."""

    full: int
    sliding: int = 0
    window: int = 0
    linear: int = 0
    # Gated DeltaNet state, whole model (vllm/model_executor/layers/mamba/mamba_utils.py gated_delta_net shapes)
    linear_key_heads: int = 0
    linear_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel: int = 0
    # bytes an element of the recurrent state takes when the config sets it (Qwen3.5's mamba_ssm_dtype: float32,
    # which vLLM takes as --mamba-ssm-cache-dtype from 0.16: vllm/model_executor/models/config.py
    # Qwen3_5ForConditionalGenerationConfig, vllm-project/vllm#34489); 0: the model's dtype, as the conv state
    ssm_state_bytes: int = 0

    @property
    def what(self) -> str:
        parts = [f"{self.full} full-attention"]
        if self.sliding:
            parts.append(f"{self.sliding} sliding-window ({self.window} tokens)")
        if self.linear:
            parts.append(f"{self.linear} linear-attention (Gated DeltaNet)")
        return " + ".join(parts) + " layers"


@dataclass(frozen=True)
class ModelInfo:
    """The shape of a decoder-only model, enough to size its weights and KV cache."""

    architecture: str
    model_type: str
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    dtype: str  # torch_dtype of the checkpoint ("bfloat16")
    max_position_embeddings: int
    tie_word_embeddings: bool = False
    rope_scaling: RopeScaling | None = None
    quantization: Quantization | None = None
    # mixture of experts (0 experts: dense)
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    # MLA (DeepSeek-V2 style): the KV cache holds one latent vector per token and layer
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0  # vLLM before 0.7.1 cached K and V of (nope + rope) per head instead
    # exact weight bytes from the safetensors headers, when the files were read
    weights: WeightSummary | None = None
    # multimodal encoders (None: text only)
    vision: VisionTower | None = None
    audio: AudioTower | None = None
    # top-level weight prefixes vLLM does not load for this architecture (Qwen2.5-Omni: the talker and the
    # token2wav vocoder; vLLM serves the thinker)
    unloaded_prefixes: tuple[str, ...] = ()
    # Why the planner's KV model (every layer full attention, one page per block of tokens) does not fit this
    # model's layers: hybrids of linear attention or Mamba with attention, attention interleaved with sliding-window
    # layers. "" when it fits (``attention_layout``).
    unmodelled_layout: str = ""
    # the layers of a model that vLLM's hybrid KV cache manager groups (None: every layer full attention, or a
    # layout the planner does not model, which ``unmodelled_layout`` then names)
    hybrid: HybridLayout | None = None
    # a sigmoid gate on the attention output, projected with the queries: q_proj is twice as wide
    # (vllm/model_executor/models/qwen3_next.py Qwen3NextAttention: attn_output_gate, default on; Qwen3.5 too)
    attn_output_gate: bool = False

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def dtype_bytes(self) -> float:
        return DTYPE_BYTES.get(self.dtype, 2)

    @property
    def max_context(self) -> int:
        """The longest context the config allows: max_position_embeddings, stretched by rope scaling."""
        rope = self.rope_scaling
        if rope is not None and rope.kind in STRETCHING_ROPE:
            base = rope.original_max_position_embeddings or self.max_position_embeddings
            return max(self.max_position_embeddings, int(base * rope.factor))
        return self.max_position_embeddings

    def param_count(self) -> int:
        """Parameters from the shapes (attention with biases as in Qwen2; exact enough to size weights)."""
        h, layers = self.hidden_size, self.num_layers
        q = self.num_attention_heads * self.head_dim
        kv = self.kv_heads * self.head_dim
        gate = h * q if self.attn_output_gate else 0
        attn = h * q + gate + 2 * h * kv + q * h + q + 2 * kv  # q (and gate), k, v, o projections, qkv biases
        linear = self.hybrid.linear if self.hybrid is not None else 0  # Gated DeltaNet layers in place of attention
        attention = (layers - linear) * attn + (linear * self._gated_delta_net_params() if linear else 0)
        if self.is_moe:
            expert = 3 * h * self.moe_intermediate_size
            shared = 3 * h * self.shared_expert_intermediate_size
            mlp = self.num_experts * expert + shared + h * self.num_experts
        else:
            mlp = 3 * h * self.intermediate_size  # gate, up, down
        norms = 2 * h
        embed = self.vocab_size * h
        head = 0 if self.tie_word_embeddings else self.vocab_size * h
        return attention + layers * (mlp + norms) + embed + head + h

    def _gated_delta_net_params(self) -> int:
        """One Gated DeltaNet layer (vllm/model_executor/models/qwen3_next.py Qwen3NextGatedDeltaNet, the shared
        QwenGatedDeltaNetAttention of later releases): the q, k, v and z projections, the b and a projections
        (one each per value head), the causal conv over q, k and v, A_log and dt_bias, the gated norm and the
        output projection."""
        g = self.hybrid
        assert g is not None
        h = self.hidden_size
        key = g.linear_key_heads * g.linear_key_head_dim
        value = g.linear_value_heads * g.linear_value_head_dim
        return (
            h * (2 * key + 2 * value)
            + h * 2 * g.linear_value_heads
            + (2 * key + value) * g.linear_conv_kernel
            + 2 * g.linear_value_heads
            + g.linear_value_head_dim
            + value * h
        )

    def vision_weight_bytes(self) -> int:
        """Bytes of the vision tower: its tensors in the headers ("visual.*", "model.visual.*",
        "thinker.visual.*"), else its parameters in 16 bits."""
        if self.vision is None:
            return 0
        if self.weights is not None:
            found = sum(self.weights.bytes_by_prefix.get(p, 0) for p in ("visual", "model.visual", "thinker.visual"))
            if found:
                return found
        return int(self.vision.param_count() * min(2.0, max(1.0, self.dtype_bytes)))

    def encoder_param_count(self) -> int:
        """Parameters of the multimodal towers (vision, audio): 0 for a text-only model."""
        return (self.vision.param_count() if self.vision else 0) + (self.audio.param_count() if self.audio else 0)

    def estimated_weight_bytes(self) -> int:
        """Weight bytes vLLM loads: the safetensors headers' tensors (less the parts it does not load), else
        an estimate from the shapes (quantization counted; the encoders are kept in 16 bits, as
        quantized VL checkpoints keep them)."""
        if self.weights is not None:
            skipped = sum(self.weights.bytes_by_prefix.get(p, 0) for p in self.unloaded_prefixes)
            return self.weights.total_bytes - skipped
        return self._text_weight_bytes() + int(self.encoder_param_count() * min(2.0, max(1.0, self.dtype_bytes)))

    def _text_weight_bytes(self) -> int:
        params = self.param_count()
        q = self.quantization
        if q is not None and q.bits is not None and q.bits < 16:
            # Quantized checkpoints keep embeddings, lm_head and norms in 16 bits; the linear layers
            # take bits/8 bytes per weight plus, for group-wise int formats (AWQ/GPTQ), a 16-bit scale
            # and a packed 4-bit zero point per group of 128 (2.5 bytes per group). FP8 checkpoints
            # carry one scale per tensor or per 128x128 block: negligible.
            dense_16 = self.vocab_size * self.hidden_size * (1 if self.tie_word_embeddings else 2)
            linear = params - dense_16
            if q.method in ("fp8", "fbgemm_fp8", "modelopt") or (q.bits >= 8 and not q.group_size):
                per_weight = q.bits / 8
            else:
                group = q.group_size if q.group_size and q.group_size > 0 else 128
                per_weight = q.bits / 8 + 2.5 / group
            return int(dense_16 * 2 + linear * per_weight)
        return int(params * self.dtype_bytes)

    def with_weights(self, weights: WeightSummary) -> ModelInfo:
        return replace(self, weights=weights)


def _thinker(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """Qwen2.5-Omni nests the model vLLM serves (the thinker) under ``thinker_config``; others are as they are."""
    inner = cfg.get("thinker_config")
    if isinstance(inner, Mapping):
        merged = dict(inner)
        for key in ("torch_dtype", "dtype", "quantization_config"):
            if key in cfg:
                merged[key] = cfg[key]
        return merged
    return cfg


def _text_config(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = cfg.get("text_config")
    if isinstance(inner, Mapping):
        merged = dict(inner)
        for key in ("quantization_config", "architectures", "tie_word_embeddings"):
            if key not in merged and key in cfg:
                merged[key] = cfg[key]
        # the checkpoint's dtype is the top-level one (a text_config may say float32 beside a bf16 checkpoint)
        for key in ("torch_dtype", "dtype"):
            if key in cfg:
                merged[key] = cfg[key]
        return merged
    return cfg


def _vision_kind(cfg: Mapping[str, Any], vc: Mapping[str, Any]) -> str | None:
    names = " ".join(
        str(x).lower()
        for x in (cfg.get("model_type"), vc.get("model_type"), *(cfg.get("architectures") or []))
        if isinstance(x, str)
    )
    if "qwen3_vl" in names or "qwen3vl" in names:
        return "qwen3_vl"
    if "qwen3_5" in names:  # Qwen3.5 and Qwen3.5-MoE: Qwen3-VL's tower and processor (vllm/.../models/qwen3_5.py)
        return "qwen3_vl"
    if "qwen2_5" in names or "qwen2.5" in names:  # Qwen2.5-VL, and Qwen2.5-Omni's thinker
        return "qwen2_5_vl"
    if "qwen2_vl" in names or "qwen2vl" in names:
        return "qwen2_vl"
    # unnamed: judge by the keys each family's vision_config has
    if "deepstack_visual_indexes" in vc:
        return "qwen3_vl"
    if "out_hidden_size" in vc and "intermediate_size" in vc:
        return "qwen2_5_vl"
    if "embed_dim" in vc and "mlp_ratio" in vc:
        return "qwen2_vl"
    return None


def _vision(cfg: Mapping[str, Any], where: str) -> VisionTower | None:
    vc = cfg.get("vision_config")
    if not isinstance(vc, Mapping):
        return None
    kind = _vision_kind(cfg, vc)
    if kind is None:
        return None
    w = f"{where} vision_config"
    if kind == "qwen2_vl":
        # Qwen2-VL: embed_dim is the tower's width; hidden_size there is the merger's output
        width = _int(vc, "embed_dim", where=w)
        ratio = vc.get("mlp_ratio", 4)
        inter = int(width * (ratio if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) else 4))
        out = _int(vc, "hidden_size", "out_hidden_size", where=w)
    else:
        width = _int(vc, "hidden_size", "embed_dim", where=w)
        inter = _int(vc, "intermediate_size", where=w)
        out = _int(vc, "out_hidden_size", where=w)
    deep = vc.get("deepstack_visual_indexes")
    lo, hi = VISION_PIXELS[kind]
    tower = VisionTower(
        kind=kind,
        depth=_int(vc, "depth", "num_hidden_layers", where=w),
        hidden_size=width,
        intermediate_size=inter,
        num_heads=_int(vc, "num_heads", "num_attention_heads", where=w),
        out_hidden_size=out,
        patch_size=_int(vc, "patch_size", "spatial_patch_size", default=16 if kind == "qwen3_vl" else 14, where=w),
        spatial_merge_size=_int(vc, "spatial_merge_size", default=2, where=w),
        temporal_patch_size=_int(vc, "temporal_patch_size", default=2, where=w),
        in_channels=_int(vc, "in_channels", "in_chans", default=3, where=w),
        deepstack_layers=len(deep) if isinstance(deep, list) else 0,
        num_position_embeddings=_int(vc, "num_position_embeddings", default=0, where=w),
        min_pixels=lo,
        max_pixels=hi,
        video_max_pixels=QWEN3_VL_VIDEO_MAX_PIXELS if kind == "qwen3_vl" else None,
    )
    if min(tower.depth, tower.hidden_size, tower.intermediate_size, tower.out_hidden_size, tower.patch_size) <= 0:
        raise ModelError(
            "model-config-invalid",
            f"{w}: depth, widths and patch size must be positive",
            "re-download the model's config.json",
        )
    return tower


def _audio(cfg: Mapping[str, Any], where: str) -> AudioTower | None:
    ac = cfg.get("audio_config")
    if not isinstance(ac, Mapping):
        return None
    w = f"{where} audio_config"
    return AudioTower(
        d_model=_int(ac, "d_model", "hidden_size", where=w),
        layers=_int(ac, "encoder_layers", "num_hidden_layers", where=w),
        ffn_dim=_int(ac, "encoder_ffn_dim", "intermediate_size", where=w),
        num_mel_bins=_int(ac, "num_mel_bins", default=128, where=w),
        output_dim=_int(ac, "output_dim", "out_hidden_size", where=w),
    )


def with_preprocessor(
    info: ModelInfo, image: Mapping[str, Any] | None, video: Mapping[str, Any] | None = None
) -> ModelInfo:
    """The pixel bounds of the model's own image (and video) processor, from ``preprocessor_config.json``
    (``min_pixels`` / ``max_pixels``, or the newer ``size.shortest_edge`` / ``size.longest_edge``) and
    ``video_preprocessor_config.json``; what a file does not say keeps the family's default."""
    tower = info.vision
    if tower is None:
        return info

    def bounds(cfg: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
        if not isinstance(cfg, Mapping):
            return None, None
        size = cfg.get("size")
        size = size if isinstance(size, Mapping) else {}
        lo = cfg.get("min_pixels", size.get("shortest_edge"))
        hi = cfg.get("max_pixels", size.get("longest_edge"))
        ok = [v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None for v in (lo, hi)]
        return ok[0], ok[1]

    lo, hi = bounds(image)
    _, vhi = bounds(video)
    return replace(
        info,
        vision=replace(
            tower,
            min_pixels=lo or tower.min_pixels,
            max_pixels=hi or tower.max_pixels,
            video_max_pixels=vhi or tower.video_max_pixels,
        ),
    )


def _int(cfg: Mapping[str, Any], *keys: str, default: int | None = None, where: str = "config.json") -> int:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
    if default is not None:
        return default
    raise ModelError(
        "model-config-incomplete",
        f"{where}: no {' / '.join(keys)} (an integer) in the model's config",
        "check that config.json is the model's own Hugging Face config (re-download it if it was cut short)",
    )


def _quantization(cfg: Mapping[str, Any]) -> Quantization | None:
    qc = cfg.get("quantization_config")
    if not isinstance(qc, Mapping):
        return None
    method = str(qc.get("quant_method", qc.get("method", "unknown"))).lower()
    bits = qc.get("bits", qc.get("w_bit"))
    group = qc.get("group_size", qc.get("q_group_size"))
    if method == "fp8" and bits is None:
        bits = 8
    if method == "bitsandbytes":
        bits = 4 if qc.get("load_in_4bit") else 8 if qc.get("load_in_8bit") else None
    if method == "compressed-tensors" and bits is None:
        groups = qc.get("config_groups")
        if isinstance(groups, Mapping):
            for g in groups.values():
                w = g.get("weights") if isinstance(g, Mapping) else None
                if isinstance(w, Mapping) and isinstance(w.get("num_bits"), int):
                    bits = w["num_bits"]
                    group = w.get("group_size", group)
                    break
    return Quantization(
        method=method,
        bits=bits if isinstance(bits, int) else None,
        group_size=group if isinstance(group, int) else None,
    )


def _rope(cfg: Mapping[str, Any]) -> RopeScaling | None:
    rope = cfg.get("rope_scaling")
    if not isinstance(rope, Mapping):
        return None
    kind = rope.get("rope_type", rope.get("type"))
    factor = rope.get("factor")
    if not isinstance(kind, str) or not isinstance(factor, (int, float)):
        return None
    orig = rope.get("original_max_position_embeddings")
    return RopeScaling(
        kind=kind, factor=float(factor), original_max_position_embeddings=orig if isinstance(orig, int) else None
    )


_FULL_ATTENTION = frozenset({"full_attention", "attention", "global", "full"})
# model_type of configs whose layers alternate sliding-window and full attention with no layer_types list (Gemma 2:
# every other layer; Gemma 3: five local to one global; Cohere2: three to one)
_INTERLEAVED_SLIDING = frozenset({"gemma2", "gemma3", "gemma3_text", "cohere2"})


def attention_layout(c: Mapping[str, Any]) -> str:
    """Why a text config's layers are not all full attention, or "" when they are (then the KV cache is one
    page per block of tokens in every layer, which is what the planner models).

    vLLM (V1's hybrid KV cache manager, vllm/v1/core/kv_cache_utils.py) puts layers of different kinds in groups
    that share the blocks: a linear-attention or Mamba layer keeps a fixed state per sequence, padded to the
    attention page, a sliding-window layer only its window; the attention block size is raised to match the state,
    and the tokens vLLM reports divide the blocks among the groups."""
    types = c.get("layer_types")
    if isinstance(types, list) and types:
        kinds = {str(t) for t in types}
        other = sorted(kinds - _FULL_ATTENTION)
        if other:
            return f"its layers are {', '.join(sorted(kinds))} (layer_types), not all full attention"
    interval = c.get("full_attention_interval")
    if isinstance(interval, int) and interval > 1:
        return f"one layer in {interval} is full attention, the others linear attention (full_attention_interval)"
    for key, what in (
        ("hybrid_override_pattern", "Mamba and attention layers (hybrid_override_pattern)"),
        ("layers_block_type", "Mamba and attention layers (layers_block_type)"),
        ("attn_layer_period", "Mamba and attention layers (attn_layer_period)"),
        ("attn_type_list", "linear and softmax attention layers (attn_type_list)"),
        ("linear_attn_config", "linear attention layers (linear_attn_config)"),
    ):
        if c.get(key):
            return what
    if any(str(k).startswith(("mamba_", "ssm_")) for k in c):
        return "Mamba state-space layers (mamba_* / ssm_* keys)"
    if c.get("attention_chunk_size"):
        return "chunked local attention layers interleaved with full attention (attention_chunk_size)"
    model_type = str(c.get("model_type", ""))
    if model_type in _INTERLEAVED_SLIDING or c.get("sliding_window_pattern"):
        return f"sliding-window layers interleaved with full attention ({model_type or 'sliding_window_pattern'})"
    return ""


_GDN_KEYS = (
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_conv_kernel_dim",
)


def hybrid_layout(c: Mapping[str, Any], layers: int) -> HybridLayout | None:
    """The layout of a model whose layers vLLM's hybrid KV cache manager groups, where the planner models it:
    sliding-window layers beside full attention (``layer_types``; Gemma 2's every other layer; Gemma 3's and
    Cohere2's ``sliding_window_pattern``), and Gated DeltaNet linear attention beside full attention (Qwen3-Next's
    ``full_attention_interval``, Qwen3.5's ``layer_types``). None for every other config."""
    gdn = all(isinstance(c.get(k), int) and c.get(k, 0) > 0 for k in _GDN_KEYS)
    ssm_dtype = c.get("mamba_ssm_dtype")
    state = (
        {
            "linear_key_heads": int(c["linear_num_key_heads"]),
            "linear_value_heads": int(c["linear_num_value_heads"]),
            "linear_key_head_dim": int(c["linear_key_head_dim"]),
            "linear_value_head_dim": int(c["linear_value_head_dim"]),
            "linear_conv_kernel": int(c["linear_conv_kernel_dim"]),
            "ssm_state_bytes": (
                int(DTYPE_BYTES.get(ssm_dtype, 0))
                if isinstance(ssm_dtype, str) and str(c.get("model_type", "")).startswith("qwen3_5")
                else 0
            ),
        }
        if gdn
        else {}
    )
    window = c.get("sliding_window")
    window = window if isinstance(window, int) and window > 0 else 0
    types = c.get("layer_types")
    if isinstance(types, list) and types:
        names = [str(t) for t in types[:layers]]
        full = sum(n in _FULL_ATTENTION for n in names)
        sliding = sum(n == "sliding_attention" for n in names)
        linear = sum(n == "linear_attention" for n in names)
        if full + sliding + linear != len(names) or full == 0 or (sliding and not window) or (linear and not gdn):
            return None
        if sliding and linear:
            return None
        if not sliding and not linear:
            return None
        return HybridLayout(full=full, sliding=sliding, window=window if sliding else 0, linear=linear, **state)
    interval = c.get("full_attention_interval")
    if isinstance(interval, int) and interval > 1:
        if not gdn:
            return None
        full = layers // interval  # layer i is full attention when (i + 1) % interval == 0
        return HybridLayout(full=full, linear=layers - full, **state)
    if any(c.get(k) for k in ("hybrid_override_pattern", "layers_block_type", "attn_layer_period", "attn_type_list")):
        return None
    if (
        c.get("linear_attn_config")
        or any(str(k).startswith(("mamba_", "ssm_")) for k in c)
        or c.get("attention_chunk_size")
    ):
        return None
    model_type = str(c.get("model_type", ""))
    pattern = c.get("sliding_window_pattern")
    if not window:
        return None
    if model_type == "gemma2":
        full = layers // 2  # vllm/model_executor/models/gemma2.py: the even layers slide
        return HybridLayout(full=full, sliding=layers - full, window=window)
    if isinstance(pattern, int) and pattern > 1:
        full = layers // pattern  # layer i is global when (i + 1) % pattern == 0 (Gemma 3, Cohere2)
        return HybridLayout(full=full, sliding=layers - full, window=window)
    return None


def model_info_from_config(cfg: Mapping[str, Any], *, where: str = "config.json") -> ModelInfo:
    """Read a model's shape from its parsed config.json; raise ModelError naming the missing key."""
    if not isinstance(cfg, Mapping):
        raise ModelError("model-config-not-object", f"{where}: is not a JSON object", "re-download config.json")
    outer = cfg
    cfg = _thinker(cfg)
    c = _text_config(cfg)
    archs = c.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else "unknown"
    layers = _int(c, "num_hidden_layers", "n_layer", "num_layers", where=where)
    hidden = _int(c, "hidden_size", "n_embd", "d_model", where=where)
    heads = _int(c, "num_attention_heads", "n_head", where=where)
    kv_heads = _int(c, "num_key_value_heads", "num_kv_heads", default=heads, where=where)
    head_dim = _int(c, "head_dim", default=hidden // heads if heads else 0, where=where)
    if layers <= 0 or hidden <= 0 or heads <= 0 or kv_heads <= 0 or head_dim <= 0:
        raise ModelError(
            "model-config-invalid",
            f"{where}: layers, hidden_size, heads, KV heads and head_dim must all be positive "
            f"(got {layers}, {hidden}, {heads}, {kv_heads}, {head_dim})",
            "re-download the model's config.json",
        )
    dtype = c.get("torch_dtype", c.get("dtype", "bfloat16"))
    num_experts = _int(c, "num_experts", "num_local_experts", "n_routed_experts", default=0, where=where)
    intermediate = _int(c, "intermediate_size", "ffn_hidden_size", default=4 * hidden, where=where)
    if arch == "QWenLMHeadModel":
        # the first Qwen's config.json gives both gated projections together: vllm/model_executor/models/qwen.py
        # builds QWenMLP(hidden_size, intermediate_size // 2) (w1 and w2 of that width, c_proj back)
        intermediate //= 2
    model_type = str(c.get("model_type", "unknown"))
    return ModelInfo(
        architecture=arch,
        model_type=model_type,
        num_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocab_size=_int(c, "vocab_size", default=0, where=where),
        dtype=dtype if isinstance(dtype, str) else "bfloat16",
        max_position_embeddings=_int(c, "max_position_embeddings", "n_positions", "max_seq_len", where=where),
        tie_word_embeddings=bool(c.get("tie_word_embeddings", False)),
        rope_scaling=_rope(c),
        quantization=_quantization(c),
        num_experts=num_experts,
        experts_per_token=_int(c, "num_experts_per_tok", "moe_topk", default=0, where=where) if num_experts else 0,
        # Qwen-MoE and DeepSeek name each expert's width moe_intermediate_size; Mixtral-style configs
        # (MixtralForCausalLM, GraniteMoeForCausalLM, PhiMoEForCausalLM: num_local_experts) use intermediate_size
        moe_intermediate_size=(
            _int(c, "moe_intermediate_size", default=intermediate, where=where) if num_experts else 0
        ),
        shared_expert_intermediate_size=(
            _int(c, "shared_expert_intermediate_size", default=0, where=where) if num_experts else 0
        ),
        kv_lora_rank=_int(c, "kv_lora_rank", default=0, where=where),
        qk_rope_head_dim=_int(c, "qk_rope_head_dim", default=0, where=where),
        qk_nope_head_dim=_int(c, "qk_nope_head_dim", default=0, where=where),
        vision=_vision(cfg, where),
        audio=_audio(cfg, where),
        unloaded_prefixes=_unloaded_prefixes(outer is not cfg, model_type),
        attn_output_gate=bool(c.get("attn_output_gate", model_type.startswith(_GATED_ATTENTION_TYPES))),
        **_layout(c, layers),
    )


# the model types vLLM builds with Qwen3NextAttention, whose attn_output_gate defaults to on, and whose checkpoints
# carry an MTP layer under "mtp." that the served model does not load ("MTP weights are loaded by the draft model,
# not this one": vllm/model_executor/models/qwen3_next.py, qwen3_5.py map the prefix away)
_GATED_ATTENTION_TYPES = ("qwen3_next", "qwen3_5")


def _unloaded_prefixes(omni: bool, model_type: str) -> tuple[str, ...]:
    """Top-level checkpoint prefixes vLLM does not load: Qwen2.5-Omni's talker and vocoder (it serves the thinker),
    the MTP layer of Qwen3-Next and Qwen3.5 (loaded only by a draft model, --speculative-config)."""
    if omni:
        return ("talker", "token2wav")
    if model_type.startswith(_GATED_ATTENTION_TYPES):
        return ("mtp",)
    return ()


def _layout(c: Mapping[str, Any], layers: int) -> dict[str, Any]:
    """``unmodelled_layout`` and ``hybrid`` of a config: a layout the planner models is no longer unmodelled."""
    why = attention_layout(c)
    hybrid = hybrid_layout(c, layers) if why else None
    return {"unmodelled_layout": "" if hybrid is not None else why, "hybrid": hybrid}


def weights_from_headers(headers: Iterable[tuple[str, int, Mapping[str, Any]]]) -> WeightSummary:
    """Sum the tensor bytes of safetensors headers: (file name, header length, parsed header JSON).

    The safetensors format: 8 bytes little-endian header length N, N bytes of JSON mapping each tensor
    name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the data after the
    header), and an optional ``"__metadata__"`` entry.
    """
    total = 0
    count = 0
    by_dtype: dict[str, int] = {}
    by_prefix: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for name, header_len, header in headers:
        end_max = 0
        for tensor, meta in header.items():
            if tensor == "__metadata__":
                continue
            if not isinstance(meta, Mapping):
                raise ModelError(
                    "safetensors-bad-header",
                    f"{name}: tensor {tensor!r} has no metadata object in the header",
                    "re-download this file",
                )
            offsets = meta.get("data_offsets")
            if (
                not isinstance(offsets, list)
                or len(offsets) != 2
                or not all(isinstance(o, int) for o in offsets)
                or offsets[1] < offsets[0]
            ):
                raise ModelError(
                    "safetensors-bad-header",
                    f"{name}: tensor {tensor!r} has no valid data_offsets in the header",
                    "re-download this file",
                )
            size = offsets[1] - offsets[0]
            total += size
            count += 1
            dtype = str(meta.get("dtype", "?"))
            by_dtype[dtype] = by_dtype.get(dtype, 0) + size
            parts = tensor.split(".")
            for prefix in {parts[0], ".".join(parts[:2])}:
                by_prefix[prefix] = by_prefix.get(prefix, 0) + size
            end_max = max(end_max, offsets[1])
        sizes[name] = 8 + header_len + end_max
    return WeightSummary(
        total_bytes=total,
        tensors=count,
        bytes_by_dtype=by_dtype,
        expected_file_sizes=sizes,
        bytes_by_prefix=by_prefix,
    )
