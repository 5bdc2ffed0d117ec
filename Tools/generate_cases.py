#!/usr/bin/env python3
"""Renders the generated regression cases: video recordings with exact ground truth, made from one
real face photograph (by default the public-domain astronaut portrait that Tools/setup.sh puts
at Recordings/.cache/astronaut.png).

    python3 Tools/generate_cases.py                       # every recipe under Recordings/cases
    python3 Tools/generate_cases.py --only blink-then-turn --force
    python3 Tools/generate_cases.py --photo me.jpg --landmarks me.json --out /tmp/cases

Each case folder Recordings/cases/<name>/ holds recipe.json (what to render) and expected.json
(the outcome under the default policy). The output goes to <out>/<name>/: video.mp4, truth.json
(per-frame yaw, eyelid closure, camera angular speed, face centre), motion.csv when the recipe
asks for a gyroscope sidecar, prompts.jsonl when it has `prompts` (the unsigned prompt log of a
prompted session; truth.json then times every prompt and answer), and preview.jpg (first frame
beside the most eventful one).
A case is re-rendered only when its recipe, the photo or the generator changed (a stamp file).
See docs/generator.md.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from multiprocessing import Pool

import cv2

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from generator.render import render_case  # noqa: E402


def generator_digest():
    h = hashlib.sha256()
    for name in sorted(os.listdir(os.path.join(HERE, "generator"))):
        if name.endswith(".py"):
            with open(os.path.join(HERE, "generator", name), "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()[:16]


def load_landmarks(path):
    with open(path) as fh:
        text = fh.read().strip()
    obj = json.loads(text.splitlines()[0]) if text.startswith("{") and "\n" in text else json.loads(text)
    points = obj["landmarks"] if isinstance(obj, dict) else obj
    if len(points) != 136:
        raise SystemExit("%s: expected 68 landmarks (136 numbers), got %d" % (path, len(points)))
    return points


def landmarks_from_engine(photo, liveness):
    """The photo's 68 landmarks as the engine finds them (`liveness trace --landmarks`)."""
    out = subprocess.run([liveness, "trace", photo, "--landmarks", "--format", "jsonl"], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        rec = json.loads(line)
        if rec.get("landmarks"):
            return rec["landmarks"]
    raise SystemExit("the engine found no face on %s" % photo)


def work(args):
    name, recipe, photo_path, landmarks, out_dir = args
    start = time.time()
    photo = cv2.imread(photo_path, cv2.IMREAD_COLOR)
    render_case(recipe, photo, landmarks, out_dir)
    return name, time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=os.path.join(ROOT, "Recordings", "cases"), help="folder of case folders with recipe.json")
    ap.add_argument("--out", default=os.path.join(ROOT, "Recordings", ".cache", "cases"), help="output folder")
    ap.add_argument("--photo", default=os.path.join(ROOT, "Recordings", ".cache", "astronaut.png"))
    ap.add_argument("--landmarks", help="JSON with the photo's 68 landmarks ({\"landmarks\": [x0, y0, ...]} or a trace JSONL line)")
    ap.add_argument("--liveness", default=os.path.join(ROOT, ".build", "release", "liveness"),
                    help="the engine, used to find the landmarks when --landmarks is not given")
    ap.add_argument("--only", action="append", help="render only this case (repeatable)")
    ap.add_argument("--force", action="store_true", help="render even when up to date")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()

    if not os.path.exists(args.photo):
        raise SystemExit("no photo at %s: run Tools/setup.sh (it fetches the astronaut portrait)" % args.photo)
    if args.landmarks:
        landmarks = load_landmarks(args.landmarks)
    else:
        if not os.access(args.liveness, os.X_OK):
            raise SystemExit("no engine at %s to find the landmarks: build it (swift build -c release) or pass --landmarks" % args.liveness)
        landmarks = landmarks_from_engine(args.photo, args.liveness)
    with open(args.photo, "rb") as fh:
        photo_digest = hashlib.sha256(fh.read()).hexdigest()[:16]
    gen = generator_digest()

    todo, skipped = [], 0
    for name in sorted(os.listdir(args.cases)):
        recipe_path = os.path.join(args.cases, name, "recipe.json")
        if not os.path.exists(recipe_path) or (args.only and name not in args.only):
            continue
        with open(recipe_path) as fh:
            recipe = json.load(fh)
        out_dir = os.path.join(args.out, name)
        stamp = hashlib.sha256(json.dumps([recipe, photo_digest, gen, landmarks], sort_keys=True).encode()).hexdigest()[:16]
        stamp_path = os.path.join(out_dir, "stamp")
        if not args.force and os.path.exists(stamp_path) and open(stamp_path).read().strip() == stamp \
                and os.path.exists(os.path.join(out_dir, "video.mp4")):
            skipped += 1
            continue
        todo.append((name, recipe, args.photo, landmarks, out_dir, stamp))

    start = time.time()
    with Pool(max(1, min(args.jobs, len(todo) or 1))) as pool:
        for name, seconds in pool.imap_unordered(work, [t[:5] for t in todo]):
            stamp = next(t[5] for t in todo if t[0] == name)
            with open(os.path.join(args.out, name, "stamp"), "w") as fh:
                fh.write(stamp + "\n")
            print("generated %-32s %5.1f s" % (name, seconds), flush=True)
    print("generate_cases: %d rendered in %.1f s, %d up to date" % (len(todo), time.time() - start, skipped))


if __name__ == "__main__":
    main()
