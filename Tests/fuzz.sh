#!/usr/bin/env bash
# Fuzzes the ingest decoder and validator (Sources/ingest-fuzzer) with libFuzzer and
# AddressSanitizer, starting from Tests/FuzzCorpus, for a bounded time.
#   Tests/fuzz.sh [seconds]     default 30; Tests/run-all.sh runs a short pass, run longer by hand
# Built in its own scratch path (.build/fuzz), so the normal build is untouched. Inputs that
# reach new code are kept in .build/fuzz/corpus for the next run; a crash is written to
# .build/fuzz/artifacts/ and fails the script: add it to Tests/FuzzCorpus and as a Swift
# regression test (FuzzRegressionTests).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
scratch=.build/fuzz
mkdir -p "$scratch/corpus" "$scratch/artifacts"

echo "== build ingest-fuzzer (libFuzzer + AddressSanitizer) in $scratch"
# -D FUZZING selects libFuzzer's driver over the replay main; Extern lets Swift declare it.
build=(swift build -c debug --scratch-path "$scratch" --product ingest-fuzzer
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
       -Xswiftc -enable-experimental-feature -Xswiftc Extern)
if ! "${build[@]}" > "$scratch/build.log" 2>&1; then
  grep -v "Cannot export local symbol" "$scratch/build.log" | tail -30
  exit 1
fi

echo "== fuzz for ${seconds} s"
log="$scratch/fuzz.log"
status=0
# The Swift runtime's own crash backtracer would take over libFuzzer's crash handling (and can
# hang under AddressSanitizer): leave crashes to libFuzzer. Swift's runtime keeps metadata
# caches for the process's lifetime, which LeakSanitizer would report as leaks.
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
  "$scratch/debug/ingest-fuzzer" "$scratch/corpus" Tests/FuzzCorpus \
  -dict=Tests/fuzz.dict -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -artifact_prefix="$scratch/artifacts/" -print_final_stats=1 > "$log" 2>&1 || status=$?

executions=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || true)
coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
corpus=$(ls "$scratch/corpus" | wc -l)
if [ "$status" -ne 0 ]; then
  grep -E "^(==|SUMMARY|artifact_prefix|Base64|    #[0-9]+ .*Sources/)" "$log" | head -40 || tail -40 "$log"
  echo "fuzz: FAILED after ${executions:-?} executions: a crash or an invariant violation (log: $log)"
  exit 1
fi
echo "fuzz: ${executions:-?} executions in ${seconds} s, no crash (coverage ${coverage:-?} edges, ${corpus} inputs in $scratch/corpus)"
