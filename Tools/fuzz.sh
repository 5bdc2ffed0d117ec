#!/usr/bin/env bash
# Fuzzes every parser of outside input with libFuzzer (docs/hardening.md, "Fuzzing").
#
#   Tools/fuzz.sh                      CI: a bounded run, 12 s per target, about a minute in all
#   Tools/fuzz.sh --seconds 600        a longer run by hand, 10 min per target
#   Tools/fuzz.sh --seconds 300 fuzz-policy fuzz-motion    only some targets
#   Tools/fuzz.sh --reproduce fuzz-motion FILE             run one input (a crash file) again
#
# Targets (Tools/Fuzz/Sources): fuzz-trace-csv, fuzz-trace-jsonl, fuzz-arkit-trace, fuzz-motion,
# fuzz-policy, fuzz-stream (the stream protocol: text messages and LVF1 frames). Each starts from its committed seeds (Tools/Fuzz/corpus/<name>) and its
# dictionary (Tools/Fuzz/dict/<name>.dict); inputs that reach new code are kept in
# Tools/Fuzz/.build/fuzz-work/<target> (git-ignored) so that later runs start from them.
#
# A crash, a failed property (fatalError in FuzzChecks), an input taking over 10 s or a run over
# 2 GB of memory stops that target and leaves the input in Tools/Fuzz/.build/fuzz-crashes/;
# the script then exits 1. Every finding must become a reproducer test in the normal suite
# (Tests/LivenessKitTests/FuzzReproducerTests.swift). Prints the executions per target.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fuzz="$root/Tools/Fuzz"
export PATH=/opt/swift/usr/bin:$PATH
# libFuzzer and AddressSanitizer report a crash themselves; Swift's backtracer would only add noise.
export SWIFT_BACKTRACE=enable=no

seconds=${FUZZ_SECONDS:-12}
reproduce=""
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --seconds=*) seconds=${1#--seconds=}; shift ;;
        --reproduce) reproduce=$3; targets=("$2"); shift 3 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        fuzz-*) targets+=("$1"); shift ;;
        *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
all=(fuzz-trace-csv fuzz-trace-jsonl fuzz-arkit-trace fuzz-motion fuzz-policy fuzz-stream)
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

# The longest input each target is given, bytes (seeds are a few KB; the parsers' own limits are
# far larger and tested separately).
max_len() {
    case "$1" in
        fuzz-trace-csv|fuzz-trace-jsonl) echo 16384 ;;
        fuzz-arkit-trace) echo 8192 ;;
        fuzz-motion) echo 4096 ;;
        fuzz-policy) echo 2048 ;;
        fuzz-stream) echo 8192 ;;
    esac
}

# SwiftPM's --sanitize=fuzzer makes libFuzzer's main the entry point; -Xswiftc
# -sanitize=fuzzer,address then instruments every Swift module for coverage and with
# AddressSanitizer (two separate --sanitize options would keep only the last one for swiftc).
echo "fuzz: building the fuzz targets (release, -sanitize=fuzzer,address)..."
if ! swift build -c release --package-path "$fuzz" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
        > "$fuzz/.build-log.txt" 2>&1; then
    tail -30 "$fuzz/.build-log.txt" >&2
    echo "fuzz: the fuzz targets do not build" >&2
    exit 2
fi
rm -f "$fuzz/.build-log.txt"
bin=$(swift build -c release --package-path "$fuzz" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --show-bin-path)

if [ -n "$reproduce" ]; then
    exec "$bin/${targets[0]}" -timeout=10 -rss_limit_mb=2048 "$reproduce"
fi

status=0
printf '%-18s %12s %10s %8s  %s\n' target executions "exec/s" "new" result
for t in "${targets[@]}"; do
    name=${t#fuzz-}
    work="$fuzz/.build/fuzz-work/$t"
    crashes="$fuzz/.build/fuzz-crashes/$t"
    log="$fuzz/.build/fuzz-logs/$t.log"
    mkdir -p "$work" "$crashes" "$(dirname "$log")"
    "$bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
        -dict="$fuzz/dict/$name.dict" -print_final_stats=1 -artifact_prefix="$crashes/" \
        "$work" "$fuzz/corpus/$name" > "$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        result=ok
    else
        status=1
        artifact=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //')
        result="FAILED (exit $rc): ${artifact:-see $log}"
        grep -m 3 -E "Fatal error|ERROR: AddressSanitizer|ERROR: libFuzzer|SUMMARY" "$log" | sed 's/^/    /' >&2
    fi
    printf '%-18s %12s %10s %8s  %s\n' "$t" "${runs:-?}" "${speed:-?}" "${added:-?}" "$result"
done
[ $status -eq 0 ] && echo "fuzz: no crash in ${#targets[@]} targets, $seconds s each" \
    || echo "fuzz: FINDINGS above; reproduce with Tools/fuzz.sh --reproduce <target> <file>, then add a test" >&2
exit $status
