#!/usr/bin/env bash
# The README's test command: installs test dependencies, builds with warnings as errors, runs
# every Swift test, then the end-to-end checks against real Chromium and Prometheus.
set -euo pipefail
cd "$(dirname "$0")/.."
Tests/install-dependencies.sh test

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors 2>&1 | grep -v '^\[' || true
swift build --build-tests -Xswiftc -warnings-as-errors >/dev/null

echo "== swift test"
swift test --skip-build 2>&1 | tee /tmp/lam-swift-test.log | grep -E "^(✘|􀢄|.*(passed|failed).*after)" || true
grep -q "Test run with .* passed" /tmp/lam-swift-test.log || { echo "swift test failed"; tail -50 /tmp/lam-swift-test.log; exit 1; }

echo "== bench --quick (proves the benchmark runs; asserts no target: see README, Performance)"
Tests/install-dependencies.sh bench
.build/debug/live-activity-monitor-bench --quick > /tmp/lam-bench-quick.log 2>&1 \
  || { echo "bench --quick failed"; tail -30 /tmp/lam-bench-quick.log; exit 1; }
grep -q "results written to" /tmp/lam-bench-quick.log || { echo "bench --quick wrote no results"; exit 1; }

echo "== end-to-end"
export LAM_BIN="$PWD/.build/debug/live-activity-monitor"
status=0
for t in Tests/EndToEnd/*_test.py; do
  echo "-- $t"
  python3 "$t" || status=1
done
exit $status
