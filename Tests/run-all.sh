#!/usr/bin/env bash
# The README's test command: installs test dependencies, builds with warnings as errors, runs
# every Swift test, fuzzes the ingest decoder for a bounded time, then the end-to-end checks
# against the real binary, Chromium and Prometheus.
set -uo pipefail
cd "$(dirname "$0")/.."
Tests/install-dependencies.sh test || exit 1
log=$(mktemp -d)

echo "== build (warnings are errors)"
if ! swift build --build-tests -Xswiftc -warnings-as-errors >"$log/build.log" 2>&1; then
  grep -E "error|warning" "$log/build.log" | head -40; tail -20 "$log/build.log"; exit 1
fi

echo "== swift test"
# Serial: blocking live-server tests would otherwise starve the async ones of the 2-core
# cooperative thread pool; the whole suite still takes about 30 s.
swift test --skip-build --no-parallel >"$log/test.log" 2>&1
swift_status=$?
grep -E "^✘|^✔ Test run|^✘ Test run" "$log/test.log"
[ $swift_status -eq 0 ] || { echo "swift test failed (exit $swift_status)"; tail -40 "$log/test.log"; exit 1; }

echo "== fuzz the ingest decoder (short; LAM_FUZZ_SECONDS=600 or Tests/fuzz.sh 600 for a long run)"
Tests/fuzz.sh "${LAM_FUZZ_SECONDS:-30}" || exit 1

echo "== bench --quick (proves the benchmark runs; asserts no target: see README, Performance)"
Tests/install-dependencies.sh bench || exit 1
.build/debug/live-activity-monitor-bench --quick > "$log/bench.log" 2>&1 \
  || { echo "bench --quick failed"; tail -30 "$log/bench.log"; exit 1; }
grep -q "results written to" "$log/bench.log" || { echo "bench --quick wrote no results"; exit 1; }

echo "== end-to-end"
export LAM_BIN="$PWD/.build/debug/live-activity-monitor"
passed=0 failed=0
for t in Tests/EndToEnd/*_test.py; do
  echo "-- $t"
  if python3 "$t"; then passed=$((passed + 1)); else echo "FAILED: $t"; failed=$((failed + 1)); fi
done
echo "end-to-end scripts: $passed passed, $failed failed"
[ $passed -gt 0 ] && [ $failed -eq 0 ]
