"""vllm-guard: keeps vLLM servers under systemd alive through memory failures."""

__version__ = "0.1.0"
