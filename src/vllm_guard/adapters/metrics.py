"""Writing the node_exporter textfile.

The temporary file ``atomic_write`` makes beside it ends in ``.tmp``, so node_exporter's textfile
collector (which reads ``*.prom`` only) never sees a half-written file.
"""

from __future__ import annotations

import errno
from pathlib import Path

from vllm_guard.adapters.files import atomic_write
from vllm_guard.core.metrics import MetricsSnapshot, render_textfile


def write_textfile(path: Path, snapshot: MetricsSnapshot) -> str:
    """Render ``snapshot`` and replace ``path`` with it in one step (mode 0644: node_exporter reads it)."""
    text = render_textfile(snapshot)
    atomic_write(path, text, mode=0o644)
    return text


def metrics_write_error(path: Path, err: OSError) -> str:
    """Why the textfile could not be written, and what to do (one line for the journal)."""
    folder = path.parent
    # a missing folder under ProtectSystem=strict reads EROFS (its parent is read-only): say it is missing
    if err.errno == errno.ENOENT or not folder.is_dir():
        fix = (
            f"{folder} does not exist: install prometheus-node-exporter (it makes its textfile folder) or set "
            "[guard] metrics_path to a file in an existing folder"
        )
    elif err.errno == errno.EROFS:
        fix = (
            f"{folder} is read-only for vllm-guard.service (ProtectSystem=strict): list it in ReadWritePaths= with "
            "`systemctl edit vllm-guard`"
        )
    elif err.errno in (errno.EACCES, errno.EPERM):
        fix = f"{folder} is not writable by root: check its mode and any ACL"
    else:
        fix = "check the folder and the disk"
    return f"cannot write metrics to {path}: {err.strerror or err}; {fix} (`vllm-guard run --check` checks it)"
