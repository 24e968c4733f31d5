"""Makes tiny Qwen2 models with random weights for real vLLM on the CPU, with no download.

Run it with the vLLM venv's Python (it needs torch, transformers and tokenizers):

    .venv-vllm/bin/python tests/acceptance/tiny_model.py chat /tmp/models/tiny-chat

Variants (SANDBOX.md has where the shapes come from):

- ``chat``: head_dim 64 (hidden 256, 4 heads, 2 KV heads, 2 layers). The CPU attention serves it.
- ``long``: 16 layers, 8 KV heads, head_dim 64 and a 131072-token context: 32 KiB of KV cache per
  token, so ``--max-model-len 131072`` needs 4 GiB of KV cache and fails with 1 GiB
  (``VLLM_CPU_KVCACHE_SPACE=1``), vLLM's real "To serve at least one request ..." error.
- ``head16``: head_dim 16. vLLM loads it and its API comes up, but the CPU attention rejects it at the
  first request and the engine dies (``EngineDeadError``).

The weights are random, so what the model says is noise; to make sure a greedy answer is never empty,
the output layer only gives a non-zero logit to tokens that decode to letters, so special tokens (and
``<|im_end|>``, the end of a turn) are never the most likely next token.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
VOCAB_SIZE = 512  # small enough to train in a second, large enough for merges beyond single bytes

# ChatML, as Qwen2's own tokenizer_config.json writes it (without the tool-calling parts).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

TRAINING_TEXT = [
    "The quick brown fox jumps over the lazy dog.",
    "Reply with one word: ok",
    "vLLM serves large language models with paged attention.",
    "systemd restarts a failed service after RestartSec seconds.",
    "The guard reads why the last start failed and changes the right flag.",
    "Hello! How can I help you today?",
    "A tiny model with random weights says nothing useful, but it says something.",
]


@dataclass(frozen=True)
class Shape:
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    num_hidden_layers: int
    intermediate_size: int
    max_position_embeddings: int

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @property
    def kv_bytes_per_token(self) -> int:
        """K and V, every layer, bfloat16 (2 bytes)."""
        return 2 * self.num_hidden_layers * self.num_key_value_heads * self.head_dim * 2


VARIANTS: dict[str, Shape] = {
    "chat": Shape(256, 4, 2, 2, 512, 4096),
    "long": Shape(512, 8, 8, 16, 512, 131072),
    "head16": Shape(64, 4, 2, 2, 128, 4096),
}


def make_tokenizer(folder: Path) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TRAINING_TEXT * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        additional_special_tokens=["<|im_start|>"],
        model_max_length=131072,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    return fast


def make_model(variant: str, folder: Path, seed: int = 1234) -> dict[str, Any]:
    """Writes tokenizer, config and random bfloat16 weights into ``folder``; returns a summary."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    shape = VARIANTS[variant]
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = make_tokenizer(folder)
    vocab = len(tokenizer)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=VOCAB_SIZE,
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=shape.num_key_value_heads,
        max_position_embeddings=shape.max_position_embeddings,
        tie_word_embeddings=False,
        bos_token_id=pad,
        eos_token_id=eos,
        pad_token_id=pad,
        torch_dtype="bfloat16",
    )
    model = Qwen2ForCausalLM(config)
    with torch.no_grad():
        letters = torch.zeros(VOCAB_SIZE, dtype=torch.bool)
        for token_id in range(vocab):
            text = tokenizer.decode([token_id])
            letters[token_id] = bool(text.strip()) and text.strip().isalpha() and text.isascii()
        model.lm_head.weight[~letters] = 0.0
    model = model.to(torch.bfloat16)
    model.save_pretrained(folder, safe_serialization=True)
    GenerationConfig(bos_token_id=pad, eos_token_id=eos, pad_token_id=pad).save_pretrained(folder)
    return {
        "variant": variant,
        "path": str(folder),
        "head_dim": shape.head_dim,
        "kv_bytes_per_token": shape.kv_bytes_per_token,
        "max_position_embeddings": shape.max_position_embeddings,
        "letter_tokens": int(letters.sum()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("variant", choices=sorted(VARIANTS))
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    print(json.dumps(make_model(args.variant, args.folder)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
