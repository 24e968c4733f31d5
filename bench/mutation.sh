#!/usr/bin/env bash
# Mutation testing of the remediation policy and the remedy executor with mutmut (a benchmark, not a test:
# no CI command runs it).
#
#   bench/mutation.sh                  # the working tree as it is now (committed or not)
#   MUTATION_REF=HEAD bench/mutation.sh   # a commit instead
#
# It copies the project into a throwaway folder and runs mutmut there, so the checkout is never touched
# (mutmut writes its mutants/ folder next to the sources it mutates). The tool lives in its own virtual
# environment outside the checkout, with mutmut pinned. On 2 cores a run takes about 10 to 15 minutes.
#
# Settings (environment):
#   MUTATION_VENV      the virtual environment (default ~/.cache/vllm-guard/mutmut-$MUTMUT_VERSION)
#   MUTATION_WORKDIR   where the copy goes (default a new folder under /tmp); reusing one resumes a run
#   MUTATION_REF       a commit to measure instead of the working tree
#   MUTATION_CHILDREN  parallel mutant runs (default: the number of cores)
#   MUTATION_TESTS     the test files to run (default: the unit test files that reach the two modules)
#   MUTATION_DEBUG=true  mutmut's debug output (each pytest command and its exit code) in mutmut-run.log
#   MUTATION_KEEP=1    keep the copy afterwards (it is removed otherwise, after the survivors are saved)
#
# Output: per file and overall, mutants killed / survived / timeout / no tests / total and the share killed,
# and the diff of every survivor in $MUTATION_WORKDIR/survivors.diff (printed path). Mutants listed in
# bench/mutation-equivalent.txt (one name a line, then `#` and why no behaviour can change) are counted
# apart as equivalent.
set -euo pipefail

MUTMUT_VERSION=3.8.1
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
VENV="${MUTATION_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/vllm-guard/mutmut-$MUTMUT_VERSION}"
WORK="${MUTATION_WORKDIR:-$(mktemp -d /tmp/vllm-guard-mutation.XXXXXX)}"
CHILDREN="${MUTATION_CHILDREN:-$(nproc)}"
TARGETS=(src/vllm_guard/core/policy.py src/vllm_guard/app/remedy_executor.py)

case "$WORK" in
  "$REPO" | "$REPO"/*)
    echo "MUTATION_WORKDIR must be outside the checkout ($REPO)" >&2
    exit 2
    ;;
esac

# 1. the tool, pinned, with the project's runtime and test dependencies (not the project itself: the tests
#    must import the mutated copy, which mutmut puts first on sys.path)
if [ ! -x "$VENV/bin/mutmut" ] || [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mutmut"))' 2>/dev/null)" != "$MUTMUT_VERSION" ]; then
  echo "== installing mutmut $MUTMUT_VERSION into $VENV"
  python3 -m venv "$VENV"
  mapfile -t deps < <(python3 - "$REPO/pyproject.toml" <<'EOF'
import sys, tomllib
p = tomllib.load(open(sys.argv[1], "rb"))["project"]
skip = ("ruff", "mypy", "types-", "pytest-cov")
for d in p["dependencies"] + p["optional-dependencies"]["dev"]:
    if not d.startswith(skip):
        print(d)
EOF
  )
  "$VENV/bin/pip" install -q "mutmut==$MUTMUT_VERSION" "${deps[@]}" 2> >(grep -v '^WARNING: Location' >&2)
fi

# 2. the copy
if [ ! -f "$WORK/pyproject.toml" ]; then
  echo "== copying the project into $WORK"
  mkdir -p "$WORK"
  if [ -n "${MUTATION_REF:-}" ]; then
    git -C "$REPO" archive "$MUTATION_REF" | tar -x -C "$WORK"
  else
    # tracked and untracked files that git does not ignore, as they are on disk now
    (cd "$REPO" && git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) |
      tar -x -C "$WORK"
  fi
fi
if grep -q '^\[tool\.mutmut\]' "$WORK/pyproject.toml"; then
  echo "note: pyproject.toml has a [tool.mutmut] table: mutmut reads it instead of the setup.cfg written here" >&2
fi

# 3. the settings: in the copy's setup.cfg, so the repository needs none. The tests: the unit test files that
#    reach the two modules (in the whole unit tier, only these do; it takes minutes longer to collect stats
#    on); MUTATION_TESTS (paths, space-separated) overrides the choice.
cd "$WORK"
if [ -n "${MUTATION_TESTS:-}" ]; then
  read -r -a TESTS <<<"$MUTATION_TESTS"
else
  TESTS=()
  for f in tests/unit/test_policy*.py tests/unit/test_remedy_executor*.py tests/unit/test_daemon_*.py \
    tests/unit/test_probe_supervisor.py; do
    if [ -f "$f" ]; then TESTS+=("$f"); fi
  done
fi
cat >"$WORK/setup.cfg" <<EOF
[mutmut]
debug = ${MUTATION_DEBUG:-false}
source_paths = src
only_mutate =
    ${TARGETS[0]}
    ${TARGETS[1]}
also_copy =
    templates
    units
    packaging
    examples
    scripts
    README.md
# the unit tier (no OS services); mutmut runs, for each mutant, only the tests that reach its function
pytest_add_cli_args =
    -m
    unit
    -p
    no:cacheprovider
pytest_add_cli_args_test_selection =
$(printf '    %s\n' "${TESTS[@]}")
EOF

# 4. the run
echo "== mutmut run (max children $CHILDREN) in $WORK"
start=$(date +%s)
# PYTHONPATH: tests that start `python -m vllm_guard` in a subprocess import the mutated copy too. The folder
# must exist before mutmut starts: Python caches a missing PYTHONPATH entry as "nothing to import here".
mkdir -p "$WORK/mutants/src"
# mutmut collects its stats by running the tests in its own process: a test that leaves a thread running (a
# probe still polling) would keep that process from ever exiting. Its results are on disk by then, so it is
# ended with os._exit once the run returns.
RUN_MUTMUT='
import os, sys, traceback
from mutmut.__main__ import cli
rc = 0
try:
    cli.main(args=sys.argv[1:], prog_name="mutmut", standalone_mode=False)
except SystemExit as e:
    rc = e.code if isinstance(e.code, int) else int(e.code is not None)
except BaseException:
    traceback.print_exc()
    rc = 1
sys.stdout.flush()
sys.stderr.flush()
os._exit(rc)
'
(cd "$WORK" && PATH="$VENV/bin:$PATH" PYTHONPATH="$WORK/mutants/src" "$VENV/bin/python" -c "$RUN_MUTMUT" \
  run --max-children "$CHILDREN" >"$WORK/mutmut-run.log" 2>&1) || {
  echo "mutmut run failed: see $WORK/mutmut-run.log" >&2
  tail -30 "$WORK/mutmut-run.log" >&2
  exit 1
}
echo "== done in $(($(date +%s) - start)) s"

# 5. the figures, and the survivors' diffs
(cd "$WORK" && "$VENV/bin/python" "$HERE/mutation_summary.py" --equivalent "$HERE/mutation-equivalent.txt" \
  --survivors "$WORK/survivors.diff" --mutmut "$VENV/bin/mutmut" "${TARGETS[@]}")

if [ "${MUTATION_KEEP:-0}" != 1 ] && [ -z "${MUTATION_WORKDIR:-}" ]; then
  cp "$WORK/survivors.diff" "${TMPDIR:-/tmp}/vllm-guard-mutation-survivors.diff"
  cd /
  rm -rf "$WORK"
  echo "survivors' diffs: ${TMPDIR:-/tmp}/vllm-guard-mutation-survivors.diff"
fi
