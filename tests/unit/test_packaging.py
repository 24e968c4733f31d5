"""The shipped catalog, example config, Alloy configuration and Grafana dashboard agree with the code.

Every name these files use is read from the code that writes it: MESSAGE_IDs from ``EventKind``,
journal fields from ``FIELDS``, metric names from the metrics module, config keys from the models.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vllm_guard import __version__
from vllm_guard.app.config_load import load_config
from vllm_guard.consts import Paths
from vllm_guard.core.events import FIELDS, EventKind
from vllm_guard.core.kinds import FailureKind

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
PACKAGING = REPO / "packaging"
CATALOG = PACKAGING / "catalog/vllm-guard.catalog"
DASHBOARD = PACKAGING / "grafana/vllm-guard-dashboard.json"
ALLOY = PACKAGING / "alloy/vllm-guard.alloy"
RULES = PACKAGING / "prometheus/vllm-guard.rules.yml"
EXAMPLE = PACKAGING / "example-config.toml"

# Fields journald itself attaches (systemd.journal-fields(7)); catalog texts may name them too.
JOURNALD_FIELDS = {"MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "_SYSTEMD_UNIT", "_PID", "_HOSTNAME"}


# -- the journal catalog


def parse_catalog(text: str) -> dict[str, dict[str, Any]]:
    """Catalog entries by MESSAGE_ID: their header fields and body (the format of journalctl --update-catalog)."""
    entries: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    in_header = False
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.fullmatch(r"-- ([0-9a-f]{32})(?: (\S+))?", line)
        if m:
            assert m.group(1) not in entries, f"MESSAGE_ID {m.group(1)} appears twice"
            current = {"headers": {}, "body": []}
            entries[m.group(1)] = current
            in_header = True
            continue
        if current is None:
            assert not line.strip(), f"text before the first entry: {line!r}"
            continue
        if in_header:
            if not line.strip():
                in_header = False
                continue
            key, sep, value = line.partition(": ")
            assert sep, f"bad header line {line!r}"
            current["headers"][key] = value
        else:
            current["body"].append(line)
    for entry in entries.values():
        entry["body"] = "\n".join(entry["body"]).strip()
    return entries


def test_catalog_has_an_entry_for_every_event_and_nothing_else() -> None:
    entries = parse_catalog(CATALOG.read_text(encoding="utf-8"))
    assert set(entries) == {k.message_id for k in EventKind}


@pytest.mark.parametrize("kind", list(EventKind), ids=lambda k: k.name.lower())
def test_catalog_entry_is_complete(kind: EventKind) -> None:
    entry = parse_catalog(CATALOG.read_text(encoding="utf-8"))[kind.message_id]
    headers = entry["headers"]
    assert headers.get("Defined-By") == "vllm-guard"
    assert headers.get("Subject"), "every entry needs a Subject"
    assert headers.get("Support"), "every entry needs a Support line"
    assert headers.get("Documentation") == "man:vllm-guard(8)"
    # A body that says what happened and what to do, not a repeat of the subject.
    assert len(entry["body"].split()) >= 25, entry["body"]


def test_catalog_substitutes_only_fields_the_guard_writes() -> None:
    text = "\n".join(line for line in CATALOG.read_text(encoding="utf-8").splitlines() if not line.startswith("#"))
    used = set(re.findall(r"@([A-Z0-9_]+)@", text))
    known = {f"VLLM_GUARD_{k}" for k in FIELDS} | JOURNALD_FIELDS
    assert used, "the catalog should name the event's fields (@VLLM_GUARD_UNIT@ ...)"
    assert used <= known, f"unknown fields in the catalog: {sorted(used - known)}"


@pytest.mark.skipif(shutil.which("journalctl") is None, reason="journalctl is not installed")
def test_journalctl_compiles_the_catalog(tmp_path: Path) -> None:
    """journalctl --update-catalog accepts the file and lists every entry under the guard's name."""
    cat_dir = tmp_path / "usr/lib/systemd/catalog"
    cat_dir.mkdir(parents=True)
    shutil.copy(CATALOG, cat_dir / CATALOG.name)
    subprocess.run(["journalctl", f"--root={tmp_path}", "--update-catalog"], check=True, capture_output=True)
    listed = subprocess.run(
        ["journalctl", f"--root={tmp_path}", "--list-catalog"], check=True, capture_output=True, text=True
    ).stdout
    ids = {line.split()[0] for line in listed.splitlines() if line.strip()}
    assert ids == {k.message_id for k in EventKind}
    assert all(" vllm-guard: " in line for line in listed.splitlines() if line.strip())


