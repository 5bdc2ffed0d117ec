#!/usr/bin/env bash
# Installs what the engine needs on Debian 12 and prepares the bundled sample recordings.
# Idempotent and fast when everything is already there. Run as root (or with sudo).
#
#   Tools/setup.sh          the engine, the service and the bundled sample (README command 1)
#   Tools/setup.sh --test   the same plus what the test suite and CI use (README command 2)
#   Tools/setup.sh --measure  also the blink peer's venv for Tools/measure_blinks.py (never in CI)
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
with_measure=0
for arg in "$@"; do
  case "$arg" in
    --test) with_tests=1 ;;
    --measure) with_measure=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "setup: unknown argument '$arg' (Tools/setup.sh [--test] [--measure])" >&2; exit 2 ;;
  esac
done

# What the build links and what `liveness analyze` / `liveness serve` use at run time.
# ../shared/tools/check-setup-covers-build.sh (run by .ci/run) checks that this list covers
# every header and library the build uses.
packages=(
  libopencv-dev        # OpenCV 4.6: image decoding, pose, optical flow, drawing, video writing
  libdlib-dev          # dlib 19.24: HOG face detector, 68-point shape predictor
  libdlib-data         # /usr/share/dlib/shape_predictor_68_face_landmarks.dat
  libblas-dev liblapack-dev  # dlib's BLAS/LAPACK, linked explicitly
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev  # the video reader: container, decoding, colour conversion
  libpng-dev libjpeg-dev  # image headers checked before decoding; PNG without libpng's warnings
  libsodium-dev        # Ed25519 signatures and SHA-256 of signed reports (report.sig)
  libwebsockets-dev    # libwebsockets 4.1: the service's HTTP, WebSocket and TLS (liveness serve)
  libsqlite3-dev       # SQLite 3: the durable session store of liveness serve --data-dir (docs/store.md)
  libpq-dev            # libpq: the PostgreSQL backend of the session store (liveness serve --store postgres://...)
  libcurl4             # libcurl, which Foundation's URLSession (FoundationNetworking) sends webhooks with (docs/webhooks.md)
  pkg-config
  ffmpeg               # builds the sample clip from the astronaut portrait
  python3 python3-pip unzip  # fetch the portrait from the scikit-image wheel
)
# What only the tests, the regression suite's generated cases and CI use.
test_packages=(
  python3-opencv python3-numpy  # Tools/generate_cases.py renders the generated regression cases
  openssl python3-cryptography  # independent Ed25519/PEM implementations the signing tests check against
  time                 # /usr/bin/time: peak memory per input in Tools/hostile_corpus.py
  chromium             # headless browser for the hosted web flow's real-browser tests
  slurm-wlm munge      # SlurmArrayTests: a throwaway single-node Slurm runs analyze --shard auto (Tools/slurm-test.sh)
  python3-yaml         # ScaleDocTests: the Kubernetes manifest in docs/scale.md parses as YAML
  postgresql           # PostgresSessionStoreTests: a throwaway server (initdb in a temporary folder, a unix socket)
  haproxy              # MultiInstanceTests: two liveness serve instances behind a real round-robin load balancer
)
wanted=("${packages[@]}")
((with_tests)) && wanted+=("${test_packages[@]}")
((with_measure)) && wanted+=(python3-venv python3-opencv)  # the peer's venv; contact sheets (docs/blinks.md)
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The public-domain astronaut portrait (NASA) from the scikit-image wheel, and the sample clip
# made from it. Nothing is committed: the files are made here, under Recordings/.cache.
cache=Recordings/.cache
mkdir -p "$cache"
if [ ! -s "$cache/astronaut.png" ]; then
  echo "setup: fetching the astronaut portrait from the scikit-image wheel"
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" "scikit-image==0.26.0" \
    || python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$tmp" scikit-image
  wheel=$(ls "$tmp"/scikit_image-*.whl | head -n 1)
  unzip -p "$wheel" skimage/data/astronaut.png > "$cache/astronaut.png.part"
  mv "$cache/astronaut.png.part" "$cache/astronaut.png"
  rm -rf "$tmp"
fi
if [ ! -s "$cache/astronaut-still.mp4" ]; then
  # A printed-photo attack in its simplest form: the portrait held still for 5 s at 25 fps.
  ffmpeg -v error -y -loop 1 -i "$cache/astronaut.png" -t 5 -r 25 -c:v libx264 -pix_fmt yuv420p \
    "$cache/astronaut-still.mp4.part.mp4"
  mv "$cache/astronaut-still.mp4.part.mp4" "$cache/astronaut-still.mp4"
fi
# The generated regression cases (Recordings/cases/*/recipe.json) rendered into
# Recordings/.cache/cases; the generator skips cases that are up to date. It needs the engine
# for the photo's landmarks; without a build yet, `liveness regress` renders them itself.
if ((with_tests)); then
  if [ -x .build/release/liveness ]; then
    /usr/bin/python3 Tools/generate_cases.py
  else
    echo "setup: the engine is not built yet; 'liveness regress' and the tests render the generated cases"
  fi
fi
# The blink measurement's independent peer (docs/blinks.md): MediaPipe Face Mesh from PyPI in
# its own venv, never in the engine and never installed by CI (only with --measure).
if ((with_measure)); then
  venv=${LIVENESS_PEER_VENV:-/work/.venvs/mediapipe}
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import mediapipe" 2>/dev/null; then
    echo "setup: making the blink peer's venv $venv (mediapipe==0.10.14)"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "mediapipe==0.10.14"
  fi
fi
echo "setup: ready"
