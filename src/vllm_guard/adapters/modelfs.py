"""Reading a model folder: config.json, safetensors headers (never the tensor data) and the shard index."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vllm_guard.core.modelinfo import ModelInfo, WeightSummary, model_info_from_config, weights_from_headers
from vllm_guard.errors import ModelError

INDEX_FILE = "model.safetensors.index.json"
# A safetensors header is JSON describing the tensors; real ones are kilobytes to a few MiB. The
# format's reference implementation refuses headers over 100 MB (safetensors MAX_HEADER_SIZE).
MAX_HEADER = 100_000_000
# Checkpoint files vLLM's default loader cannot use as they are (training checkpoints, pickles).
TRAINING_SUFFIXES = (".pt", ".pth", ".ckpt")


def read_config(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(
            "model-no-config",
            f"{path}: no such file, so {folder} is not a Hugging Face model folder",
            "point at the folder that holds config.json and the *.safetensors files",
        ) from None
    except OSError as err:
        raise ModelError(
            "model-config-unreadable", f"{path}: cannot read: {err.strerror or err}", "check permissions"
        ) from None
    except (UnicodeDecodeError, ValueError) as err:
        raise ModelError("model-bad-config", f"{path}: not valid JSON ({err})", "re-download config.json") from None
    if not isinstance(data, dict):
        raise ModelError("model-bad-config", f"{path}: not a JSON object", "re-download config.json")
    return data


def read_safetensors_header(path: Path) -> tuple[int, dict[str, Any]]:
    """The header of one safetensors file: (header length, parsed JSON). Reads only 8 + N bytes."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise ModelError(
                    "safetensors-truncated", f"{path}: shorter than 8 bytes, not a safetensors file", "re-download it"
                )
            (n,) = struct.unpack("<Q", head)
            if n <= 0 or n > MAX_HEADER:
                raise ModelError(
                    "safetensors-bad-header",
                    f"{path}: header length {n} is not plausible (not a safetensors file?)",
                    "re-download it; a Git LFS pointer file instead of the weights looks like this too",
                )
            raw = f.read(n)
    except OSError as err:
        raise ModelError(
            "safetensors-unreadable", f"{path}: cannot read: {err.strerror or err}", "check permissions"
        ) from None
    if len(raw) < n:
        raise ModelError(
            "safetensors-truncated", f"{path}: the header is cut short ({len(raw)} of {n} bytes)", "re-download it"
        )
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ModelError(
            "safetensors-bad-header", f"{path}: the header is not JSON ({err})", "re-download it"
        ) from None
    if not isinstance(header, dict):
        raise ModelError("safetensors-bad-header", f"{path}: the header is not a JSON object", "re-download it")
    return n, header


@dataclass
class FolderReport:
    """What is in a model folder, for doctor's model checks."""

    folder: Path
    safetensors: list[str] = field(default_factory=list)
    training_files: list[str] = field(default_factory=list)  # .pt/.pth/.ckpt
    bin_files: list[str] = field(default_factory=list)  # pytorch_model*.bin (loadable, but slow and pickled)
    index_shards: list[str] = field(default_factory=list)
    missing_shards: list[str] = field(default_factory=list)
    size_mismatches: list[tuple[str, int, int]] = field(default_factory=list)  # name, expected, actual
    header_errors: list[str] = field(default_factory=list)
    weights: WeightSummary | None = None
    index_error: str | None = None
    # a quantization method's own config file beside config.json (vLLM's get_quant_config looks for these names)
    quant_config_files: list[str] = field(default_factory=list)


QUANT_CONFIG_NAMES = ("quant_config.json", "quantize_config.json", "hf_quant_config.json")


def quant_config_files(folder: Path) -> list[str]:
    """The quantization methods' own config files in a model folder ([] where it cannot be listed)."""
    try:
        return sorted(p.name for p in folder.iterdir() if p.name.endswith(QUANT_CONFIG_NAMES) and p.is_file())
    except OSError:
        return []


def scan_folder(folder: Path) -> FolderReport:
    """List the weight files, check the index's shards are present and each file's size matches its header."""
    report = FolderReport(folder=folder)
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError as err:
        raise ModelError(
            "model-folder-unreadable", f"{folder}: cannot list: {err.strerror or err}", "check the path and permissions"
        ) from None
    report.safetensors = [n for n in names if n.endswith(".safetensors")]
    report.training_files = [n for n in names if n.endswith(TRAINING_SUFFIXES)]
    report.bin_files = [n for n in names if n.endswith(".bin") and "model" in n]
    report.quant_config_files = [n for n in names if n.endswith(QUANT_CONFIG_NAMES)]
    if INDEX_FILE in names:
        try:
            index = json.loads((folder / INDEX_FILE).read_text(encoding="utf-8"))
            wmap = index.get("weight_map") if isinstance(index, dict) else None
            if not isinstance(wmap, dict):
                raise ValueError("no weight_map object")
            report.index_shards = sorted({str(v) for v in wmap.values()})
            report.missing_shards = [s for s in report.index_shards if s not in names]
        except (OSError, ValueError) as err:
            report.index_error = f"{folder / INDEX_FILE}: {err}"
    headers: list[tuple[str, int, dict[str, Any]]] = []
    for name in report.safetensors:
        try:
            n, header = read_safetensors_header(folder / name)
        except ModelError as err:
            report.header_errors.append(err.message)
            continue
        headers.append((name, n, header))
    if headers:
        try:
            report.weights = weights_from_headers(headers)
        except ModelError as err:
            report.header_errors.append(err.message)
            return report
        for name, expected in report.weights.expected_file_sizes.items():
            actual = (folder / name).stat().st_size
            if actual != expected:
                report.size_mismatches.append((name, expected, actual))
    return report


def load_model_info(folder: Path, *, with_weights: bool = True) -> ModelInfo:
    """ModelInfo from a folder; the exact weight bytes come from the safetensors headers when present."""
    if not folder.is_dir():
        raise ModelError("model-missing", f"{folder}: no such folder", "download the model there or fix the path")
    info = model_info_from_config(read_config(folder), where=str(folder / "config.json"))
    if with_weights:
        report = scan_folder(folder)
        if report.weights is not None and report.weights.total_bytes > 0 and not report.missing_shards:
            info = info.with_weights(report.weights)
    return info
