"""Adapters: the only code that touches the OS (journal, systemctl, NVML, /proc, HTTP, files)."""
