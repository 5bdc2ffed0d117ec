#!/usr/bin/env bash
# How much the regression suite's outcomes depend on the exact pixel values: runs the suite on
# copies of the generated cases (and, with --real, of the real clips) whose luma is one level
# brighter and one level darker, re-encoded losslessly, beside the cases as rendered. A case
# whose status changes under a one-level change of brightness tests a coin flip, not the
# engine (docs/regression.md, "Sensitivity to the exact pixels").
#
#   Tools/brightness_sensitivity.sh                 generated cases (renders them if missing)
#   Tools/brightness_sensitivity.sh --real          also the labelled real clips (../shared/recordings)
#   Tools/brightness_sensitivity.sh --cases DIR     another folder of case folders
#
# Needs ffmpeg (libx264) and a release build (swift build -c release). Prints, for each case,
# its status on the render, one level brighter and one level darker, then the real clips'
# blink precision and recall for each copy. Work files go to a temporary folder, removed after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
liveness="$root/.build/release/liveness"
cases="$root/Recordings/cases"
real=""
while [ $# -gt 0 ]; do
    case "$1" in
        --real) real=${LIVENESS_RECORDINGS:-$root/../shared/recordings}; shift ;;
        --cases) cases=$(cd "$2" && pwd); shift 2 ;;
        *) echo "usage: $0 [--real] [--cases DIR]" >&2; exit 2 ;;
    esac
done
[ -x "$liveness" ] || { echo "no release build at $liveness: run swift build -c release" >&2; exit 2; }
command -v ffmpeg > /dev/null || { echo "ffmpeg is not installed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The cases as rendered (renders what is missing or stale).
rendered="$(dirname "$cases")/.cache/cases"
(cd "$root" && "$liveness" regress "$cases" --no-real > "$work/as-rendered.txt" 2>&1) || true

# shift DIR EXPR: lossless copies of every video under DIR with the luma changed by EXPR.
shift_videos() {
    local dir=$1 expr=$2
    find "$dir" -type f \( -name '*.mp4' -o -name '*.avi' -o -name '*.mkv' -o -name '*.mov' \) -print0 |
        while IFS= read -r -d '' video; do
            local tmp="${video%.*}.shift.mkv"
            ffmpeg -v error -y -i "$video" -vf "lutyuv=y=$expr" -fps_mode passthrough -c:v libx264 -qp 0 \
                -pix_fmt yuv420p -an "$tmp" < /dev/null
            # Same name, same container: the suite finds it where it expects it.
            ffmpeg -v error -y -i "$tmp" -c copy "$video" < /dev/null
            rm -f "$tmp"
        done
}

for side in brighter darker; do
    expr='clip(val+1\,0\,255)'
    [ $side = darker ] && expr='clip(val-1\,0\,255)'
    mkdir -p "$work/$side/.cache"
    cp -r "$cases" "$work/$side/cases"
    cp -r "$rendered" "$work/$side/.cache/cases"
    shift_videos "$work/$side/.cache/cases" "$expr"
    (cd "$root" && "$liveness" regress "$work/$side/cases" --no-generate --no-real > "$work/$side.txt" 2>&1) || true
    if [ -n "$real" ]; then
        mkdir -p "$work/$side-real"
        cp -r "$real/." "$work/$side-real/"
        shift_videos "$work/$side-real" "$expr"
        (cd "$root" && LIVENESS_RECORDINGS="$work/$side-real" "$liveness" regress --no-generate "$cases" \
            > "$work/$side-real.txt" 2>&1) || true
    fi
done
if [ -n "$real" ]; then
    (cd "$root" && LIVENESS_RECORDINGS="$real" "$liveness" regress --no-generate "$cases" > "$work/as-rendered-real.txt" 2>&1) || true
fi

status() {  # status FILE: "case source status" per generated run
    awk '/^GENERATED CASES/{on=1; next} /^[0-9]+ of [0-9]+ generated runs/{on=0} on && $2 ~ /^(video|none|sensor)$/ {
        s = "?"; for (i = 3; i <= NF; i++) if ($i ~ /(ok|FAIL|KNOWN)$/) { s = $i; sub(/.*(framed|fallback|B-t|-bT|BT|-b-t|-b)/, "", s) }
        print $1, $2, s }' "$1"
}
printf '%-32s %-7s %-10s %-10s %-10s\n' case source rendered brighter darker
paste -d' ' <(status "$work/as-rendered.txt") <(status "$work/brighter.txt" | cut -d' ' -f3) \
    <(status "$work/darker.txt" | cut -d' ' -f3) |
    awk '{ flag = ($3 != $4 || $3 != $5) ? "   <- changes" : ""; printf "%-32s %-7s %-10s %-10s %-10s%s\n", $1, $2, $3, $4, $5, flag }'
if [ -n "$real" ]; then
    for copy in as-rendered brighter darker; do
        echo "real clips, $copy: $(grep -m1 '^blink precision' "$work/$copy-real.txt" || echo 'no result')"
    done
fi
