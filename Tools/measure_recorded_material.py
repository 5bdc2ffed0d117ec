#!/usr/bin/env python3
"""Measures the checks against recorded material (docs/presentation-attacks.md) on whole clips:
the recapture check and the continuity check, their margins on every live input and on every
attack, and the verdicts with the default policy.

For each input:

* the verdict and `presentationAttack.recapture` of `liveness analyze` with the default policy;
* over the WHOLE clip (a session that never ends: `liveness trace` with a policy that credits no
  action, never times out and decides nothing: recaptureMinEnclosure 255, the other checks off),
  the `border_enclosure` of every measured frame and, as the machine computes it, the lower
  quartile of each window of `recaptureWindowSeconds` holding at least 4 measurements: the
  highest such window value is the input's margin against the threshold (25 grey levels), and
  the share of windows at or above the threshold.

Inputs: every video in ../shared/recordings (live per labels.json: entries with "live": false
are attacks; the rest are real people, except the stills and the computer-animated trailer),
the generated cases' rendered videos (Recordings/.cache/cases/*/video.mp4; attack-* are attacks),
and variants of the live clips that must stay live (`--variants`): each padded into a larger
frame (black 4K, grey, pillarbox, letterbox) and started in the middle of an action.

    /usr/bin/python3 Tools/measure_recorded_material.py [--liveness .build/release/liveness] [--variants] [--extra VIDEO...]

Uses only the standard library, ffmpeg (for the variants) and the engine's command line.
"""
import argparse
import csv
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NEVER_ENDS = {
    "blinkClosureThreshold": 1.0, "turnYawDegrees": 90, "scanCapSeconds": 300,
    "parallaxCheck": 0, "frozenCheck": 0, "loopCheck": 0, "recaptureMinEnclosure": 255,
    "cutMinDifference": 255,
}
CUT_DIFFERENCE = 10.0
CUT_RATIO = 8.0
WINDOW = 1.0
MINIMUM = 4
THRESHOLD = 25.0
# Clips of shared/recordings that are not a live person in front of a camera (and not a replay).
NOT_A_PERSON = {"astronaut-still-5s.mp4", "clm-cap12-freeze-5s.mp4", "opencv-megamind-cgi.avi",
                "opencv-tree-noface-truncated.avi"}
# Generated cases that are no live session although not named attack-*.
NOT_LIVE_CASES = {"held-photo", "still-photo", "no-face"}
# (name, source clip, ffmpeg arguments): live clips padded and cut, which must stay live.
VARIANTS = [
    ("st-ref2-in-black-4k", "st-ref2-talking-turns.mp4", ["-vf", "pad=3840:2160:(ow-iw)/2:(oh-ih)/2"]),
    ("tl-real-pillarbox", "tl-phone-selfie-turns-real.mp4", ["-vf", "pad=1280:720:(ow-iw)/2:(oh-ih)/2"]),
    ("zc-real-letterbox", "zc-webcam-glasses-turns-real.webm", ["-vf", "pad=960:1706:0:(oh-ih)/2"]),
    ("lp-d12-grey-pad", "lp-d12-glasses-head-motion.mp4", ["-vf", "pad=iw*2:ih*1.5:(ow-iw)/2:(oh-ih)/2:color=gray"]),
    ("lp-d13-letterbox-landscape", "lp-d13-phone-selfie-glasses.mp4", ["-vf", "pad=ih*16/9:ih:(ow-iw)/2:0"]),
    ("st-ref2-from-mid-turn", "st-ref2-talking-turns.mp4", ["-ss", "1.6"]),
    ("lp-d12-from-mid-turn", "lp-d12-glasses-head-motion.mp4", ["-ss", "3.2"]),
]


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def analyse(liveness, path, out):
    res = run([liveness, "analyze", path, "--json", "--output", out, "--force"])
    lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def whole_trace(liveness, path, policy):
    """The rows of the whole clip's trace under `policy`, or None."""
    with tempfile.NamedTemporaryFile(suffix=".csv") as tmp:
        res = run([liveness, "trace", path, "--output", tmp.name, "--policy", policy, "--allow-weaker-policy"])
        if res.returncode != 0:
            return None
        with open(tmp.name) as fh:
            return list(csv.DictReader(fh))


def enclosures(rows):
    """(seconds, border_enclosure) of every measured frame."""
    return [(float(r["seconds"]), float(r["border_enclosure"])) for r in rows if r.get("border_enclosure")]


def jumps(rows):
    """(largest jump ratio of a frame changing >= CUT_DIFFERENCE, frames that are jumps), as ContinuityCheck judges."""
    t = [float(r["seconds"]) for r in rows]
    d = [float(r["frame_difference"]) if r.get("frame_difference") else None for r in rows]
    largest, cuts = 0.0, 0
    for k in range(3, len(rows) - 2):
        window = range(k - 3, k + 3)
        if any(d[i] is None for i in window) or any(t[i] - t[i - 1] > 0.25 + 1e-9 for i in range(k - 2, k + 3)):
            continue
        if d[k] < CUT_DIFFERENCE:
            continue
        ratio = d[k] / max(0.3, max(d[i] for i in window if i != k))
        largest = max(largest, ratio)
        cuts += ratio >= CUT_RATIO
    return largest, cuts


