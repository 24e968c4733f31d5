"""Writing the node_exporter textfile.

The temporary file ``atomic_write`` makes beside it ends in ``.tmp``, so node_exporter's textfile
collector (which reads ``*.prom`` only) never sees a half-written file.
"""

from __future__ import annotations

from pathlib import Path

from vllm_guard.adapters.files import atomic_write
from vllm_guard.core.metrics import MetricsSnapshot, render_textfile


def write_textfile(path: Path, snapshot: MetricsSnapshot) -> str:
    """Render ``snapshot`` and replace ``path`` with it in one step (mode 0644: node_exporter reads it)."""
    text = render_textfile(snapshot)
    atomic_write(path, text, mode=0o644)
    return text