# -- the example config


def test_example_config_loads() -> None:
    loaded = load_config(Paths(Path("/nonexistent-root")), EXAMPLE, check_files=False)
    assert loaded.config.target[0].unit == "vllm-qwen"


def config_keys() -> Iterator[tuple[str, str]]:
    """(table, key) for every field of the config models, walking nested models (e.g. target.flags)."""
    from pydantic import BaseModel

    from vllm_guard.core.config import Config

    def walk(model: type[BaseModel], table: str) -> Iterator[tuple[str, str]]:
        for name, info in model.model_fields.items():
            ann = info.annotation
            inner = getattr(ann, "__args__", (None,))[0] if getattr(ann, "__origin__", None) is list else None
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                yield from walk(ann, f"{table}.{name}".lstrip("."))
            elif isinstance(inner, type) and issubclass(inner, BaseModel):
                yield from walk(inner, f"{table}.{name}".lstrip("."))
            else:
                yield table, name

    yield from walk(Config, "")


def test_config_keys_are_found() -> None:
    keys = set(config_keys())
    assert ("target.flags", "gpu_memory_utilization") in keys
    assert ("guard", "metrics") in keys
    assert ("target.fallback", "quantization") in keys


@pytest.mark.parametrize(("table", "key"), list(config_keys()), ids=lambda v: str(v))
def test_example_config_shows_every_key(table: str, key: str) -> None:
    """Each key appears in its own table, set or commented out."""
    text = EXAMPLE.read_text(encoding="utf-8")
    header = {"guard": "[guard]", "target": "[[target]]", "target.fallback": "[[target.fallback]]"}.get(
        table, f"[{table}]"
    )
    sections = re.split(r"^#? ?(\[\[?[a-z._]+\]\]?)", text, flags=re.M)
    bodies = [sections[i + 1] for i in range(1, len(sections) - 1, 2) if sections[i] == header]
    assert bodies, f"no {header} table in {EXAMPLE.name}"
    assert any(re.search(rf"^#? ?{key} = ", body, flags=re.M) for body in bodies), f"{table}.{key} not shown"


# -- versions


def test_package_versions_match_the_code() -> None:
    changelog = (PACKAGING / "debian/changelog").read_text(encoding="utf-8").splitlines()[0]
    deb_version = re.search(r"\(([^)]+)\)", changelog)
    assert deb_version is not None
    assert deb_version.group(1).rsplit("-", 1)[0] == __version__
    spec = (PACKAGING / "rpm/vllm-guard.spec").read_text(encoding="utf-8")
    rpm_version = re.search(r"^Version:\s*(\S+)", spec, flags=re.M)
    assert rpm_version is not None and rpm_version.group(1) == __version__
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["version"] == __version__


