"""The shipped Prometheus rules: promtool accepts them, their promtool unit tests pass, and every metric,
label and flag they name is one the guard writes.

The guard's metric names, labels and flag names are read from a textfile its own renderer writes for a
sample state, never copied into this test: a renamed metric breaks it. promtool comes from Debian's
``prometheus`` package, which ./scripts/setup installs.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from vllm_guard.core.config import Flags, Guard
from vllm_guard.core.kinds import FailureKind
from vllm_guard.core.metrics import MetricsSnapshot, PressureSample, TargetSnapshot, flag_values, render_textfile

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
PROM_DIR = REPO / "packaging/prometheus"
RULES = PROM_DIR / "vllm-guard.rules.yml"
TEST_FILES = sorted((PROM_DIR / "tests").glob("*.yml"))
DASHBOARD = REPO / "packaging/grafana/vllm-guard-dashboard.json"

# Labels Prometheus adds to every sample of a scrape (the node_exporter that reads the textfile).
SCRAPE_LABELS = {"job", "instance"}
# Series the rules read that are not the guard's: node_exporter's textfile collector and Prometheus' own
# scrape health. Name -> its labels besides the scrape labels.
EXTERNAL = {"node_textfile_mtime_seconds": {"file"}, "up": set()}
PROMQL_WORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}


def promtool() -> str:
    """The promtool binary; a missing one fails the test with what to do (a skip would hide the rules' tests)."""
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool is not installed: run ./scripts/setup (it installs Debian's prometheus package)")
    return path


def run_promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120)


# -- what the guard writes


@dataclass(frozen=True)
class Written:
    labels: dict[str, set[str]]  # metric -> label names
    values: dict[str, dict[str, set[str]]]  # metric -> label -> values seen in the sample


def guard_metrics() -> Written:
    """Metric names, label names and label values of a textfile rendered for a sample state that sets every
    field (all flags of a config's Flags, every failure kind, a pressure warning)."""
    flags = Flags(max_model_len=8192, max_num_seqs=64, max_num_batched_tokens=8192, swap_space=4, cpu_offload_gb=2)
    target = TargetSnapshot(
        unit="vllm-qwen.service",
        remedies={k.value: 1 for k in FailureKind},
        flags=flag_values(flags),
        last_probe_ok=True,
        time_to_ready_s=42.0,
        gave_up=False,
        kv_cache_tokens=1024,
        below_base_since=1_800_000_000.0,
    )
    snapshot = MetricsSnapshot(
        up=True,
        written_at=1_800_000_100.0,
        targets=[target],
        pressure=[PressureSample("host_memory", True, "vllm-qwen.service")],
    )
    labels: dict[str, set[str]] = {}
    values: dict[str, dict[str, set[str]]] = {}
    for line in render_textfile(snapshot).splitlines():
        if line.startswith("# TYPE "):
            name = line.split()[2]
            labels[name], values[name] = set(), {}
        elif line and not line.startswith("#"):
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ", line)
            assert m is not None and m.group(1) in labels, line
            for label, value in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""):
                labels[m.group(1)].add(label)
                values[m.group(1)].setdefault(label, set()).add(value)
    return Written(labels, values)


def test_the_sample_state_renders_every_family_with_samples() -> None:
    written = guard_metrics()
    assert "vllm_guard_up" in written.labels
    assert {"unit", "flag"} <= written.labels["vllm_guard_flag"]
    assert "enforce_eager" in written.values["vllm_guard_flag"]["flag"]
    for name, labels in written.labels.items():
        assert name.startswith("vllm_guard_"), name
        assert labels or name in ("vllm_guard_up", "vllm_guard_last_write_timestamp_seconds"), (
            f"{name}: the sample state left it without samples"
        )


# -- the rules file, read without a YAML library (the layout is checked against promtool's count)


@dataclass(frozen=True)
class Rule:
    kind: str  # "alert" or "record"
    name: str
    expr: str
    text: str  # the whole rule item: expr, labels, annotations
    expr_lines: tuple[int, int]  # [start, end) line numbers of `expr:` and its block


