"""V1's dummy sampler run in the profile, release by release, each number worked by hand from vLLM's source.

The bytes per (row x vocabulary element) are the tensors alive at the sampler's peak (planner.py explains each):
PyTorch's sort path holds the 16-bit logits (2), their float32 copy (4), the sorted values and int64 indices
(4 + 8), PyTorch's int64 iota of the indices (8) and CUB's alternate key/value buffers (4 + 8): 38; from 2 to 127
rows the full-sort variant holds two int2 arrays (16), a key output (4) and CUB's float/int2 buffers (12): 50. The
fused paths (FlashInfer's masked copy and softmax, or vLLM's Triton masking in place with a softmax and the
exponential noise) hold 2 + 4 + 4 + 4 = 14. The sampler runs after the forward pass, so the peak is the larger of
the two, with the profile's hidden states still alive.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import DATA, CliResult
from vllm_guard.core.modelinfo import ModelInfo, model_info_from_config
from vllm_guard.core.planner import (
    GiB,
    PlannerParams,
    Reported,
    activation_bytes,
    budget,
    calibrate,
    flashinfer_sampler_of,
    kv_tokens_at,
    moe_workspace_bytes,
    sampler_bytes,
    sampler_path,
    sampler_rows,
    v0_sampler_path,
)

pytestmark = pytest.mark.unit

MODELS = DATA / "models"

# https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json
LLAMA31_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


def info(name: str) -> ModelInfo:
    cfg: dict[str, Any] = json.loads((MODELS / name / "config.json").read_text())
    return model_info_from_config(cfg)


def v1(version: str | None = None, **kw: Any) -> PlannerParams:
    return PlannerParams(engine="v1", vllm_version=version, **kw)


# --- the path and its bytes, by release ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "rows", "flashinfer", "expected"),
    [
        # 0.8.0-0.11.0: PyTorch's sort unless FlashInfer is installed (then it is used without being asked)
        ("0.8.5", 1024, None, 38),
        ("0.11.0", 256, None, 38),
        ("0.11.0", 1024, True, 14),
        ("0.11.0", 64, None, 50),  # segmented_sort_pairs_by_full_sort below 128 rows
        ("0.11.0", 2, None, 50),
        ("0.11.0", 1, None, 38),  # one row: segmented_sort_large_segments, the same per element as 128+
        ("0.11.0", 128, None, 38),
        # 0.11.1-0.16: FlashInfer only with VLLM_USE_FLASHINFER_SAMPLER=1
        ("0.11.1", 1024, None, 38),
        ("0.16.0", 1024, None, 38),
        ("0.16.0", 1024, True, 14),
        # 0.17-0.20: Triton top-k/top-p from 8 rows, PyTorch's sort below
        ("0.17.0", 1024, None, 14),
        ("0.20.0", 8, None, 14),
        ("0.17.0", 7, None, 50),
        ("0.17.0", 4, True, 14),
        # 0.21-0.29: FlashInfer on, then a forward_native warm-up that sorts below 8 rows, asked for or not
        ("0.21.0", 256, None, 14),
        ("0.21.0", 256, False, 14),
        ("0.21.0", 4, True, 50),
        ("0.29.0", 1, None, 38),
        # 0.30+: Triton for any number of rows
        ("0.30.0", 4, None, 14),
        ("0.33.0", 1024, False, 14),
        # not known: the current releases' path
        (None, 1024, None, 14),
    ],
)
def test_sampler_path_by_release(version: str | None, rows: int, flashinfer: bool | None, expected: int) -> None:
    assert sampler_path(v1(version, flashinfer_sampler=flashinfer), rows).bytes_per_logit == expected


def test_sampler_path_names_the_releases_it_stands_for() -> None:
    path = sampler_path(v1("0.11.0"), 1024)
    assert path.name == "PyTorch sort" and path.releases == "0.8.0-0.11.0"
    assert "full_sort" in sampler_path(v1("0.12.0"), 64).name
    assert sampler_path(v1("0.12.0"), 64).releases == "0.11.1-0.16"
    assert "not known" in sampler_path(v1(None), 1024).releases


def test_rows_are_one_per_dummy_request() -> None:
    # _dummy_run: num_reqs = min(num_tokens, max_num_seqs), each request's last token is sampled
    assert sampler_rows(1024, 8192) == 1024
    assert sampler_rows(1024, 512) == 512
    assert sampler_rows(8, 2048) == 8


def test_sampler_bytes_worked_by_hand() -> None:
    qwen = info("Qwen3-32B")  # vocab 151936
    assert sampler_bytes(qwen, 1024, 8192, v1("0.11.0")) == 1024 * 151936 * 38
    assert sampler_bytes(qwen, 256, 2048, v1("0.11.0")) == 256 * 151936 * 38
    assert sampler_bytes(qwen, 64, 2048, v1("0.11.0")) == 64 * 151936 * 50
    assert sampler_bytes(qwen, 1024, 8192, v1("0.21.0")) == 1024 * 151936 * 14


# --- the activation peak: the larger of the forward pass and the sampler ------------------------------------


def test_h100_defaults_the_sampler_decides_and_tp_does_not_split_it() -> None:
    # Qwen3-32B, vLLM 0.11.0, an 80 GB card's defaults: 8192 tokens, 1024 sequences
    qwen = info("Qwen3-32B")
    p = v1("0.11.0")
    forward_tp1 = 8192 * 2 * (2 * 5120 + 3 * 25600)  # 1,426,063,360
    held = (8192 + 2 * 1024) * 5120 * 2  # the profile's hidden states, the sampled rows and their rand_like copy
    sampler = 1024 * 151936 * 38  # 5,912,215,552
    assert activation_bytes(qwen, 8192, 1024, 1, p) == held + sampler > forward_tp1
    # the logits are all-gathered, so every TP rank samples the whole vocabulary: the same peak at TP 2
    assert activation_bytes(qwen, 8192, 1024, 2, p) == held + sampler
    # 6,017,073,152 B = 5.60 GiB. vLLM 0.11 printed 5.64 GiB of "torch peak memory increase" for this model at
    # TP 1 and at TP 2 ("| Qwen3-32B | 61.03 | 5.64 | ..." and "| Qwen3-32B | 30.59 | 5.64 | ..."):
    # https://github.com/llm-d-incubation/llm-d-planner/blob/e50305af90f0812e77e1827f3bc740fe75b76370/docs/empirical-vllm-memory-results.md
    assert abs((held + sampler) / GiB - 5.64) < 0.05


def test_llama_h100_worked_by_hand() -> None:
    llama = model_info_from_config(LLAMA31_8B)
    held = (8192 + 2 * 1024) * 4096 * 2
    sampler = 1024 * 128256 * 38
    assert activation_bytes(llama, 8192, 1024, 1, v1("0.11.0")) == held + sampler  # 5,074,436,096 B = 4.73 GiB
    # the same run printed 4.76 GiB ("| Llama-3.1-8B | 14.99 | 4.76 | ..."), same source as above
    assert abs((held + sampler) / GiB - 4.76) < 0.05
    # with FlashInfer installed (the vllm/vllm-openai:v0.11.0 image has it), 24 bytes fewer per logit
    with_flashinfer = activation_bytes(llama, 8192, 1024, 1, v1("0.11.0", flashinfer_sampler=True))
    assert with_flashinfer == held + 1024 * 128256 * 14


def test_the_forward_pass_decides_with_many_tokens_and_few_sequences() -> None:
    qwen7 = info("Qwen2.5-7B-Instruct")
    forward = 16384 * 2 * (2 * 3584 + 3 * 18944)  # 128,000 B per token
    sampler_phase = (16384 + 2 * 8) * 3584 * 2 + 8 * 152064 * 50
    assert forward > sampler_phase
    assert activation_bytes(qwen7, 16384, 8, 1, v1("0.11.0")) == forward


def test_moe_workspace_counts_in_the_forward_pass_not_in_the_sampler_phase() -> None:
    moe = info("Qwen3-30B-A3B")  # no shared expert: the forward's dense part is the hidden stream only
    p = v1("0.21.0")
    forward = 32768 * 2 * (2.0 * 2048) + moe_workspace_bytes(moe, 32768, 1, p)
    sampler_phase = (32768 + 2 * 256) * 2048 * 2 + 256 * 151936 * 14
    assert forward > sampler_phase
    assert activation_bytes(moe, 32768, 256, 1, p) == int(forward)
    assert activation_bytes(moe, 2048, 256, 1, p) == (2048 + 2 * 256) * 2048 * 2 + 256 * 151936 * 14


def test_v0_sorts_one_row_per_dummy_sequence_after_the_forward_pass() -> None:
    # vllm/worker/model_runner.py profile_run: max_num_seqs dummy sequences, SamplingParams(top_p=0.99,
    # top_k=vocab - 1); vllm/model_executor/layers/sampler.py _apply_top_k_top_p sorts one row per sequence, from
    # 0.6.0 on a float32 copy (`logits = logits.to(torch.float)`): V1's 38 bytes per element. The hidden states and
    # the rows picked for the logits stay alive: (8192 + 256) x 3584 x 2 = 60,555,264 B, plus 256 x 152064 x 38 =
    # 1,479,278,592 B; the eager forward pass (v0_forward_copies: 4 x hidden + 3 x intermediate for Qwen2's MLP),
    # 8192 x (4 x 3584 + 3 x 18944) x 2 = 1,166,016,512 B, is less.
    qwen7 = info("Qwen2.5-7B-Instruct")
    p = PlannerParams(engine="v0", vllm_version="0.6.4")
    assert activation_bytes(qwen7, 8192, 256, 1, p) == 60_555_264 + 1_479_278_592
    # 2-127 rows: PyTorch's full-sort variant, 50 bytes: 64 x 152064 x 50 = 486,604,800 B
    assert activation_bytes(qwen7, 8192, 64, 1, p) == max(1_166_016_512, (8192 + 64) * 3584 * 2 + 486_604_800)
    # a long forward pass decides: 65536 tokens (V0 before 0.5.3 profiles the whole length)
    assert activation_bytes(qwen7, 65536, 256, 1, p) == 65536 * 142336


@pytest.mark.parametrize(
    ("version", "rows", "per_logit"),
    [
        ("0.5.0", 256, 30),  # the 16-bit logits sorted: 2 + 2 + 8 + 8 + 2 + 8
        ("0.5.0", 64, 40),  # 2-127 rows: 2 + 2 + 8 + 16 + 2 + 2 + 8
        ("0.2.7", 256, 30),  # the scatter that replaced argsort
        ("0.2.5", 256, 44),  # argsort of the int64 indices: 2 + 2 + 8 + 8 + 8 + 16
        ("0.6.0", 256, 38),  # the float32 copy sorted, as V1's sort
        ("0.6.0", 64, 50),
        (None, 256, 38),  # release not known: the last V0 releases
    ],
)
def test_v0_sampler_bytes_by_release(version: str | None, rows: int, per_logit: int) -> None:
    assert v0_sampler_path(PlannerParams(engine="v0", vllm_version=version), rows).bytes_per_logit == per_logit


def test_v0_flashinfer_sampler_only_when_asked() -> None:
    # 0.6.0+: `if envs.VLLM_USE_FLASHINFER_SAMPLER and find_spec("flashinfer")`; unset means off in V0
    asked = PlannerParams(engine="v0", vllm_version="0.6.6", flashinfer_sampler=True)
    assert v0_sampler_path(asked, 256).bytes_per_logit == 14
    assert v0_sampler_path(PlannerParams(engine="v0", vllm_version="0.6.6"), 256).bytes_per_logit == 38


# A V0 start that prints its own activation peak: Qwen2.5-3B-Instruct fp16 on a Colab T4, vLLM 0.6.6.post1,
# --max-model-len 4096 (so a 4096-token profile run of 256 sequences), from
# https://github.com/TickerTaka/TickerTaka-backend/blob/001c701a580272588855d0ced6b6f7a05e0e8502/reports/vllm-colab-t4-e2e-2026-06-24/09-vllm-server.log
#   INFO 06-24 14:59:08 worker.py:241] model weights take 5.79GiB; non_torch_memory takes 0.13GiB; PyTorch
#   activation peak memory takes 1.40GiB; the rest of the memory reserved for KV Cache is 5.79GiB.
QWEN25_3B = {
    "architectures": ["Qwen2ForCausalLM"],
    "num_hidden_layers": 36,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "intermediate_size": 11008,
    "vocab_size": 151936,
    "max_position_embeddings": 32768,
    "tie_word_embeddings": True,
    "torch_dtype": "float16",
}


def test_v0_activation_peak_as_a_published_log_prints_it() -> None:
    p = PlannerParams(engine="v0", vllm_version="0.6.6.post1")
    got = activation_bytes(model_info_from_config(QWEN25_3B), 4096, 256, 1, p)
    # (4096 + 256) x 2048 x 2 + 256 x 151936 x 38 = 1,495,859,200 B = 1.393 GiB; vLLM printed 1.40 GiB
    assert got == 1_495_859_200 and got / GiB == pytest.approx(1.40, abs=0.01)


def test_an_older_release_leaves_less_kv_cache_on_an_80_gb_card() -> None:
    qwen = info("Qwen3-32B")
    old = budget(qwen, 80 * GiB, 0.9, tp=2, max_model_len=16000, params=v1("0.11.0"))
    new = budget(qwen, 80 * GiB, 0.9, tp=2, max_model_len=16000, params=v1("0.21.0"))
    # the sampler decides in both (8192 x 2 x (2 x 5120 + 3 x 12800) of forward pass is less): 1024 x 151936 x
    # (38 - 14) bytes more held by the sort, the rest alike (both releases have 0.11's accounting)
    assert old.activation - new.activation == 1024 * 151936 * 24
    assert old.kv_tokens < new.kv_tokens


# --- where the figure shows, and calibration -------------------------------------------------------------------


def test_the_budget_names_the_sampler_path() -> None:
    b = budget(info("Qwen3-32B"), 80 * GiB, 0.9, tp=2, max_model_len=16000, params=v1("0.11.0"))
    assert b.sampler == "1024 rows x vocab x 38 B (PyTorch sort; 0.8.0-0.11.0)"
    row = next(r for r in b.rows() if r[0].startswith("- activation peak"))
    assert "the larger of the forward pass" in row[2] and "PyTorch sort" in row[2]
    v0 = budget(info("Qwen3-32B"), 80 * GiB, 0.9, tp=2, max_model_len=16000, params=PlannerParams(engine="v0"))
    assert v0.sampler == "256 rows x vocab x 38 B (PyTorch sort; V0 0.6+, a float32 copy sorted)"


def test_calibration_takes_the_logs_release_when_the_plan_names_none() -> None:
    qwen7 = info("Qwen2.5-7B-Instruct")
    reported = Reported(gpu_bytes=80 * GiB, util=0.9, kv_tokens=400_000, vllm_version="0.11.0")
    p = calibrate(qwen7, reported, v1(None))
    assert p.vllm_version == "0.11.0"
    # the correction reproduces the log at the start's own settings, with the same sampler path as the plan's
    assert kv_tokens_at(qwen7, 80 * GiB, 0.9, params=p) == 400_000
    assert calibrate(qwen7, reported, v1("0.21.0")).vllm_version == "0.21.0"  # a release the plan names is kept


def test_flashinfer_leaves_more_kv_cache_under_0_11() -> None:
    qwen7 = info("Qwen2.5-7B-Instruct")
    sort = kv_tokens_at(qwen7, 80 * GiB, 0.9, max_model_len=32768, params=v1("0.11.0"))
    fused = kv_tokens_at(qwen7, 80 * GiB, 0.9, max_model_len=32768, params=v1("0.11.0", flashinfer_sampler=True))
    # 1024 x 152064 x 24 bytes at 56 KiB per token, to a block
    assert abs((fused - sort) - 1024 * 152064 * 24 / (56 * 1024)) <= 16


def test_plan_cli_shows_the_release_sampler(cli: Callable[..., CliResult]) -> None:
    r = cli("plan", "--model", MODELS / "Qwen2.5-7B-Instruct", "--gpu", "80GiB", "--vllm-version", "0.11.0", "--json")
    assert r.code in (0, 1), r.err
    out = json.loads(r.out)
    row = next(x for x in out["budget"] if x["item"].startswith("- activation peak"))
    assert "1024 rows x vocab x 38 B (PyTorch sort; 0.8.0-0.11.0)" in row["source"]
    # (8192 + 2048) x 3584 x 2 + 1024 x 152064 x 38 = 5,990,514,688 B
    assert float(row["value"].split()[0]) == pytest.approx(5_990_514_688 / GiB, abs=0.006)


# --- the batch defaults that size the profile run ----------------------------------------------------------


@pytest.mark.parametrize(
    ("gpu_gib", "version", "tokens", "seqs"),
    [
        (24, "0.11.0", 2048, 256),
        (80, "0.11.0", 8192, 1024),
        (141, "0.33.0", 8192, 1024),  # H200: under 160 GiB
        (180, "0.27.0", 8192, 1024),  # before the 160 GiB tier (get_batch_defaults, 0.28)
        (180, "0.28.0", 16384, 1024),
        (180, None, 16384, 1024),  # not known: the current releases' defaults
    ],
)
def test_v1_batch_defaults_by_gpu_size_and_release(gpu_gib: int, version: str | None, tokens: int, seqs: int) -> None:
    b = budget(info("Qwen3-8B"), gpu_gib * GiB, 0.9, max_model_len=8192, params=v1(version))
    assert (b.batched_tokens, b.max_num_seqs) == (tokens, seqs)


# --- whether a host's vLLM samples on FlashInfer -------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "installed", "env", "expected"),
    [
        ("0.10.1.1", True, None, True),  # 0.8.0-0.11.0: whenever it imports
        ("0.10.1.1", False, None, False),
        ("0.10.1.1", True, "0", False),  # VLLM_USE_FLASHINFER_SAMPLER=0 switches it off
        ("0.13.0", True, None, False),  # 0.11.1-0.20: only when asked
        ("0.13.0", True, "1", True),
        ("0.13.0", False, "1", False),  # asked for, but not there
        ("0.22.0", True, None, True),  # 0.21 on: on by default
        ("0.10.1.1", None, None, None),  # not known whether installed
        (None, True, None, None),  # release not known: the planner's default path
        ("not-a-version", True, None, None),
        ("0.6.6", True, None, False),  # V0: only when asked
        ("0.6.6", True, "1", True),
        ("0.5.4", True, "1", False),  # no FlashInfer sampler in V0 before 0.6.0
    ],
)
def test_flashinfer_sampler_from_what_the_host_shows(
    version: str | None, installed: bool | None, env: str | None, expected: bool | None
) -> None:
    assert flashinfer_sampler_of(version, installed, env) is expected


def test_plan_takes_the_sampler_path_it_is_told(cli: Callable[..., CliResult]) -> None:
    argv = ("plan", "--model", MODELS / "Qwen2.5-7B-Instruct", "--gpu", "24GiB", "--vllm-version", "0.10.1")
    sort = json.loads(cli(*argv, "--no-flashinfer-sampler", "--json").out)
    fused = json.loads(cli(*argv, "--flashinfer-sampler", "--json").out)
    default = json.loads(cli(*argv, "--json").out)
    # 256 rows x 152,064 vocabulary entries: 38 bytes each on PyTorch's sort, 14 on FlashInfer (about 0.9 GiB apart)
    gained = (fused["kv_tokens"] - sort["kv_tokens"]) * 57344
    assert gained == pytest.approx(256 * 152064 * (38 - 14), rel=0.02)
    assert default["kv_tokens"] == sort["kv_tokens"]  # pip's vLLM does not bring FlashInfer
