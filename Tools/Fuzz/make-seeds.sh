#!/usr/bin/env bash
# Rebuilds the committed seed corpus of the fuzz targets (Tools/Fuzz/corpus/<target>/) from real
# inputs: traces written by `liveness trace` of the generated cases and of the real clips whose
# licence is stated (MIT, BSD/Apache: lp-*, clm-cap*, opencv-megamind), the generated cases'
# motion sidecars, the ARKit example of docs/trace-formats.md and policy examples. Each seed is
# cut to its first lines so the corpus stays small (libFuzzer mutates from there).
#
# Usage: Tools/Fuzz/make-seeds.sh   (from the package root; needs `swift build -c release`,
# Recordings/.cache from Tools/setup.sh, and ../shared/recordings or $LIVENESS_RECORDINGS).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
liveness=.build/release/liveness
cases=Recordings/.cache/cases
real=${LIVENESS_RECORDINGS:-$root/../shared/recordings}
corpus=Tools/Fuzz/corpus
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -x "$liveness" ] || { echo "make-seeds: build first: swift build -c release" >&2; exit 2; }
[ -d "$cases" ] || { echo "make-seeds: no $cases: run Tools/setup.sh" >&2; exit 2; }
# Fuzz findings (repro-*) stay: they are seeds too, and reproducer tests in the normal suite.
[ -d "$corpus" ] && find "$corpus" -type f ! -name 'repro-*' -delete
mkdir -p "$corpus"/{trace-csv,trace-jsonl,arkit-trace,motion,policy,stream}

# Engine traces: the first 24 records (a few with landmarks), LF and one CRLF copy.
inputs=()
for c in blink-then-turn camera-pan-20dps no-face two-faces vfr portrait-metadata; do inputs+=("$cases/$c/video.mp4:$c"); done
for clip in lp-d3-winks-lookaway.mp4 clm-cap12-webcam-turns.mp4 opencv-megamind-cgi.avi; do
    [ -f "$real/$clip" ] && inputs+=("$real/$clip:${clip%%.*}")