def read_rules(text: str) -> list[Rule]:
    lines = text.splitlines()
    starts = [(i, m) for i, line in enumerate(lines) if (m := re.match(r"^(\s*)- (alert|record): (\S+)\s*$", line))]
    rules = []
    for n, (i, m) in enumerate(starts):
        indent = len(m.group(1))
        end = i + 1
        limit = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        while end < limit and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
            end += 1
        item = lines[i:end]
        key = next(j for j, line in enumerate(item) if re.match(r"^\s*expr:", line))
        head = item[key].split("expr:", 1)[1].strip()
        key_indent = len(item[key]) - len(item[key].lstrip())
        stop = key + 1
        if head in ("|", "|-", ">", ">-"):
            while stop < len(item) and (
                not item[stop].strip() or len(item[stop]) - len(item[stop].lstrip()) > key_indent
            ):
                stop += 1
            expr = "\n".join(line.strip() for line in item[key + 1 : stop]).strip()
        else:
            expr = head
        rules.append(Rule(m.group(2), m.group(3), expr, "\n".join(item), (i + key, i + stop)))
    return rules


RULE_LIST = read_rules(RULES.read_text(encoding="utf-8"))
ALERTS = [r.name for r in RULE_LIST if r.kind == "alert"]
RECORDS = {r.name for r in RULE_LIST if r.kind == "record"}


@dataclass
class Names:
    metrics: set[str]
    matchers: list[tuple[str, str, str, str]]  # (metric or "", label, op, value)
    grouping: set[str]  # labels of by/without/on/ignoring/group_left/group_right


def promql_names(expr: str) -> Names:
    """Metric names, selector matchers and grouping labels of a PromQL expression (what these rules use)."""
    string = r'"(?:[^"\\]|\\.)*"|`[^`]*`'
    matchers = []
    for sel in re.finditer(rf"([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{{((?:[^{{}}\"`]|{string})*)\}}", expr):
        for label, op, value in re.findall(rf"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*({string})", sel.group(2)):
            matchers.append((sel.group(1) or "", label, op, value[1:-1].replace('\\"', '"')))
    bare = re.sub(rf"\{{(?:[^{{}}\"`]|{string})*\}}", " ", expr)
    bare = re.sub(string, " ", bare)
    grouping: set[str] = set()
    clause = r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)"
    for group in re.findall(clause, bare):
        grouping |= {g.strip() for g in group.split(",") if g.strip()}
    bare = re.sub(clause, " ", bare)
    bare = re.sub(r"\[[^\]]*\]|\boffset\s+\w+", " ", bare)
    idents = re.findall(r"(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:])(?!\s*\()", bare)
    return Names({i for i in idents if i not in PROMQL_WORDS}, matchers, grouping)


def test_the_expression_reader_sees_names_matchers_and_groups() -> None:
    names = promql_names(
        'sum by (job, instance) (rate(a_total{x="1", y=~`b.*`}[5m])) > on (job) group_left (z) b:c:d offset 1h'
    )
    assert names.metrics == {"a_total", "b:c:d"}
    assert names.matchers == [("a_total", "x", "=", "1"), ("a_total", "y", "=~", "b.*")]
    assert names.grouping == {"job", "instance", "z"}


# -- promtool


