"""One module per CLI verb (see ``vllm_guard.cli``)."""