def windows(values):
    """The lower quartile of each window ending at a measurement, as RecaptureCheck computes it."""
    out = []
    for i, (t, _) in enumerate(values):
        w = sorted(v for (s, v) in values[: i + 1] if s > t - WINDOW)
        if len(w) >= MINIMUM:
            out.append(w[(len(w) - 1) // 4])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--liveness", default=os.path.join(ROOT, ".build", "release", "liveness"))
    ap.add_argument("--rendered", default=os.path.join(ROOT, "Recordings", ".cache", "cases"))
    ap.add_argument("--recordings", default=os.environ.get("LIVENESS_RECORDINGS") or os.path.join(os.path.dirname(ROOT), "shared", "recordings"))
    ap.add_argument("--variants", action="store_true", help="also the padded and cut variants of live clips")
    ap.add_argument("--extra", nargs="*", default=[], help="more videos, as attacks (a name containing 'live' counts as live)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="recapture-measure-")
    policy = os.path.join(work, "never-ends.json")
    with open(policy, "w") as fh:
        json.dump(NEVER_ENDS, fh)

    inputs = []  # (name, path, kind, live)
    labels = {}
    if os.path.isdir(args.recordings):
        with open(os.path.join(args.recordings, "labels.json")) as fh:
            labels = {r["file"]: r for r in json.load(fh)["recordings"]}
        for name in sorted(os.listdir(args.recordings)):
            if not name.endswith((".mp4", ".webm", ".avi")) or name in NOT_A_PERSON:
                continue
            live = labels.get(name, {}).get("live", True)
            inputs.append((name, os.path.join(args.recordings, name), "real", live))
        if args.variants:
            for name, source, ff in VARIANTS:
                out = os.path.join(work, name + ".mp4")
                pre, post = (ff, []) if ff[0] == "-ss" else ([], ff)
                res = run(["ffmpeg", "-v", "error", "-y"] + pre + ["-i", os.path.join(args.recordings, source)] + post
                          + ["-an", "-c:v", "libx264", "-crf", "20", out])
                if res.returncode == 0:
                    inputs.append((name, out, "variant", True))
    for path in args.extra:
        name = os.path.basename(path)
        inputs.append((name, path, "extra", "live" in name))
    if os.path.isdir(args.rendered):
        for name in sorted(os.listdir(args.rendered)):
            video = os.path.join(args.rendered, name, "video.mp4")
            if os.path.isfile(video):
                inputs.append((name, video, "generated", not name.startswith("attack-") and name not in NOT_LIVE_CASES))

    print("| input | kind | live | verdict | recapture | highest window (whole clip) | windows >= %g | continuity | largest jump ratio (whole clip) | jumps |" % THRESHOLD)
    print("| --- | --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: |")
    worst_live, best_attack, worst_jump = 0.0, None, 0.0
    false_rejects = accepted_attacks = lives = attacks = 0
    for name, path, kind, live in inputs:
        report = analyse(args.liveness, path, os.path.join(work, "out"))
        rows = whole_trace(args.liveness, path, policy) or []
        values = enclosures(rows)
        largest, cuts = jumps(rows)
        w = windows(values)
        top = max(w) if w else None
        share = (sum(1 for v in w if v >= THRESHOLD) / len(w)) if w else 0
        verdict = "—"
        rec = cont = "—"
        if report:
            v = report["verdict"]
            verdict = v["status"] + ("" if v["status"] == "passed" else ", " + str(v.get("reason")))
            rec = report["presentationAttack"]["recapture"]["status"]
            cont = report["presentationAttack"]["continuity"]["status"]
            if live:
                lives += 1
                false_rejects += rec == "recaptured" or cont == "cut"
            else:
                attacks += 1
                accepted_attacks += v["status"] == "passed"
        if top is not None:
            if live:
                worst_live = max(worst_live, top)
            elif rec == "recaptured" and (best_attack is None or top < best_attack):
                best_attack = top
        if live:
            worst_jump = max(worst_jump, largest)
        print("| %s | %s | %s | %s | %s | %s | %.2f | %s | %.1f | %d |" % (
            name, kind, "yes" if live else "no", verdict, rec, "—" if top is None else "%.1f" % top, share, cont, largest, cuts))
    print()
    print("live inputs: %d, called recaptured or cut: %d; attacks: %d, passed: %d" % (lives, false_rejects, attacks, accepted_attacks))
    print("largest jump ratio of a live input (whole clips): %.1f (threshold %g)" % (worst_jump, CUT_RATIO))
    print("highest live window (whole clips): %.1f; lowest highest window of a recaptured attack: %s (threshold %g)" % (
        worst_live, "—" if best_attack is None else "%.1f" % best_attack, THRESHOLD))


if __name__ == "__main__":
    main()