done
for entry in "${inputs[@]}"; do
    path=${entry%%:*}; name=${entry##*:}
    motion=()
    [ -f "$(dirname "$path")/motion.csv" ] && motion=(--motion "$(dirname "$path")/motion.csv")
    "$liveness" trace "$path" "${motion[@]}" --output "$work/$name.csv" 2>/dev/null
    "$liveness" trace "$path" "${motion[@]}" --format jsonl --output "$work/$name.jsonl" 2>/dev/null
    head -n 25 "$work/$name.csv" > "$corpus/trace-csv/$name.csv"
    head -n 10 "$work/$name.jsonl" > "$corpus/trace-jsonl/$name.jsonl"
done
"$liveness" trace "$cases/blink-then-turn/video.mp4" --landmarks --output "$work/lm.csv" 2>/dev/null
"$liveness" trace "$cases/blink-then-turn/video.mp4" --landmarks --format jsonl --output "$work/lm.jsonl" 2>/dev/null
head -n 4 "$work/lm.csv" > "$corpus/trace-csv/landmarks.csv"
head -n 3 "$work/lm.jsonl" > "$corpus/trace-jsonl/landmarks.jsonl"
sed 's/$/\r/' "$corpus/trace-csv/no-face.csv" > "$corpus/trace-csv/crlf.csv"
sed 's/$/\r/' "$corpus/trace-jsonl/blink-then-turn.jsonl" > "$corpus/trace-jsonl/crlf.jsonl"

# ARKit traces: the documented example, and a session that passes (blink, held turn).
cat > "$corpus/arkit-trace/doc-example.jsonl" <<'JSON'
{"format": "arkit-trace/1", "source": "iPhone 13, front camera", "imageWidth": 1080, "imageHeight": 1920}
{"t": 512.0331, "face": true, "eyeBlinkLeft": 0.04, "eyeBlinkRight": 0.05, "yaw": 0.3, "faceCenter": [0.50, 0.48], "rotationRate": [0.01, -0.02, 0.00]}
{"t": 512.0664, "face": false}
JSON
python3 - "$corpus/arkit-trace/passing.jsonl" <<'PY'
import sys
lines = ['{"format": "arkit-trace/1", "source": "seed"}']
for i in range(36):
    blink = 0.6 if i == 15 else 0.03
    yaw = -12 if i >= 20 else 0.5
    extra = ', "faceBox": [0.3, 0.25, 0.4, 0.3], "pitch": -3.5, "roll": 1.0' if i == 11 else ''
    rate = '' if i % 5 == 4 else ', "rotationRate": [0.01, -0.02, 0.0]'
    if i == 7:
        lines.append('{"t": %.6f, "face": false}' % (1000 + i / 30))
        continue
    lines.append('{"t": %.6f, "face": true, "eyeBlinkLeft": %s, "eyeBlinkRight": %s, "yaw": %s, "faceCenter": [0.5, 0.5]%s%s}'
                 % (1000 + i / 30, blink, blink, yaw, rate, extra))
open(sys.argv[1], 'w').write('\n'.join(lines) + '\n')
PY

# Motion sidecars: the generated cases' files, first 60 samples; one in JSON Lines, one CRLF.
for c in camera-pan-20dps camera-pan-40dps camera-roll-15dps head-turn-still-camera; do
    head -n 61 "$cases/$c/motion.csv" > "$corpus/motion/$c.csv"
done
awk -F, 'NR > 1 && NR <= 41 { printf "{\"t\": %s, \"rotationRate\": [%s, %s, %s]}\n", $1, $2, $3, $4 }' \
    "$cases/camera-roll-15dps/motion.csv" > "$corpus/motion/roll.jsonl"
awk -F, 'NR > 1 && NR <= 21 { printf "{\"t\": %s, \"x\": %s, \"y\": %s, \"z\": %s}\n", $1, $2, $3, $4 }' \
    "$cases/camera-pan-40dps/motion.csv" > "$corpus/motion/xyz.jsonl"
sed 's/$/\r/' "$corpus/motion/camera-pan-20dps.csv" > "$corpus/motion/crlf.csv"

# Policies: empty, every key at its default, partial ones, a weaker one.
echo '{}' > "$corpus/policy/empty.json"
"$liveness" replay "$corpus/arkit-trace/passing.jsonl" --json | python3 -c \
    'import json,sys; print(json.dumps(json.load(sys.stdin)["policy"], indent=2))' > "$corpus/policy/defaults.json"
echo '{"turnYawDegrees": 10, "turnHeldFrames": 3, "scanCapSeconds": 15}' > "$corpus/policy/stricter.json"
echo '{"blinkClosureThreshold": 0.1, "rotationLimitDegreesPerSecond": 25, "eyeMaxDipSeconds": 0}' > "$corpus/policy/weaker.json"
echo '{"guideCenterX": 0.5, "guideCenterY": 0.45, "guideRadius": 0.25, "yawMedianWindowSeconds": 0.3}' > "$corpus/policy/guide.json"
# Stream messages (first byte even: a text message; odd: a binary frame message): start, motion,
# cancel, and LVF1 frames of a face cut small from a generated case in JPEG, PNG, BGR, grey, NV12
# and I420.
ffmpeg -v error -y -ss 1 -i "$cases/blink-then-turn/video.mp4" -frames:v 1 -vf "crop=iw/2:ih/2:iw/4:ih/8,scale=48:48" "$work/face.png"
/usr/bin/python3 - "$corpus/stream" "$work/face.png" <<'PY'
import cv2, struct, sys
out, face = sys.argv[1], cv2.imread(sys.argv[2])
def text(name, s): open(f"{out}/{name}", "wb").write(b"\x00" + s.encode())
text("start.json", '{"type": "start", "width": 640, "height": 480, "fps": 30, "ack": true, "policy": {"turnYawDegrees": 9}}')
text("motion.json", '{"type": "motion", "samples": [{"t": 1000, "x": 0.01, "y": -0.2, "z": 0.0}, {"t": 34000, "x": 0.0, "y": 0.1, "z": 0.02}]}')
text("cancel.json", '{"type": "cancel"}')
def frame(name, fmt, w, h, body, rotation=0, stride=0):
    header = b"LVF1" + struct.pack("<IqBBHIII", 7, 33366, fmt, rotation, 0, w, h, stride)
    open(f"{out}/{name}", "wb").write(b"\x01" + header + body)
h, w = face.shape[:2]
frame("jpeg.frame", 0, 0, 0, cv2.imencode(".jpg", face, [cv2.IMWRITE_JPEG_QUALITY, 60])[1].tobytes())
frame("png.frame", 1, 0, 0, cv2.imencode(".png", face)[1].tobytes(), rotation=1)
frame("bgr.frame", 2, w, h, face.tobytes())
frame("gray.frame", 6, w, h, cv2.cvtColor(face, cv2.COLOR_BGR2GRAY).tobytes(), rotation=3)
i420 = cv2.cvtColor(face, cv2.COLOR_BGR2YUV_I420)
frame("i420.frame", 8, w, h, i420.tobytes())
y, u, v = i420[:h].tobytes(), i420[h:h + h // 4].tobytes(), i420[h + h // 4:].tobytes()
frame("nv12.frame", 7, w, h, y + bytes(b for pair in zip(u, v) for b in pair), stride=w)
PY
du -sh "$corpus"; find "$corpus" -type f | wc -l
