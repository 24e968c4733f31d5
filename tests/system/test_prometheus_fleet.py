"""Fleet monitoring end to end: a real Prometheus scrapes two guarded hosts through node_exporter, with the
shipped rules loaded, and answers every metrics query of the shipped Grafana dashboard.

Two throwaway systemd hosts (containers), each with the real vllm-guard.service and `[guard] metrics =
true` at its default metrics_path. On both, the emulated vLLM unit's first start fails on a KV cache too
small for its max_model_len and the guard heals it (a lower max_model_len: the unit now runs below its
base config). The second host also has a unit started with an argument vLLM rejects, which flags cannot
fix: the guard gives up on it.

node_exporter: one Debian ``prometheus-node-exporter`` per host, run here on the test machine on a
loopback port of its own, with its textfile collector reading that host's textfile folder: the folder is a
test folder bound writable into the container at /var/lib/prometheus/node-exporter, where the guard writes
(the hardened unit may write only there). This is what node_exporter on a real host sees, without a
network between the containers and the test machine (each container has only its own loopback).

Prometheus: Debian's ``prometheus`` binary, started by the test as a plain process on loopback with a
temporary config and storage folder, scraping every second and evaluating rules every second. The rules
are a copy of packaging/prometheus/vllm-guard.rules.yml made by the test with every ``for:`` set to 0s, so
an alert fires at its first evaluation instead of after minutes (the promtool tests check the real
``for:``). Then, through Prometheus' HTTP API:

- the dashboard's host and unit variables list the two hosts and their units;
- every query of every metrics panel returns data, with the variables set to all hosts, and to each host;
- the fleet recording rules count each host's units right;
- VllmGuardGaveUp fires for the given-up unit and for nothing on the other host, and its dashboard_url
  opens a panel that shows that unit given up;
- every rule evaluates without error.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.system.harness import (
    Q7,
    REPO,
    GuardBox,
    add_model,
    requires_sandbox,
    start,
    wait_for,
    wait_healthy,
)
from vllm_guard.app.sandbox import Bind, guard_box

pytestmark = pytest.mark.system

T = TypeVar("T")

PROMETHEUS = shutil.which("prometheus")
EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
RULES = REPO / "packaging/prometheus/vllm-guard.rules.yml"
DASHBOARD = REPO / "packaging/grafana/vllm-guard-dashboard.json"
TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"  # the folder of the guard's default metrics_path
HEALED, BROKEN = "vllm-emu", "vllm-broken"
HOSTS = ("gpu-a", "gpu-b")  # the instance label of each host's node_exporter; gpu-b has the broken unit
SCRAPE_S = 1
# Grafana's $__rate_interval is at least 4 scrape intervals (its data source set to this scrape interval).
RATE_INTERVAL = f"{4 * SCRAPE_S}s"
RANGE_S = 30  # the time range the panels' range queries cover, ending now
# The emulator's KV-cache failure on an emulated 24 GiB GPU (see tests/system/test_memory_failures.py):
# 32768 tokens do not fit at util 0.7; the guard lowers max_model_len to the emulator's estimate.
KV_FLAGS = {"gpu_memory_utilization": 0.7, "max_model_len": 32768}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait(what: str, predicate: Callable[[], T | None], timeout: float, interval: float = 0.5) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


@contextlib.contextmanager
def process(argv: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A background process, its output in ``log``; terminated (then killed) on the way out."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


class Prom:
    """Prometheus' HTTP API (v1) on loopback."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path: str, **params: str | list[str]) -> Any:
        query = urllib.parse.urlencode(params, doseq=True)
        try:
            with urllib.request.urlopen(f"{self.base}{path}?{query}", timeout=10) as resp:
                body = json.loads(resp.read().decode())
        except urllib.error.HTTPError as err:  # Prometheus says why in the body (a bad query: 400)
            raise AssertionError(f"{path} {params}: {err.code} {err.read().decode(errors='replace')}") from err
        assert body.get("status") == "success", body
        return body["data"]

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/-/ready", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    def instant(self, expr: str) -> list[dict[str, Any]]:
        data = self.get("/api/v1/query", query=expr)
        assert data["resultType"] == "vector", data
        return list(data["result"])

    def range(self, expr: str) -> list[dict[str, Any]]:
        end = time.time()
        data = self.get("/api/v1/query_range", query=expr, start=str(end - RANGE_S), end=str(end), step="1")
        return [s for s in data["result"] if s["values"]]

    def by_instance(self, expr: str) -> dict[str, float]:
        return {s["metric"]["instance"]: float(s["value"][1]) for s in self.instant(expr)}

    def firing(self) -> list[dict[str, Any]]:
        return [a for a in self.get("/api/v1/alerts")["alerts"] if a["state"] == "firing"]


