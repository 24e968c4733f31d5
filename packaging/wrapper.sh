#!/bin/sh
# vllm-guard: the command line, run from the package's private Python environment. -I: neither the
# current folder nor PYTHON* variables can put other modules in front of the packaged ones.
exec /usr/lib/vllm-guard/venv/bin/python3 -I -m vllm_guard "$@"
