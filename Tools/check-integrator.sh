#!/usr/bin/env bash
# Uses the engine as an outside package would: a temporary bare clone of this checkout's HEAD,
# tagged with the engine's version, is the dependency of Tools/Integrator (`.package(url:
# "file://…", from: VERSION)`). SwiftPM then applies what it applies to any package depended on
# by version: no unsafe build flags, and only what each product declares is linked. The script
# builds the outside package, pushes a recording's frames (JPEGs made by ffmpeg) through
# StreamSession, runs the pure core alone and an embedded service, and checks what they print.
#
#     Tools/check-integrator.sh [RECORDING]     (default: the bundled astronaut-still sample)
#
# Only committed work is cloned: commit first. Needs what Tools/setup.sh installs (ffmpeg too).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
recording=${1:-$root/Recordings/.cache/astronaut-still.mp4}
[ -f "$recording" ] || { echo "check-integrator: $recording is missing (Tools/setup.sh makes the sample)" >&2; exit 1; }
version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' "$root/Sources/LivenessKit/EngineVersion.swift")
[ -n "$version" ] || { echo "check-integrator: no version in Sources/LivenessKit/EngineVersion.swift" >&2; exit 1; }
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
    echo "check-integrator: note: uncommitted changes are not in the clone (HEAD $(git -C "$root" rev-parse --short HEAD) is)" >&2
fi

work=$(mktemp -d /tmp/liveness-integrator.XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q --bare "$root" "$work/liveness.git"
git -C "$work/liveness.git" tag -f "$version" HEAD >/dev/null
mkdir -p "$work/integrator" "$work/frames"
cp -R "$root/Tools/Integrator/Sources" "$work/integrator/"
sed -e "s|@ENGINE_URL@|file://$work/liveness.git|" -e "s|@ENGINE_VERSION@|$version|" \
    "$root/Tools/Integrator/Package.swift.in" >"$work/integrator/Package.swift"

# A debug build as an integrator's tests would make it; -Xcxx -O2 optimises the engine's C++
# shim (dlib's templates), as the README says for debug builds.
echo "check-integrator: building an outside package on liveness $version (file://$work/liveness.git)"
(cd "$work/integrator" && swift build -Xcxx -O2 2>&1 | tail -n 3)

# The frames as a camera service would send them: JPEGs, at the recording's frame rate.
ffmpeg -nostdin -loglevel error -i "$recording" -q:v 2 "$work/frames/%05d.jpg"
rate=$(ffprobe -v error -select_streams v:0 -show_entries stream=avg_frame_rate -of csv=p=0 "$recording")
fps=$(awk -F/ '{ printf "%.6f", ($2 ? $1 / $2 : $1) }' <<<"$rate")
made=$(find "$work/frames" -name '*.jpg' | wc -l)

stream=$("$work/integrator/.build/debug/stream-recording" "$work/frames" "$fps")
core=$("$work/integrator/.build/debug/core-only")
service=$("$work/integrator/.build/debug/service-embedded")
echo "check-integrator: stream-recording: $stream"
echo "check-integrator: core-only: $core"
echo "check-integrator: service-embedded: $service"
STREAM="$stream" CORE="$core" SERVICE="$service" MADE="$made" /usr/bin/python3 - <<'PY'
import json, os, sys
stream, core, made = json.loads(os.environ["STREAM"]), json.loads(os.environ["CORE"]), int(os.environ["MADE"])
service = json.loads(os.environ["SERVICE"])
problems = []
if stream["frames"] != made or stream["accepted"] != made:
    problems.append(f"ffmpeg made {made} frames; the package read {stream['frames']} and the session accepted {stream['accepted']}")
if stream["status"] == "passed":
    problems.append("a still picture (the generator's truth: not a live person) passed")
if "NOT optimised" in stream["shim"]:
    problems.append("the shim was built without optimisation: " + stream["shim"])
# The spec: settle 0.3 s, then 2.5 s of framing without a face end in the fallback autoshot, and the
# scan's 20 s cap counts from it; no face on any frame makes the reason noFace.
cap = 0.3 + 2.5 + 20.0
if core["status"] != "failed" or core["reason"] != "noFace" or not cap <= core["seconds"] <= cap + 1 / 30 + 1e-9:
    problems.append(f"the core alone, fed no face, should fail with noFace at the cap, {cap} s (the spec): {core}")
if service["status"] != 200 or not service["keys"]:
    problems.append(f"the embedded service did not answer GET /v1/capabilities with a JSON object: {service}")
for p in problems:
    print("check-integrator: FAIL: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
echo "check-integrator: ok"
