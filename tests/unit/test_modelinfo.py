"""Model reader: published Qwen configs, safetensors headers, broken files."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from vllm_guard.adapters.modelfs import load_model_info, read_config, read_safetensors_header, scan_folder
from vllm_guard.core.modelinfo import model_info_from_config, weights_from_headers
from vllm_guard.errors import ModelError

pytestmark = pytest.mark.unit

MODELS = Path(__file__).resolve().parents[1] / "data/models"

# name: (layers, hidden, heads, kv heads, head_dim, max context, experts, params in billions per the model cards)
PUBLISHED = {
    "Qwen2.5-7B-Instruct": (28, 3584, 28, 4, 128, 32768, 0, 7.61),
    "Qwen2.5-14B-Instruct": (48, 5120, 40, 8, 128, 32768, 0, 14.7),
    "Qwen2.5-32B-Instruct": (64, 5120, 40, 8, 128, 32768, 0, 32.5),
    "Qwen2.5-72B-Instruct": (80, 8192, 64, 8, 128, 32768, 0, 72.7),
    "Qwen3-8B": (36, 4096, 32, 8, 128, 40960, 0, 8.2),
    "Qwen3-32B": (64, 5120, 64, 8, 128, 40960, 0, 32.8),
    "Qwen3-30B-A3B": (48, 2048, 32, 4, 128, 40960, 128, 30.5),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_configs_read_as_the_model_cards_say(name: str) -> None:
    layers, hidden, heads, kv, head_dim, ctx, experts, billions = PUBLISHED[name]
    info = load_model_info(MODELS / name)
    assert (info.num_layers, info.hidden_size, info.num_attention_heads) == (layers, hidden, heads)
    assert (info.kv_heads, info.head_dim, info.max_context) == (kv, head_dim, ctx)
    assert info.num_experts == experts
    assert info.dtype == "bfloat16"
    assert info.weights is None  # no safetensors in the fixture: weights are estimated
    # the parameter count from the shapes matches the model card within 2%
    assert info.param_count() / 1e9 == pytest.approx(billions, rel=0.02)


def test_qwen3_moe_reads_experts() -> None:
    info = load_model_info(MODELS / "Qwen3-30B-A3B")
    assert info.is_moe and info.experts_per_token == 8 and info.moe_intermediate_size == 768


def test_mixtral_style_experts_take_their_width_from_intermediate_size() -> None:
    # mistralai/Mixtral-8x7B-v0.1's config.json: no moe_intermediate_size; each of the 8 experts is 14336 wide.
    # The model card's 46.7B parameters hold only when the experts are counted at that width.
    mixtral = {
        "architectures": ["MixtralForCausalLM"],
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 32000,
        "max_position_embeddings": 32768,
        "torch_dtype": "bfloat16",
    }
    info = model_info_from_config(mixtral)
    assert info.is_moe and info.num_experts == 8 and info.moe_intermediate_size == 14336
    assert info.param_count() / 1e9 == pytest.approx(46.7, rel=0.02)


# The keys that say a model's layers are not all full attention, as hybrid and sliding-window configs carry them
# (Qwen3-Next: full_attention_interval; Qwen3.5 and gpt-oss: layer_types; Nemotron-H: hybrid_override_pattern;
# Jamba: attn_layer_period; Gemma 3: model_type with sliding_window_pattern; Llama 4: attention_chunk_size).
_DENSE = {
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "num_hidden_layers": 8,
    "hidden_size": 1024,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "intermediate_size": 2816,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "sliding_window": 32768,
    "use_sliding_window": False,
}


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({}, ""),  # Qwen2's sliding_window with use_sliding_window false: every layer full attention
        ({"layer_types": ["full_attention"] * 8}, ""),
        ({"model_type": "qwen3_next", "full_attention_interval": 4}, "one layer in 4 is full attention"),
        ({"layer_types": ["linear_attention"] * 3 + ["full_attention"]}, "linear_attention"),
        # sliding layers with no window to size them: not modelled
        ({"layer_types": ["sliding_attention", "full_attention"], "sliding_window": 0}, "sliding_attention"),
        ({"hybrid_override_pattern": "M-M-M*-"}, "Mamba"),
        ({"attn_layer_period": 8, "attn_layer_offset": 4}, "Mamba"),
        ({"model_type": "gemma3_text", "sliding_window_pattern": 6, "sliding_window": 0}, "sliding-window"),
        ({"model_type": "llama4_text", "attention_chunk_size": 8192}, "chunked local attention"),
    ],
    ids=[
        "qwen2",
        "all-full",
        "qwen3-next",
        "layer-types-linear",
        "layer-types-sliding",
        "nemotron-h",
        "jamba",
        "gemma3",
        "llama4",
    ],
)
def test_layers_that_are_not_all_full_attention_are_said(extra: dict[str, Any], says: str) -> None:
    info = model_info_from_config({**_DENSE, **extra})
    assert (says in info.unmodelled_layout) if says else info.unmodelled_layout == ""


_GDN = {
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
}


@pytest.mark.parametrize(
    ("extra", "full", "sliding", "linear"),
    [
        # Qwen3-Next: every fourth layer full attention, the others Gated DeltaNet
        ({"model_type": "qwen3_next", "full_attention_interval": 4, **_GDN}, 2, 0, 6),
        # Qwen3.5: the same kinds named in layer_types
        ({"layer_types": ["linear_attention"] * 3 + ["full_attention"], **_GDN}, 1, 0, 3),
        # gpt-oss: layer_types of sliding and full attention, with the window
        ({"layer_types": ["sliding_attention", "full_attention"] * 4, "sliding_window": 128}, 4, 4, 0),
        # Gemma 3: five local layers to one global (sliding_window_pattern)
        ({"model_type": "gemma3_text", "sliding_window_pattern": 6, "sliding_window": 1024}, 1, 7, 0),
        # Gemma 2: every other layer
        ({"model_type": "gemma2", "sliding_window": 4096}, 4, 4, 0),
    ],
    ids=["qwen3-next", "qwen3.5", "gpt-oss", "gemma3", "gemma2"],
)
def test_the_hybrids_the_planner_models_are_read(extra: dict[str, Any], full: int, sliding: int, linear: int) -> None:
    info = model_info_from_config({**_DENSE, **extra})
    assert info.unmodelled_layout == "" and info.hybrid is not None
    assert (info.hybrid.full, info.hybrid.sliding, info.hybrid.linear) == (full, sliding, linear)


def test_the_first_qwen_takes_half_its_intermediate_size_per_projection() -> None:
    # Qwen/Qwen-7B-Chat (QWenLMHeadModel): config.json says intermediate_size 22016, the two gated projections
    # together; vLLM's qwen.py builds each 11008 wide. The model card's 7.7B parameters hold only at that width,
    # and vllm-project/vllm#7256 printed 'Loading model weights took 14737.2578 MB' (MiB) in bf16.
    qwen = {
        "architectures": ["QWenLMHeadModel"],
        "model_type": "qwen",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "kv_channels": 128,
        "intermediate_size": 22016,
        "vocab_size": 151936,
        "max_position_embeddings": 32768,
        "torch_dtype": "bfloat16",
    }
    info = model_info_from_config(qwen)
    assert info.intermediate_size == 11008 and info.kv_heads == 32 and info.head_dim == 128
    assert info.param_count() / 1e9 == pytest.approx(7.7, rel=0.02)
    assert info.estimated_weight_bytes() / 2**20 == pytest.approx(14737.2578, rel=0.01)


BASE: dict[str, Any] = {
    "num_hidden_layers": 2,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 4096,
    "vocab_size": 512,
}


@pytest.mark.parametrize(
    ("extra", "check"),
    [
        ({}, lambda i: i.head_dim == 64 and i.kv_heads == 2),
        ({"num_key_value_heads": None}, lambda i: i.kv_heads == 4),  # MHA: KV heads default to heads
        ({"head_dim": 128}, lambda i: i.head_dim == 128),  # Qwen3 states head_dim explicitly
        (
            {"rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}},
            lambda i: i.max_context == 131072,
        ),
        ({"rope_scaling": {"rope_type": "default", "factor": 4.0}}, lambda i: i.max_context == 4096),
        (
            {"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}},
            lambda i: i.quantization is not None and i.quantization.bits == 4,
        ),
        (
            {"quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}},
            lambda i: i.quantization is not None and i.quantization.bits == 8,
        ),
        ({"kv_lora_rank": 512, "qk_rope_head_dim": 64}, lambda i: i.is_mla),
        ({"torch_dtype": "float16"}, lambda i: i.dtype == "float16" and i.dtype_bytes == 2),
    ],
)
def test_config_variants(extra: dict[str, Any], check: Any) -> None:
    cfg = {**BASE, **{k: v for k, v in extra.items() if v is not None}}
    for k, v in extra.items():
        if v is None:
            cfg.pop(k, None)
    assert check(model_info_from_config(cfg))


def test_text_config_is_unwrapped() -> None:
    info = model_info_from_config({"architectures": ["X"], "torch_dtype": "bfloat16", "text_config": BASE})
    assert info.num_layers == 2 and info.architecture == "X"


def test_awq_weights_are_about_a_quarter() -> None:
    plain = model_info_from_config(json.loads((MODELS / "Qwen2.5-32B-Instruct/config.json").read_text()))
    awq = model_info_from_config(
        {
            **json.loads((MODELS / "Qwen2.5-32B-Instruct/config.json").read_text()),
            "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128},
        }
    )
    # Qwen2.5-32B-Instruct-AWQ ships about 19.3 GB of safetensors against 65.5 GB for BF16
    assert awq.estimated_weight_bytes() / plain.estimated_weight_bytes() == pytest.approx(19.3 / 65.5, rel=0.1)


@pytest.mark.parametrize(
    "missing", ["num_hidden_layers", "hidden_size", "num_attention_heads", "max_position_embeddings"]
)
def test_missing_keys_name_the_key(missing: str) -> None:
    cfg = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(ModelError) as err:
        model_info_from_config(cfg, where="/m/config.json")
    assert missing in err.value.message and "/m/config.json" in err.value.message
    assert err.value.ref == "model-config-incomplete"


def test_zero_heads_is_invalid() -> None:
    with pytest.raises(ModelError, match="positive"):
        model_info_from_config({**BASE, "num_key_value_heads": 0})


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]], *, truncate: int = 0) -> int:
    """A real safetensors file (header + zero data); returns the data size."""
    sizes = {"BF16": 2, "F32": 4, "I32": 4, "U8": 1}
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * max(0, offset - truncate))
    return offset


def test_safetensors_headers_give_exact_bytes(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(BASE))
    a = write_safetensors(
        tmp_path / "model-00001-of-00002.safetensors", {"w1": ("BF16", [256, 512]), "b": ("F32", [7])}
    )
    b = write_safetensors(tmp_path / "model-00002-of-00002.safetensors", {"w2": ("BF16", [512, 256])})
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps(
            {
                "weight_map": {
                    "w1": "model-00001-of-00002.safetensors",
                    "b": "model-00001-of-00002.safetensors",
                    "w2": "model-00002-of-00002.safetensors",
                }
            }
        )
    )
    info = load_model_info(tmp_path)
    assert info.weights is not None
    assert info.weights.total_bytes == a + b == 2 * 256 * 512 * 2 + 28
    assert info.estimated_weight_bytes() == a + b
    report = scan_folder(tmp_path)
    assert report.missing_shards == [] and report.size_mismatches == []


def test_scan_finds_missing_shards_truncated_files_and_training_checkpoints(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(BASE))
    write_safetensors(tmp_path / "model-00001-of-00002.safetensors", {"w1": ("BF16", [64, 64])}, truncate=100)
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"w1": "model-00001-of-00002.safetensors", "w2": "model-00002-of-00002.safetensors"}})
    )
    (tmp_path / "checkpoint.pt").write_bytes(b"x")
    report = scan_folder(tmp_path)
    assert report.missing_shards == ["model-00002-of-00002.safetensors"]
    assert [m[0] for m in report.size_mismatches] == ["model-00001-of-00002.safetensors"]
    assert report.training_files == ["checkpoint.pt"]
    # weights are not trusted while a shard is missing
    assert load_model_info(tmp_path).weights is None


@pytest.mark.parametrize(
    ("data", "ref"),
    [
        (b"abc", "safetensors-truncated"),
        (struct.pack("<Q", 10**12), "safetensors-bad-header"),
        (struct.pack("<Q", 50) + b"{}", "safetensors-truncated"),
        (struct.pack("<Q", 5) + b"nope!", "safetensors-bad-header"),
        # a Git LFS pointer file where the weights should be
        (b"version https://git-lfs.github.com/spec/v1\n", "safetensors-bad-header"),
    ],
)
def test_broken_safetensors_say_what_is_wrong(tmp_path: Path, data: bytes, ref: str) -> None:
    f = tmp_path / "model.safetensors"
    f.write_bytes(data)
    with pytest.raises(ModelError) as err:
        read_safetensors_header(f)
    assert err.value.ref == ref and str(f) in err.value.message


def test_bad_offsets_in_a_header_are_refused() -> None:
    with pytest.raises(ModelError, match="data_offsets"):
        weights_from_headers([("m.safetensors", 10, {"w": {"dtype": "BF16", "data_offsets": [10, 2]}})])


@pytest.mark.parametrize(
    ("content", "ref"),
    [(None, "model-no-config"), ("{not json", "model-bad-config"), ("[1, 2]", "model-bad-config")],
)
def test_config_json_problems(tmp_path: Path, content: str | None, ref: str) -> None:
    if content is not None:
        (tmp_path / "config.json").write_text(content)
    with pytest.raises(ModelError) as err:
        read_config(tmp_path)
    assert err.value.ref == ref


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ModelError) as err:
        load_model_info(tmp_path / "nope")
    assert err.value.ref == "model-missing"