def test_constraints_pin_every_runtime_dependency() -> None:
    """The bundled venv is reproducible: every dependency in pyproject is pinned to one version."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    pins = {}
    for line in (PACKAGING / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, f"not an exact pin: {line!r}"
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    for dep in pyproject["project"]["dependencies"]:
        name = re.sub(r"[-_.]+", "-", re.split(r"[<>=!~ \[;]", dep, maxsplit=1)[0]).lower()
        assert name in pins, f"{name} is a dependency but packaging/constraints.txt does not pin it"


# -- metrics, Alloy and the dashboard


def guard_metrics() -> dict[str, set[str]]:
    """Metric name -> its label names, read from a textfile the guard's own renderer writes with every
    field of the snapshot set (names are never copied into this test)."""
    from vllm_guard.core.metrics import MetricsSnapshot, PressureSample, TargetSnapshot, render_textfile

    target = TargetSnapshot(
        unit="vllm-qwen",
        remedies={FailureKind.KV_CACHE_INSUFFICIENT.value: 1},
        flags={"gpu_memory_utilization": 0.85},
        last_probe_ok=True,
        time_to_ready_s=42.0,
        gave_up=True,
        kv_cache_tokens=1024,
        below_base_since=1_800_000_000.0,
    )
    text = render_textfile(
        MetricsSnapshot(
            up=True,
            written_at=1_800_000_100.0,
            targets=[target],
            pressure=[PressureSample("host_memory", True, "vllm-qwen")],
        )
    )
    metrics: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            metrics[line.split()[2]] = set()
        elif line and not line.startswith("#"):
            name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
            assert name is not None and name.group(0) in metrics, line
            metrics[name.group(0)] |= set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', line))
    for name, labels in metrics.items():
        assert name.startswith("vllm_guard_"), name
        assert labels or name in ("vllm_guard_up", "vllm_guard_last_write_timestamp_seconds"), (
            f"{name}: the snapshot above left it without samples"
        )
    return metrics


# Labels Prometheus adds to every scraped sample (the node_exporter textfile is one scrape target).
SCRAPE_LABELS = {"instance", "job"}


def alloy_names() -> tuple[set[str], set[str]]:
    """(labels, structured metadata keys) the Alloy configuration attaches to journal entries."""
    text = ALLOY.read_text(encoding="utf-8")
    labels = set(re.findall(r'target_label\s*=\s*"([a-z_]+)"', text))
    sm_block = re.search(r"stage\.structured_metadata\s*\{\s*values\s*=\s*\{(.*?)\}", text, flags=re.S)
    assert sm_block is not None, "no stage.structured_metadata in the Alloy configuration"
    metadata = set(re.findall(r"^\s*([a-z0-9_]+)\s*=", sm_block.group(1), flags=re.M))
    return labels, metadata


def test_alloy_keeps_every_guard_field() -> None:
    labels, metadata = alloy_names()
    kept = {n for n in labels | metadata if n.startswith("vllm_guard_")}
    assert kept == {f"vllm_guard_{k.lower()}" for k in FIELDS}
    assert not labels & metadata
    # Each structured-metadata key is extracted from the journal field of the same name.
    text = ALLOY.read_text(encoding="utf-8")
    for name in metadata:
        assert re.search(rf'^\s*{name}\s*=\s*"{name.upper()}"', text, flags=re.M), f"{name} is not extracted"
    # Each label comes from its journal field.
    for name in labels & kept:
        assert f'"__journal_{name}"' in text


def dashboard_queries() -> Iterator[tuple[str, str]]:
    """(datasource type, query) for every query of the dashboard: panels, variables, annotations."""
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))

    def ds_type(obj: dict[str, Any]) -> str:
        ds = obj.get("datasource") or {}
        return str(ds.get("type", "")) if isinstance(ds, dict) else ""

    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            yield ds_type(target) or ds_type(panel), target["expr"]
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            q = var["query"]
            yield ds_type(var), q["query"] if "query" in q else q["stream"]
    for ann in dash["annotations"]["list"]:
        yield ds_type(ann), ann["expr"]


def test_dashboard_has_queries_for_both_sources() -> None:
    kinds = [k for k, _ in dashboard_queries()]
    assert kinds.count("prometheus") >= 5
    assert kinds.count("loki") >= 5
    assert set(kinds) == {"prometheus", "loki"}


# A recorded series' name (level:metric:operations, as the rules file names them).
RECORDED = r"\b([a-z_]+:vllm_guard_[a-z0-9_]+:[a-z0-9_]+)"


def recording_rules() -> dict[str, set[str]]:
    """Name -> labels of each recording rule of the shipped rules file (its `sum by (...)` labels)."""
    text = RULES.read_text(encoding="utf-8")
    rules: dict[str, set[str]] = {}
    for name, expr in re.findall(r"- record: (\S+)\n\s+expr: \|\n((?:\s{10,}.*\n)+)", text):
        group = re.search(r"\bby \(([^)]*)\)", expr)
        assert group is not None, f"{name}: no `by (...)` in {expr}"
        rules[name] = {g.strip() for g in group.group(1).split(",")}
    assert rules, f"no recording rules read from {RULES}"
    return rules


def test_dashboard_metrics_are_metrics_the_guard_writes() -> None:
    written = guard_metrics()
    records = recording_rules()
    used: set[str] = set()
    records_used: set[str] = set()
    for kind, query in dashboard_queries():
        if kind != "prometheus":
            continue
        for name, selector in re.findall(RECORDED + r"(?:\{([^}]*)\})?", query):
            assert name in records, f"{name} is recorded by no rule of {RULES.name}: {query}"
            records_used.add(name)
            for label in re.findall(r"([a-zA-Z_]+)\s*(?:=~|!~|!=|=)", selector):
                assert label in records[name], f"{name} has no label {label}: {query}"
        for group in re.findall(r"\bby\s*\(([^)]*)\)", query) if re.search(RECORDED, query) else []:
            for label in (g.strip() for g in group.split(",")):
                assert any(label in records[n] for n in re.findall(RECORDED, query)), f"by ({label}): {query}"
        query = re.sub(RECORDED, " ", query)
        for name, selector in re.findall(r"\b(vllm_guard_[a-z0-9_]+)\b(?:\{([^}]*)\})?", query):
            assert name in written, f"{name} is not a metric the guard writes: {query}"
            used.add(name)
            for label in re.findall(r"([a-zA-Z_]+)\s*(?:=~|!~|!=|=)", selector):
                assert label in written[name] | SCRAPE_LABELS, f"{name} has no label {label}: {query}"
        # Aggregation labels (by (...)) are labels of the metrics the query reads.
        names = set(re.findall(r"\b(vllm_guard_[a-z0-9_]+)\b", query))
        labels_of_query = set().union(*(written[n] for n in names)) | SCRAPE_LABELS
        for group in re.findall(r"\bby\s*\(([^)]*)\)", query):
            for label in (g.strip() for g in group.split(",")):
                assert label in labels_of_query, f"by ({label}): not a label of {sorted(names)}: {query}"
    assert used == set(written), f"metrics without a panel: {sorted(set(written) - used)}"
    fleet = {n for n in records if n.startswith("instance:")}
    assert fleet <= records_used, f"per-host recording rules without a panel: {sorted(fleet - records_used)}"


def test_dashboard_filters_every_metric_by_the_host_and_unit_variables() -> None:
    """The fleet view: `host` (the instance label) and `unit` variables, and every Prometheus query of a
    panel reads only the selected hosts, and the selected units where its series have a unit label."""
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert "instance" in variables["host"]["query"]["query"], variables["host"]
    assert "$host" in variables["unit"]["query"]["query"], variables["unit"]
    written = guard_metrics()
    records = recording_rules()
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            if (target.get("datasource") or panel.get("datasource") or {}).get("type") != "prometheus":
                continue
            expr = target["expr"]
            for name, selector in re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}", expr):
                labels = records.get(name) or written.get(name, set())
                assert 'instance=~"$host"' in selector, f"{panel['title']}: {name} is not filtered by $host: {expr}"
                if "unit" in labels:
                    assert 'unit=~"$unit"' in selector, f"{panel['title']}: {name} is not filtered by $unit: {expr}"
            names = set(re.findall(r"\b(?:[a-z_]+:)?vllm_guard_[a-z0-9_]+(?::[a-z0-9_]+)?", expr))
            assert names and all(re.search(re.escape(n) + r"\{", expr) for n in names), (
                f"{panel['title']}: a series without a selector: {expr}"
            )


def test_dashboard_journal_names_are_fields_the_guard_writes() -> None:
    labels, metadata = alloy_names()
    guard_fields = {f"vllm_guard_{k.lower()}" for k in FIELDS}
    events = {k.name.lower() for k in EventKind}
    kinds = {k.value for k in FailureKind}
    for kind, query in dashboard_queries():
        if kind != "loki":
            continue
        # Stream selectors may only use labels that Alloy sets.
        for selector in re.findall(r"\{([^{}]*)\}", query):
            if selector.startswith("."):  # a line_format template, not a selector
                continue
            for label, _op, value in re.findall(r'([a-z_]+)\s*(=~|!~|!=|=)\s*"([^"]*)"', selector):
                assert label in labels, f"{label} is not a label Alloy sets: {query}"
                if label == "vllm_guard_event" and "$" not in value:
                    assert set(value.split("|")) <= events, f"unknown event in {query}"
                if label == "vllm_guard_kind" and "$" not in value:
                    assert set(value.split("|")) <= kinds, f"unknown failure kind in {query}"
        # Every vllm_guard_* name (label, metadata, template field) is one of the guard's fields.
        for name in re.findall(r"\b(vllm_guard_[a-z0-9_]+)\b", query):
            assert name in guard_fields, f"{name} is not a field the guard writes: {query}"
            assert name in labels | metadata, f"{name} is neither a label nor metadata in Alloy: {query}"


def test_dashboard_template_fields_exist() -> None:
    """line_format templates only print labels, metadata or the line itself."""
    labels, metadata = alloy_names()
    for kind, query in dashboard_queries():
        for field in re.findall(r"\{\{\s*\.?([A-Za-z_]+)\s*\}\}", query):
            if kind == "loki":
                assert field in labels | metadata | {"__line__"}, f"{field} in {query}"


def test_dashboard_panels_do_not_overlap() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    cells: dict[tuple[int, int], str] = {}
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    for panel in dash["panels"]:
        g = panel["gridPos"]
        assert g["x"] + g["w"] <= 24, f"{panel['title']} is wider than the grid"
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"{panel['title']} overlaps {cells[(x, y)]}"
                cells[(x, y)] = panel["title"]