def test_promtool_accepts_the_rules_and_counts_what_this_test_reads() -> None:
    proc = run_promtool("check", "rules", str(RULES), cwd=PROM_DIR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = re.search(r"SUCCESS: (\d+) rules found", proc.stdout)
    assert found is not None, proc.stdout
    assert int(found.group(1)) == len(RULE_LIST), "the reader above missed rules: keep `- alert:`/`- record:` items"


def test_promtool_unit_tests_pass() -> None:
    assert TEST_FILES, "no promtool tests in packaging/prometheus/tests"
    proc = run_promtool("test", "rules", *(str(p.relative_to(PROM_DIR)) for p in TEST_FILES), cwd=PROM_DIR)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("SUCCESS") == len(TEST_FILES), proc.stdout


def files_testing(alert: str) -> list[Path]:
    return [p for p in TEST_FILES if re.search(rf"^\s*alertname: {alert}\s*$", p.read_text(encoding="utf-8"), re.M)]


@pytest.mark.parametrize("alert", ALERTS)
def test_every_alert_has_a_case_where_it_does_not_fire(alert: str) -> None:
    pattern = rf"^\s*alertname: {alert}\s*\n\s*exp_alerts: \[\]\s*$"
    assert any(re.search(pattern, p.read_text(encoding="utf-8"), re.M) for p in files_testing(alert)), (
        f"no promtool test expects {alert} not to fire"
    )


@pytest.mark.parametrize("alert", ALERTS)
def test_every_alert_has_a_case_where_it_fires(alert: str, tmp_path: Path) -> None:
    """With the alert's expression replaced by one that never fires, its promtool tests fail."""
    files = files_testing(alert)
    assert files, f"no promtool test names {alert}"
    rule = next(r for r in RULE_LIST if r.name == alert)
    lines = RULES.read_text(encoding="utf-8").splitlines()
    start, stop = rule.expr_lines
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    lines[start:stop] = [f"{indent}expr: vector(0) > 1"]
    (tmp_path / RULES.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    for f in files:
        shutil.copy(f, tmp_path / "tests" / f.name)
    proc = run_promtool("test", "rules", *(f"tests/{f.name}" for f in files), cwd=tmp_path)
    out = proc.stdout + proc.stderr  # promtool reports failed cases on stderr
    assert proc.returncode != 0 and f"alertname: {alert}," in out, f"no promtool test expects {alert} to fire:\n{out}"


# -- names the rules use


def test_every_metric_the_rules_read_is_one_the_guard_writes() -> None:
    written = guard_metrics()
    external_used: set[str] = set()
    for rule in RULE_LIST:
        names = promql_names(rule.expr)
        for name in names.metrics:
            if name.startswith("vllm_guard_"):
                assert name in written.labels, f"{rule.name}: {name} is not a metric the guard writes"
            elif ":" in name:
                assert name in RECORDS, f"{rule.name}: {name} is recorded by no rule"
            else:
                assert name in EXTERNAL, f"{rule.name}: {name} is neither the guard's nor node_exporter's"
                external_used.add(name)
        # The labels it selects and groups by are labels of the series it reads.
        known = set(SCRAPE_LABELS)
        for name in names.metrics:
            known |= written.labels.get(name) or EXTERNAL.get(name) or set()
            if name in RECORDS:
                known |= set().union(*written.labels.values())
        for metric, label, op, value in names.matchers:
            assert label in known, f"{rule.name}: no series it reads has a label {label}"
            fixed = written.values.get(metric, {}).get(label)
            if fixed is not None and label in ("flag", "kind", "resource") and op in ("=", "!="):
                assert value in fixed, f"{rule.name}: {metric} has no {label}={value!r} (it has {sorted(fixed)})"
        assert names.grouping <= known, f"{rule.name}: groups by {sorted(names.grouping - known)}"
        # Annotations name only labels the alert's series carry.
        for label in re.findall(r"\$labels\.([a-zA-Z_]+)", rule.text):
            assert label in known, f"{rule.name}: its annotations use $labels.{label}"
    assert external_used == set(EXTERNAL), f"EXTERNAL lists names no rule reads: {set(EXTERNAL) - external_used}"


def test_the_staleness_matcher_finds_the_default_textfile() -> None:
    """node_exporter labels node_textfile_mtime_seconds with the file's path (older releases: its name)."""
    default = Guard().metrics_path
    regexes = [
        value
        for r in RULE_LIST
        for metric, label, op, value in promql_names(r.expr).matchers
        if metric == "node_textfile_mtime_seconds" and label == "file" and op == "=~"
    ]
    assert regexes, "no rule reads the textfile's mtime"
    for regex in regexes:  # Prometheus anchors its regular expressions at both ends
        assert re.fullmatch(regex, default), f"{regex} does not match {default}"
        assert re.fullmatch(regex, Path(default).name)
        assert not re.fullmatch(regex, str(Path(default).with_name("other.prom")))


def test_alerts_say_what_to_do() -> None:
    for rule in RULE_LIST:
        if rule.kind != "alert":
            continue
        assert re.search(r"^\s*summary:", rule.text, re.M), f"{rule.name} has no summary"
        assert re.search(r"^\s*description:", rule.text, re.M), f"{rule.name} has no description"
        assert "journalctl -u vllm-guard" in rule.text, f"{rule.name}: its description names no journalctl command"
        assert re.search(r"^\s*severity: (critical|warning)\s*$", rule.text, re.M), f"{rule.name} has no severity"


def test_the_heartbeat_threshold_leaves_room_for_the_guards_refresh() -> None:
    """VllmGuardMetricsStale reads the heartbeat, with a threshold several refresh periods long (a missed
    rewrite or two, a slow scrape, a little clock skew must not page anyone)."""
    from vllm_guard.app.daemon import METRICS_REFRESH_S

    rule = next(r for r in RULE_LIST if r.name == "VllmGuardMetricsStale")
    found = re.search(r"time\(\) - vllm_guard_last_write_timestamp_seconds > (\d+)", rule.expr)
    assert found is not None, f"VllmGuardMetricsStale does not compare the heartbeat's age: {rule.expr}"
    assert int(found.group(1)) >= 3 * METRICS_REFRESH_S, (found.group(1), METRICS_REFRESH_S)
    # the fallback for guards without the heartbeat stays quiet where the heartbeat is written
    assert "unless on (job, instance) vllm_guard_last_write_timestamp_seconds" in rule.expr


def test_the_below_base_alert_reads_since_when() -> None:
    rule = next(r for r in RULE_LIST if r.name == "VllmGuardFlagsBelowBase")
    assert promql_names(rule.expr).metrics == {"vllm_guard_below_base_since_timestamp_seconds"}
    days = re.search(r"> (\d+) \* 86400", rule.expr)
    assert days is not None, rule.expr
    # the annotation says where the limit is set, with the same figure
    assert f"{days.group(1)} days are `{days.group(1)} * 86400`" in re.sub(r"\s+", " ", rule.text)


# -- links from each alert to its dashboard panel


def guard_metrics_read(expr: str) -> set[str]:
    """The guard's metrics an expression reads, through the recording rules it reads."""
    out = set()
    for name in promql_names(expr).metrics:
        if name in RECORDS:
            out |= guard_metrics_read(next(r.expr for r in RULE_LIST if r.name == name))
        elif name.startswith("vllm_guard_"):
            out.add(name)
    return out


def annotation(rule: Rule, key: str) -> str | None:
    found = re.search(rf"^\s*{re.escape(key)}: (.*)$", rule.text, re.M)
    return found.group(1).strip().strip('"') if found else None


@pytest.mark.parametrize("alert", ALERTS)
def test_every_alert_links_to_a_dashboard_panel_that_shows_what_it_reads(alert: str) -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    panels = {str(p["id"]): p for p in dash["panels"]}
    variables = {v["name"] for v in dash["templating"]["list"]}
    rule = next(r for r in RULE_LIST if r.name == alert)
    uid, panel_id, url = (annotation(rule, k) for k in ("__dashboardUid__", "__panelId__", "dashboard_url"))
    assert uid == dash["uid"], f"{alert}: __dashboardUid__ {uid!r}, the dashboard's uid is {dash['uid']!r}"
    assert panel_id in panels and panels[panel_id]["type"] != "row", f"{alert}: no panel {panel_id!r}"
    panel = panels[panel_id]
    shown = set().union(*(guard_metrics_read(t["expr"]) for t in panel["targets"]))
    assert shown & guard_metrics_read(rule.expr), (
        f"{alert} links to {panel['title']!r}, which shows none of {sorted(guard_metrics_read(rule.expr))}"
    )
    assert url is not None, f"{alert} has no dashboard_url"
    path, _, query = url.partition("?")
    assert path.startswith(f"/d/{dash['uid']}/"), url
    params = dict(q.split("=", 1) for q in query.split("&"))
    assert params.pop("viewPanel") == panel_id, url
    # the alert's host (and unit) selected, each through a variable the dashboard has
    assert params.pop("var-host") == "{{ $labels.instance | urlquery }}" and "host" in variables, url
    if "$labels.unit" in rule.text:
        assert params.pop("var-unit") == "{{ $labels.unit | urlquery }}" and "unit" in variables, url
    assert not params, f"{alert}: unknown parameters {params} in {url}"