# -- the dashboard


def dashboard() -> dict[str, Any]:
    return dict(json.loads(DASHBOARD.read_text(encoding="utf-8")))


def metrics_targets(dash: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(panel, target) of every Prometheus query of the dashboard's panels."""
    out = []
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            ds = target.get("datasource") or panel.get("datasource") or {}
            if ds.get("type") == "prometheus":
                out.append((panel, target))
    return out


def substitute(expr: str, values: dict[str, str]) -> str:
    """Grafana's substitution of the variables in a query (a regex value for =~, as multi/All gives)."""
    out = expr.replace("$__rate_interval", RATE_INTERVAL)
    for name, value in values.items():
        out = re.sub(rf"\$\{{{name}\}}|\${name}\b", value.replace("\\", "\\\\"), out)  # the value as is
    assert "$" not in out, f"a variable left in {out}"
    return out


def regex_value(value: str) -> str:
    """One value of a multi-value variable as Grafana puts it into `=~"..."`: regex characters escaped,
    each backslash doubled for the PromQL string."""
    return re.sub(r"([\\^$*+?.()|\[\]{}])", r"\\\1", value).replace("\\", "\\\\")


def variable_values(prom: Prom, dash: dict[str, Any], name: str, values: dict[str, str]) -> set[str]:
    """The values of a query variable (``label_values(SELECTOR, LABEL)``), as Grafana asks Prometheus for them."""
    var = next(v for v in dash["templating"]["list"] if v["name"] == name)
    found = re.fullmatch(r"label_values\((.+),\s*([a-zA-Z_]+)\)", var["query"]["query"])
    assert found is not None, var["query"]
    selector, label = substitute(found.group(1), values), found.group(2)
    return set(prom.get(f"/api/v1/label/{label}/values", **{"match[]": selector}))


def queries_without_data(prom: Prom, dash: dict[str, Any], values: dict[str, str]) -> list[str]:
    missing = []
    for panel, target in metrics_targets(dash):
        expr = substitute(target["expr"], values)
        result = prom.instant(expr) if target.get("instant") else prom.range(expr)
        if not result:
            missing.append(f"panel {panel['id']} {panel['title']!r}: {expr}")
    return missing


# -- the hosts


def guard_config() -> dict[str, Any]:
    # metrics at the default metrics_path; memory pressure sampled every 2 s, so its series is there early
    return {"metrics": True, "vram_wait_timeout_s": 120, "pressure_interval_s": 2}


def prepare(gb: GuardBox, *, broken: bool) -> None:
    model = add_model(gb, "qwen", Q7)
    targets = [gb.emulator_target(unit=HEALED, model=model, port=8000, flags=KV_FLAGS)]
    if broken:  # vLLM rejects the argument: not a memory failure, flags cannot fix it, the guard gives up
        targets.append(
            gb.emulator_target(
                unit=BROKEN,
                model=model,
                port=8001,
                flags={"max_model_len": 8192},
                extra_args=["--no-such-flag"],
            )
        )
    start(gb, targets, guard=guard_config())


def test_prometheus_with_the_shipped_rules_serves_every_dashboard_query_of_two_guarded_hosts(
    tmp_path: Path,
) -> None:
    reason = requires_sandbox()
    if reason:
        pytest.skip(reason)
    if PROMETHEUS is None or EXPORTER is None:
        pytest.skip("prometheus or prometheus-node-exporter is not installed (./scripts/setup installs both)")

    # The rules with every `for:` at 0s (the alerts fire at their first evaluation; see the docstring).
    rules = RULES.read_text(encoding="utf-8")
    rules, n_for = re.subn(r"^(\s+)for: \S+\s*$", r"\1for: 0s", rules, flags=re.M)
    assert n_for >= 1, "no `for:` found in the rules: this test's copy no longer does what it says"
    (tmp_path / "rules.yml").write_text(rules, encoding="utf-8")

    textfiles = {host: tmp_path / host / "textfile" for host in HOSTS}
    ports = {host: free_port() for host in HOSTS}
    prom_port = free_port()
    static = [
        {"targets": [f"127.0.0.1:{ports[host]}"], "labels": {"instance": host}}  # instance: the host's name
        for host in HOSTS
    ]
    config = {
        "global": {
            "scrape_interval": f"{SCRAPE_S}s",
            "scrape_timeout": f"{SCRAPE_S}s",
            "evaluation_interval": f"{SCRAPE_S}s",
        },
        "rule_files": [str(tmp_path / "rules.yml")],
        "scrape_configs": [{"job_name": "node", "static_configs": static}],
    }
    (tmp_path / "prometheus.yml").write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML

    boxes: dict[str, GuardBox] = {}
    logs: list[Path] = []
    with contextlib.ExitStack() as stack:
        # node_exporter and Prometheus first: they collect from the first write on
        for host in HOSTS:
            textfiles[host].mkdir(parents=True)
            logs.append(tmp_path / f"node_exporter-{host}.log")
            argv = [
                EXPORTER,
                "--collector.disable-defaults",
                "--collector.textfile",
                f"--collector.textfile.directory={textfiles[host]}",
                f"--web.listen-address=127.0.0.1:{ports[host]}",
            ]
            stack.enter_context(process(argv, logs[-1]))
        logs.append(tmp_path / "prometheus.log")
        prom_proc = stack.enter_context(
            process(
                [
                    PROMETHEUS,
                    f"--config.file={tmp_path / 'prometheus.yml'}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{prom_port}",
                ],
                logs[-1],
            )
        )
        prom = Prom(prom_port)

        suffix = os.getpid() % 10000
        for host in HOSTS:
            bind = Bind(textfiles[host], TEXTFILE_DIR, read_only=False)
            boxes[host] = stack.enter_context(guard_box(f"vg-prom-{host}-{suffix}", repo=REPO, extra_binds=[bind]))
        try:
            wait("Prometheus to be ready", lambda: prom_proc.poll() is None and prom.ready(), 60)
            for host in HOSTS:
                prepare(boxes[host], broken=host == "gpu-b")
            for host in HOSTS:
                wait_healthy(boxes[host], HEALED, timeout=120)
            wait_for(boxes["gpu-b"], BROKEN, "gave_up", timeout=60)
            check_prometheus(prom)
        except BaseException:
            for host, gb in boxes.items():
                print(f"--- journal of {host} ({gb.box.name})\n{gb.box.journal_text(150)}")
                for f in textfiles[host].glob("*.prom"):
                    print(f"--- {f}\n{f.read_text(errors='replace')}")
            for log in logs:
                print(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}")
            raise


def check_prometheus(prom: Prom) -> None:
    dash = dashboard()
    all_hosts = {"host": ".*", "unit": ".*"}  # Grafana's "All" (allValue .*) for both variables

    # The guards' state has reached Prometheus: both units healed (below base now), one given up.
    def state_scraped() -> bool:
        below = prom.by_instance('vllm_guard_below_base_since_timestamp_seconds{unit="vllm-emu.service"}')
        gave_up = prom.by_instance('vllm_guard_gave_up{unit="vllm-broken.service"} == 1')
        return set(below) == set(HOSTS) and set(gave_up) == {"gpu-b"}

    wait("the healed and given-up units in Prometheus", state_scraped, 60)

    # The variables list the hosts and their units, as Grafana asks for them.
    assert variable_values(prom, dash, "host", {}) == set(HOSTS)
    assert variable_values(prom, dash, "unit", {"host": ".*"}) == {f"{HEALED}.service", f"{BROKEN}.service"}
    assert variable_values(prom, dash, "unit", {"host": "gpu-a"}) == {f"{HEALED}.service"}

    # Every metrics query of every panel returns data: all hosts, then each host alone. (A series written
    # only after a while, e.g. the memory-pressure warning's after two samples, may take a scrape or two.)
    settings = [all_hosts, *({"host": regex_value(host), "unit": ".*"} for host in HOSTS)]
    last: list[str] = []

    def all_answer() -> bool:
        nonlocal last
        last = [f"{s['host']}: {m}" for s in settings for m in queries_without_data(prom, dash, s)]
        return not last

    try:
        wait("every dashboard query to return data", all_answer, 45, interval=2)
    except AssertionError:
        pytest.fail("dashboard queries without data:\n" + "\n".join(last))
    assert len(metrics_targets(dash)) >= 15  # the reader found the panels' queries

    # The fleet recording rules count each host's units right. "Healthy" is the unit's last probe: one probe that
    # times out on a loaded test machine drops it to 0 until the next probe passes, so the counts are waited for
    # (a miscount stays, and still fails here).
    expected = {
        "instance:vllm_guard_units_healthy:sum": {"gpu-a": 1, "gpu-b": 1},
        "instance:vllm_guard_units_remediating:sum": {"gpu-a": 0, "gpu-b": 0},
        "instance:vllm_guard_units_given_up:sum": {"gpu-a": 0, "gpu-b": 1},
        "instance:vllm_guard_units_below_base:sum": {"gpu-a": 1, "gpu-b": 1},
    }
    counted: dict[str, dict[str, float]] = {}

    def counts_right() -> bool:
        counted.update({record: prom.by_instance(record) for record in expected})
        return counted == expected

    try:
        wait("the fleet counts", counts_right, 45, interval=1)
    except AssertionError:
        pytest.fail(f"fleet counts {counted}, expected {expected}")

    # VllmGuardGaveUp fires for the broken unit of gpu-b, and nothing of the kind on gpu-a.
    def gave_up_alerts() -> list[dict[str, Any]]:
        return [a for a in prom.firing() if a["labels"]["alertname"] == "VllmGuardGaveUp"]

    (alert,) = wait("VllmGuardGaveUp to fire", gave_up_alerts, 30)
    assert alert["labels"]["instance"] == "gpu-b" and alert["labels"]["unit"] == f"{BROKEN}.service", alert
    assert alert["labels"]["severity"] == "critical"
    assert f"VLLM_GUARD_UNIT={BROKEN}.service" in alert["annotations"]["description"]
    firing = prom.firing()
    assert not [a for a in firing if a["labels"].get("instance") == "gpu-a" and "Gave" in a["labels"]["alertname"]]
    for quiet in ("VllmGuardDown", "VllmGuardMetricsGone", "VllmGuardMetricsStale", "VllmGuardProbeFailing"):
        assert not [a for a in firing if a["labels"]["alertname"] == quiet], (quiet, firing)

    # Its link opens a panel that shows this unit given up, once the URL's variables are substituted.
    url = urllib.parse.urlsplit(alert["annotations"]["dashboard_url"])
    params = dict(urllib.parse.parse_qsl(url.query))
    assert url.path.startswith(f"/d/{dash['uid']}/"), url
    assert params == {"var-host": "gpu-b", "var-unit": f"{BROKEN}.service", "viewPanel": params["viewPanel"]}
    panel = next(p for p in dash["panels"] if str(p["id"]) == params["viewPanel"])
    values = {"host": regex_value(params["var-host"]), "unit": regex_value(params["var-unit"])}
    shown = [s for t in panel["targets"] for s in prom.instant(substitute(t["expr"], values))]
    assert [(s["metric"].get("unit"), s["value"][1]) for s in shown] == [(f"{BROKEN}.service", "1")], shown

    # Every rule evaluates without error (a rule with an error still loads, and answers nothing).
    for group in prom.get("/api/v1/rules")["groups"]:
        for rule in group["rules"]:
            assert rule["health"] == "ok", rule
