#!/usr/bin/env python3
"""Measures the engine's blink events against hand labels and an independent peer (issue 26,
docs/blinks.md), on whole clips.

For each video of ../shared/recordings in which the peer finds a face:

* the ENGINE: `liveness trace` under a policy with which the session never ends (no turn is
  credited, no check decides: the same idea as Tools/measure_recorded_material.py), so that the
  closures cover the whole clip; an event is one of the engine's blink episodes (the trace's
  `eyes_closed` column: from a frame whose mean closure reaches 0.22 and whose eye edges do not
  show open eyes, until the eyes look open again), counted when one of its frames is credited;
  traces without that column (older engines): a maximal run of frames whose mean of
  `eye_closure_left` and `eye_closure_right` is >= 0.22;
* the PEER: MediaPipe Face Mesh (PyPI mediapipe==0.10.14) run by Tools/blinks/peer.py in its own
  venv, each eye's aspect ratio against a running open-eye baseline, an event a run of frames on
  which both eyes dip well below it and that recovers (Tools/blinks/events.py has the exact rule);
* the LABELS: Recordings/blink-labels.json, blinks checked by eye on contact sheets (--sheets).

Events match a labelled blink when their intervals overlap or lie within --tolerance seconds
(0.2), one to one, closest first. Labels marked ambiguous and winks count neither way.

    /usr/bin/python3 Tools/measure_blinks.py [--liveness PATH] [--clips NAME...] [--json]
        [--fps-variants [--rates 30,15,10] [--phases N]] [--picture-variants] [--sheets DIR]
        [--peer-python /work/.venvs/mediapipe/bin/python]

Tools/setup.sh --measure makes the peer's venv. Results are cached under
Recordings/.cache/blinks (keyed by the input's size and time and the engine binary's).
Standard library only, except --sheets (OpenCV: Debian's python3-opencv); ffmpeg for
--fps-variants, whose JPEG variant streams every frame at quality 80 with `liveness stream
--format jpeg --jpeg-quality 80` to a `liveness serve --trace-dir` on loopback, and again the
15 fps re-encoding (the hosted web page sends JPEG at 15 fps at most) when 15 is one of --rates.
--picture-variants re-encodes each clip at its own rate dim, noisy, dark (both) and blurred
(PICTURE_VARIANTS: ffmpeg filters, CRF 23) and scores each the same way.
"""
import argparse
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tools"))
from blinks import events as ev  # noqa: E402

# The blink threshold stays the spec's 0.22 (a blink alone never ends a session: the turn at 90°
# is never reached), so that the engine's own blink episodes (the `eyes_closed` column) are the
# ones a session would see.
NEVER_ENDS = {
    "turnYawDegrees": 90, "scanCapSeconds": 300,
    "parallaxCheck": 0, "frozenCheck": 0, "loopCheck": 0, "recaptureMinEnclosure": 255,
    "cutMinDifference": 255,
}
VIDEO_EXTENSIONS = (".mp4", ".webm", ".avi", ".mov", ".mkv")
VARIANT_FPS = (30, 15, 10)
# --picture-variants: each clip at its own rate through an ffmpeg filter, H.264 CRF 23 (a
# webcam's stream): a dim room, a noisy sensor, both, an out-of-focus lens (docs/blinks.md,
# "Dim, noisy and blurred pictures"). ffmpeg's noise filter uses a fixed seed by default.
PICTURE_VARIANTS = (
    ("dim", "eq=brightness=-0.18:contrast=0.6"),
    ("noisy", "noise=alls=12:allf=t"),
    ("dark", "eq=brightness=-0.18:contrast=0.6,noise=alls=12:allf=t"),
    ("blurred", "gblur=sigma=1.5"),
)
DEFAULT_PEER_PYTHON = os.environ.get("LIVENESS_PEER_PYTHON", "/work/.venvs/mediapipe/bin/python")


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def stamp(path):
    st = os.stat(path)
    return "%d-%d" % (st.st_size, int(st.st_mtime))


def key(*parts):
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def engine_trace(liveness, video, cache, policy):
    """Rows of the whole clip's trace (cached)."""
    path = os.path.join(cache, "engine-%s-%s.csv" % (os.path.basename(video), key(stamp(video), stamp(liveness), json.dumps(NEVER_ENDS))))
    if not os.path.isfile(path):
        res = run([liveness, "trace", video, "--output", path + ".part", "--policy", policy, "--allow-weaker-policy"])
        if res.returncode != 0:
            sys.stderr.write("measure_blinks: trace failed on %s: %s\n" % (video, res.stderr.strip()[-300:]))
            return None
        os.replace(path + ".part", path)
    with open(path) as fh:
        return list(csv.DictReader(fh))


def peer_frames(peer_python, video, cache):
    peer = os.path.join(ROOT, "Tools", "blinks", "peer.py")
    path = os.path.join(cache, "peer-%s-%s.json" % (os.path.basename(video), key(stamp(video), stamp(peer))))
    if not os.path.isfile(path):
        if not os.access(peer_python, os.X_OK):
            sys.exit("measure_blinks: no peer python at %s (Tools/setup.sh --measure, or --peer-python)" % peer_python)
        res = run([peer_python, peer, video, path])
        if res.returncode != 0 or not os.path.isfile(path):
            sys.stderr.write("measure_blinks: peer failed on %s: %s\n" % (video, res.stderr.strip()[-300:]))
            return None
    with open(path) as fh:
        return json.load(fh)["frames"]


def load_labels(path):
    if not os.path.isfile(path):
        return {}, {}
    with open(path) as fh:
        data = json.load(fh)
    return {c["file"]: c for c in data.get("clips", [])}, data


def split_labels(entry):
    """(counted blinks, excluded intervals, non-blink candidates) of one clip's label entry."""
    blinks, excluded = [], []
    for b in (entry or {}).get("blinks", []):
        (excluded if b.get("ambiguous") else blinks).append(b)
    excluded += (entry or {}).get("winks", [])
    return blinks, excluded, (entry or {}).get("notBlinks", [])


def cause_of(event, entry, tolerance):
    """The checked cause of a false event, or the note of a missed blink, from the label file."""
    for nb in (entry or {}).get("notBlinks", []):
        if ev.gap(event, nb) <= tolerance + 1e-9:
            return nb.get("cause", "")
    return event.get("note", "") or event.get("cause", "")


def fmt(x):
    return "—" if x is None else "%.2f" % x


def measure_clip(args, name, video, policy, labels):
    frames = peer_frames(args.peer_python, video, args.cache)
    rows = engine_trace(args.liveness, video, args.cache, policy)
    if frames is None or rows is None:
        return None
    if not any(f[2] is not None for f in frames):
        return {"file": name, "face": False}
    peer, unrecovered, peer_mean = ev.peer_events(frames)
    engine_all = ev.engine_events(rows)
    edge_rejected = [e for e in engine_all if e["edgeRejected"]]
    engine_all = [e for e in engine_all if not e["edgeRejected"]]
    engine = [e for e in engine_all if e["credited"]]
    entry = labels.get(name)
    if entry is not None and not entry.get("checked", True):
        entry = None  # listed but not checked by eye yet: not scored
    blinks, excluded, _ = split_labels(entry)
    seconds = float(rows[-1]["seconds"]) + (float(rows[-1]["seconds"]) - float(rows[-2]["seconds"]) if len(rows) > 1 else 0)
    lo, hi = (entry or {}).get("checkedSeconds", [0.0, seconds])
    inside = lambda e: e["end"] >= lo and e["start"] <= hi  # noqa: E731
    scored_engine = [e for e in engine if inside(e)]
    scored_peer = [e for e in peer if inside(e)]
    es = ev.score(scored_engine, blinks, excluded, args.tolerance)
    ps = ev.score(scored_peer, blinks, excluded, args.tolerance)
    seconds = min(seconds, hi) - lo
    for lst in (es["false"], ps["false"]):
        for e in lst:
            e["cause"] = cause_of(e, entry, args.tolerance)
            if not e["cause"] and any(ev.gap(e, b) <= args.tolerance + 1e-9 for b in blinks + excluded):
                e["cause"] = "a second event on one labelled closure (the signal fell back under the threshold inside it)"
    for lst in (es["missed"], ps["missed"]):
        for b in lst:
            b["cause"] = b.get("note", "")
    return {
        "file": name, "face": True, "labelled": entry is not None, "frames": len(rows), "seconds": round(seconds, 3),
        "checkedSeconds": [lo, hi] if entry is not None and "checkedSeconds" in entry else None,
        "framesMismatch": len(rows) != len(frames),
        "labelledBlinks": len(blinks), "excludedLabels": len(excluded),
        "engine": {"events": len(engine), "uncreditedEvents": len(engine_all) - len(engine),
                   "edgeRejectedEvents": len(edge_rejected),
                   "tp": es["tp"], "fp": es["fp"], "fn": es["fn"], "onExcluded": len(es["excluded"]),
                   "precision": ev.ratio(es["tp"], es["tp"] + es["fp"]), "recall": ev.ratio(es["tp"], es["tp"] + es["fn"]),
                   "falsePerMinute": es["fp"] / seconds * 60 if seconds else None,
                   "false": es["false"], "missed": es["missed"], "list": engine},
        "peer": {"events": len(peer), "unrecovered": len(unrecovered),
                 "tp": ps["tp"], "fp": ps["fp"], "fn": ps["fn"], "onExcluded": len(ps["excluded"]),
                 "precision": ev.ratio(ps["tp"], ps["tp"] + ps["fp"]), "recall": ev.ratio(ps["tp"], ps["tp"] + ps["fn"]),
                 "false": ps["false"], "missed": ps["missed"], "list": peer, "unrecoveredList": unrecovered},
        "_internal": (frames, rows, peer_mean, engine_all, unrecovered, entry),
    }


def write_sheets(args, name, video, result, shared_labels):
    from blinks import sheets
    sheets.CROP_W = args.sheet_width
    sheets.MAX_CROPS = max(5, min(11, 1500 // args.sheet_width - 1))
    frames, rows, peer_mean, engine_all, unrecovered, entry = result["_internal"]
    times = [float(r["seconds"]) for r in rows]
    engine_mean = []
    for r in rows:
        if r.get("face") == "1" and r.get("eye_closure_left"):
            engine_mean.append((float(r["eye_closure_left"]) + float(r["eye_closure_right"])) / 2)
        else:
            engine_mean.append(None)
    cands = [(e["start"], e["end"], "peer") for e in result["peer"]["list"]]
    cands += [(e["start"], e["end"], "peer-unrecovered") for e in unrecovered]
    cands += [(e["start"], e["end"], "engine" if e["credited"] else "engine-uncredited") for e in engine_all]
    for b in (entry or {}).get("blinks", []) + (entry or {}).get("winks", []):
        cands.append((b["start"], b["end"], "label"))
    for t in shared_labels.get(name, {}).get("blinks", []) or []:
        cands.append((t, t + 0.12, "shared-label"))
    grouped = sheets.groups(cands)
    return sheets.write(video, os.path.join(args.sheets, name), name, grouped, times, rows, frames, engine_mean, peer_mean), grouped


def variant_path(video, fps, phase, work):
    return os.path.join(work, "%s-%dfps-%03d.mp4" % (os.path.basename(video), fps, round(phase * 1000)))


def variant_events(args, video, fps, policy, work, phase=0.0):
    """Engine events of `video` re-encoded at `fps` (H.264, CRF 18); with `phase` (seconds), the
    frames kept are those `phase` later in the source, as a camera whose frames fall at other
    moments would take them (event times then read `phase` early: well inside the tolerance)."""
    out = variant_path(video, fps, phase, work)
    vf = ("setpts=PTS-%.4f/TB," % phase if phase else "") + "fps=%d" % fps
    res = run(["ffmpeg", "-v", "error", "-y", "-i", video, "-an", "-vf", vf, "-c:v", "libx264",
               "-crf", "18", "-pix_fmt", "yuv420p", out])
    if res.returncode != 0:
        return None
    rows = engine_trace(args.liveness, out, work, policy)
    return None if rows is None else [e for e in ev.engine_events(rows) if e["credited"] and not e["edgeRejected"]]


def picture_variant_events(args, video, name, vf, policy, work):
    """Engine events of `video` at its own rate through the ffmpeg filter `vf` (H.264, CRF 23)."""
    out = os.path.join(work, "%s-%s.mp4" % (os.path.basename(video), name))
    res = run(["ffmpeg", "-v", "error", "-y", "-i", video, "-an", "-vf", vf, "-c:v", "libx264",
               "-crf", "23", "-pix_fmt", "yuv420p", out])
    if res.returncode != 0:
        sys.stderr.write("measure_blinks: ffmpeg failed on %s (%s): %s\n" % (video, name, res.stderr.strip()[-300:]))
        return None
    rows = engine_trace(args.liveness, out, work, policy)
    return None if rows is None else [e for e in ev.engine_events(rows) if e["credited"] and not e["edgeRejected"]]


class StreamService:
    """`liveness serve` on a free loopback port with the never-ending policy (passive) and
    --trace-dir, for the JPEG variant through `liveness stream --format jpeg`."""

    def __init__(self, liveness, policy, work):
        self.liveness = liveness
        self.traces = os.path.join(work, "stream-traces")
        os.makedirs(self.traces, exist_ok=True)
        with open(policy) as fh:
            serve_policy = dict(json.load(fh), challengeMode="passive")
        self.policy = os.path.join(work, "never-ends-passive.json")
        with open(self.policy, "w") as fh:
            json.dump(serve_policy, fh)
        self.process = subprocess.Popen([liveness, "serve", "--port", "0", "--policy", self.policy, "--allow-weaker-policy",
                                         "--trace-dir", self.traces, "--workers", "2"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = None
        for line in self.process.stdout:
            if "listening on " in line:
                self.url = line.split("listening on ", 1)[1].split()[0]
                break
        if self.url is None:
            raise RuntimeError("liveness serve did not start: " + self.process.stderr.read()[-300:])

    def trace(self, video, quality):
        """Streams `video` as JPEG at `quality`; the session's trace rows (None on failure)."""
        res = run([self.liveness, "stream", self.url, video, "--format", "jpeg", "--jpeg-quality", str(quality),
                   "--challenge-mode", "passive", "--json"])
        session = None
        for line in res.stdout.splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("type") == "session":
                session = message.get("id")
                break
        path = session and os.path.join(self.traces, session + ".csv")
        if not path or not os.path.isfile(path):
            sys.stderr.write("measure_blinks: stream failed on %s: %s\n" % (video, (res.stderr or res.stdout).strip()[-300:]))
            return None
        with open(path) as fh:
            return list(csv.DictReader(fh))

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def stream_jpeg_variant_events(service, video, quality=80):
    """Every frame as JPEG at `quality` (a browser's 0.8) through `liveness stream --format jpeg`
    to `liveness serve`, whose trace gives the events; also the last second the trace covers (the
    service takes at most 3000 frames a session)."""
    rows = service.trace(video, quality)
    if not rows:
        return None, None
    return [e for e in ev.engine_events(rows) if e["credited"] and not e["edgeRejected"]], float(rows[-1]["seconds"])


def compare_variant(base, variant, frame_seconds):
    """Base (source-rate) events against a variant's: matched within one variant frame."""
    pairs, extra, lost = ev.match(variant, base, frame_seconds)
    starts = [abs(variant[i]["start"] - base[j]["start"]) for i, j in pairs]
    return {"events": len(variant), "matched": len(pairs), "gained": len(extra), "lost": len(lost),
            "gainedAt": [round(variant[i]["start"], 3) for i in extra], "lostAt": [round(base[j]["start"], 3) for j in lost],
            "largestStartShift": round(max(starts), 3) if starts else None}


def variant_plan(args):
    """(fps, phase seconds) of each re-encoding: every rate of --rates at --phases evenly spaced
    phases of its frame interval."""
    return [(fps, k / (fps * args.phases)) for fps in args.rates for k in range(args.phases)]


def variant_key(fps, phase):
    return "%dfps" % fps + ("+%.3fs" % phase if phase else "")


def rates(text):
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("frame rates are whole numbers separated by commas, e.g. 30,15,10")
    if not values or any(v < 1 or v > 240 for v in values):
        raise argparse.ArgumentTypeError("each frame rate must be between 1 and 240")
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--liveness", default=os.path.join(ROOT, ".build", "release", "liveness"))
    ap.add_argument("--recordings", default=os.environ.get("LIVENESS_RECORDINGS") or os.path.join(os.path.dirname(ROOT), "shared", "recordings"))
    ap.add_argument("--labels", default=os.path.join(ROOT, "Recordings", "blink-labels.json"))
    ap.add_argument("--peer-python", default=DEFAULT_PEER_PYTHON)
    ap.add_argument("--cache", default=os.path.join(ROOT, "Recordings", ".cache", "blinks"))
    ap.add_argument("--clips", nargs="*", help="only these file names")
    ap.add_argument("--tolerance", type=float, default=0.2, help="seconds between matched intervals (default 0.2)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--fps-variants", action="store_true", help="also re-encode each clip at the --rates, and stream it as JPEG q80 through liveness stream / serve (also at 15 fps when 15 is a rate)")
    ap.add_argument("--rates", type=rates, default=list(VARIANT_FPS), help="frame rates of the re-encodings (default 30,15,10)")
    ap.add_argument("--phases", type=int, default=1, choices=range(1, 9), metavar="N",
                    help="re-encode each rate at N phases of its frame interval (default 1: frames from the first)")
    ap.add_argument("--picture-variants", action="store_true",
                    help="also re-encode each clip at its own rate dim, noisy, dark (both) and blurred (ffmpeg filters, CRF 23)")
    ap.add_argument("--sheets", metavar="DIR", help="write contact sheets of every candidate event to DIR")
    ap.add_argument("--sheet-width", type=int, default=128, help="pixels per eye crop on the sheets (default 128)")
    ap.add_argument("--events", action="store_true", help="list every event of every clip")
    args = ap.parse_args()
    args.liveness = os.path.abspath(args.liveness)
    if not os.access(args.liveness, os.X_OK):
        sys.exit("measure_blinks: no engine at %s (--liveness)" % args.liveness)
    if not os.path.isdir(args.recordings):
        sys.exit("measure_blinks: no recordings at %s" % args.recordings)
    os.makedirs(args.cache, exist_ok=True)
    policy = os.path.join(args.cache, "never-ends.json")
    with open(policy, "w") as fh:
        json.dump(NEVER_ENDS, fh)
    labels, label_doc = load_labels(args.labels)
    shared = {}
    if os.path.isfile(os.path.join(args.recordings, "labels.json")):
        with open(os.path.join(args.recordings, "labels.json")) as fh:
            shared = {r["file"]: r for r in json.load(fh)["recordings"]}
    names = sorted(n for n in os.listdir(args.recordings) if n.lower().endswith(VIDEO_EXTENSIONS))
    if args.clips:
        names = [n for n in names if n in args.clips]
    results, skipped = [], []
    service = None
    work = tempfile.mkdtemp(prefix="blink-variants-")
    try:
        for name in names:
            video = os.path.join(args.recordings, name)
            r = measure_clip(args, name, video, policy, labels)
            if r is None or not r["face"]:
                skipped.append(name)
                continue
            if args.sheets:
                r["sheets"], _ = write_sheets(args, name, video, r, shared)
            if args.fps_variants:
                base = r["engine"]["list"]
                r["variants"] = {}
                for fps, phase in variant_plan(args):
                    v = variant_events(args, video, fps, policy, work, phase)
                    if v is not None:
                        c = compare_variant(base, v, 1.0 / fps)
                        bl, exc, _ = split_labels(labels.get(name))
                        s = ev.score(v, bl, exc, args.tolerance)
                        c.update({"tp": s["tp"], "fp": s["fp"], "fn": s["fn"]})
                        r["variants"][variant_key(fps, phase)] = c
                if service is None:
                    try:
                        service = StreamService(args.liveness, policy, work)
                    except RuntimeError as e:
                        sys.stderr.write("measure_blinks: no JPEG stream variant: %s\n" % e)
                        service = False
                v, covered = stream_jpeg_variant_events(service, video) if service else (None, None)
                if v is not None:
                    # the source's frame interval; only what the stream covered is compared
                    rows = r["_internal"][1]
                    dt = (float(rows[-1]["seconds"]) - float(rows[0]["seconds"])) / max(1, len(rows) - 1)
                    c = compare_variant([e for e in base if e["start"] <= covered + dt], v, dt)
                    bl, exc, _ = split_labels(labels.get(name))
                    s = ev.score(v, [b for b in bl if b["start"] <= covered], exc, args.tolerance)
                    c.update({"tp": s["tp"], "fp": s["fp"], "fn": s["fn"], "coveredSeconds": round(covered, 3)})
                    r["variants"]["jpeg80"] = c
                # The hosted web page's stream: JPEG q80 at 15 fps (its most; docs/web-flow.md).
                fifteen = variant_path(video, 15, 0.0, work)
                v, covered = stream_jpeg_variant_events(service, fifteen) if service and os.path.isfile(fifteen) else (None, None)
                if v is not None:
                    c = compare_variant([e for e in base if e["start"] <= covered + 1 / 15], v, 1 / 15)
                    bl, exc, _ = split_labels(labels.get(name))
                    s = ev.score(v, [b for b in bl if b["start"] <= covered], exc, args.tolerance)
                    c.update({"tp": s["tp"], "fp": s["fp"], "fn": s["fn"], "coveredSeconds": round(covered, 3)})
                    r["variants"]["jpeg80-15fps"] = c
            if args.picture_variants:
                base = r["engine"]["list"]
                rows = r["_internal"][1]
                dt = (float(rows[-1]["seconds"]) - float(rows[0]["seconds"])) / max(1, len(rows) - 1)
                r["pictureVariants"] = {}
                for key_name, vf in PICTURE_VARIANTS:
                    v = picture_variant_events(args, video, key_name, vf, policy, work)
                    if v is not None:
                        c = compare_variant(base, v, dt)
                        bl, exc, _ = split_labels(labels.get(name))
                        s = ev.score(v, bl, exc, args.tolerance)
                        c.update({"tp": s["tp"], "fp": s["fp"], "fn": s["fn"]})
                        r["pictureVariants"][key_name] = c
            results.append(r)
    finally:
        if service:
            service.close()
        shutil.rmtree(work, ignore_errors=True)
    for r in results:
        r.pop("_internal", None)
    totals = {}
    for who in ("engine", "peer"):
        tp = sum(r[who]["tp"] for r in results if r["labelled"])
        fp = sum(r[who]["fp"] for r in results if r["labelled"])
        fn = sum(r[who]["fn"] for r in results if r["labelled"])
        totals[who] = {"tp": tp, "fp": fp, "fn": fn, "precision": ev.ratio(tp, tp + fp), "recall": ev.ratio(tp, tp + fn)}
    minutes = sum(r["seconds"] for r in results if r["labelled"]) / 60
    totals["engine"]["falsePerMinute"] = totals["engine"]["fp"] / minutes if minutes else None
    totals["engine"]["worstClipFalsePerMinute"] = max((r["engine"]["falsePerMinute"] for r in results if r["labelled"]), default=None)
    totals["labelledBlinks"] = sum(r["labelledBlinks"] for r in results if r["labelled"])
    totals["minutes"] = minutes
    out = {"tool": "Tools/measure_blinks.py", "liveness": args.liveness, "tolerance": args.tolerance,
           "engineThreshold": ev.ENGINE_THRESHOLD, "labels": os.path.relpath(args.labels, ROOT) if labels else None,
           "clips": results, "skipped": skipped, "totals": totals}
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
        return
    print_text(out, args)


def print_text(out, args):
    print("| clip | s | labelled | engine events | engine TP/FP/FN | engine P / R | false/min | peer events | peer TP/FP/FN | peer P / R |")
    print("| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | --- | --- |")
    for r in out["clips"]:
        e, p = r["engine"], r["peer"]
        lab = str(r["labelledBlinks"]) + (" (+%d excl.)" % r["excludedLabels"] if r["excludedLabels"] else "") if r["labelled"] else "not checked"
        if r.get("checkedSeconds"):
            lab += " (%g-%g s)" % tuple(r["checkedSeconds"])
        if not r["labelled"]:
            print("| %s | %.1f | %s | %d | — | — | — | %d | — | — |" % (r["file"], r["seconds"], lab, e["events"], p["events"]))
            continue
        print("| %s | %.1f | %s | %d%s | %d/%d/%d | %s / %s | %.1f | %d | %d/%d/%d | %s / %s |" % (
            r["file"], r["seconds"], lab, e["events"], (" (+%d uncredited)" % e["uncreditedEvents"]) if e["uncreditedEvents"] else "",
            e["tp"], e["fp"], e["fn"], fmt(e["precision"]), fmt(e["recall"]), e["falsePerMinute"] or 0,
            p["events"], p["tp"], p["fp"], p["fn"], fmt(p["precision"]), fmt(p["recall"])))
    t = out["totals"]
    print()
    print("labelled clips: %.1f min, %d counted blinks" % (t["minutes"], t["labelledBlinks"]))
    for who in ("engine", "peer"):
        x = t[who]
        print("%s: TP %d FP %d FN %d, precision %s, recall %s%s" % (
            who, x["tp"], x["fp"], x["fn"], fmt(x["precision"]), fmt(x["recall"]),
            (", false blinks %.2f/min overall, worst clip %.1f/min" % (x["falsePerMinute"], x["worstClipFalsePerMinute"])) if who == "engine" and x.get("falsePerMinute") is not None else ""))
    if out["skipped"]:
        print("skipped (no face for the peer, or a failure): " + ", ".join(out["skipped"]))
    print()
    print("engine false events and misses (cause from the label file's checked notes):")
    for r in (r for r in out["clips"] if r["labelled"]):
        for e in r["engine"]["false"]:
            print("  %s  FALSE  %.2f-%.2f s (peak %.2f)  %s" % (r["file"], e["start"], e["end"], e["peak"], e.get("cause") or "(no cause noted)"))
        for b in r["engine"]["missed"]:
            print("  %s  MISSED %.2f-%.2f s  %s" % (r["file"], b["start"], b["end"], b.get("cause") or "(no note)"))
    print("peer false events and misses:")
    for r in (r for r in out["clips"] if r["labelled"]):
        for e in r["peer"]["false"]:
            print("  %s  FALSE  %.2f-%.2f s  %s" % (r["file"], e["start"], e["end"], e.get("cause") or "(no cause noted)"))
        for b in r["peer"]["missed"]:
            print("  %s  MISSED %.2f-%.2f s  %s" % (r["file"], b["start"], b["end"], b.get("cause") or "(no note)"))
    if args.events:
        print()
        for r in out["clips"]:
            print(r["file"])
            print("  engine: " + " ".join("%.2f-%.2f(%.2f)" % (e["start"], e["end"], e["peak"]) for e in r["engine"]["list"]))
            print("  peer:   " + " ".join("%.2f-%.2f(%.2f)" % (e["start"], e["end"], e["lowest"]) for e in r["peer"]["list"]))
            if r["peer"]["unrecoveredList"]:
                print("  peer unrecovered: " + " ".join("%.2f-%.2f" % (e["start"], e["end"]) for e in r["peer"]["unrecoveredList"]))
    if any("variants" in r for r in out["clips"]):
        keys = [variant_key(fps, phase) for fps, phase in variant_plan(args)] + ["jpeg80"]
        if any("jpeg80-15fps" in r.get("variants", {}) for r in out["clips"]):
            keys.append("jpeg80-15fps")
        print_variant_table(out, "variants", keys, {"jpeg80": "JPEG q80", "jpeg80-15fps": "JPEG q80 at 15 fps"},
                            "frame-rate variants: engine events (matched to the source-rate events within one variant frame / gained / lost), TP/FP/FN against labels")
    if any("pictureVariants" in r for r in out["clips"]):
        print_variant_table(out, "pictureVariants", [k for k, _ in PICTURE_VARIANTS], {},
                            "picture variants (each clip's own rate, CRF 23): engine events (matched to the source's within one frame / gained / lost), TP/FP/FN against labels")
    for r in out["clips"]:
        if r.get("framesMismatch"):
            print("note: %s: the peer decoded a different number of frames than the engine" % r["file"])
        for path in r.get("sheets", []):
            print("sheet: " + path)


def print_variant_table(out, field, keys, names, title):
    print()
    print(title)
    print("| clip | source | " + " | ".join(names.get(k, k) for k in keys) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in keys) + " |")
    for r in out["clips"]:
        v = r.get(field, {})
        cells = []
        for k in keys:
            c = v.get(k)
            cells.append("—" if c is None else "%d (%d/+%d/-%d) %d/%d/%d%s" % (
                c["events"], c["matched"], c["gained"], c["lost"], c["tp"], c["fp"], c["fn"],
                (" gained at " + ",".join("%.2f" % g for g in c["gainedAt"])) if c["gained"] else ""))
        e = r["engine"]
        print("| %s | %d %d/%d/%d | %s |" % (r["file"], e["events"], e["tp"], e["fp"], e["fn"], " | ".join(cells)))
    cells = []
    for k in keys:
        cs = [r[field][k] for r in out["clips"] if k in r.get(field, {})]
        if not cs:
            cells.append("—")
            continue
        tot = {f: sum(c[f] for c in cs) for f in ("events", "matched", "gained", "lost", "tp", "fp", "fn")}
        cells.append("%d (%d/+%d/-%d) %d/%d/%d, P %s R %s, %d clips gain" % (
            tot["events"], tot["matched"], tot["gained"], tot["lost"], tot["tp"], tot["fp"], tot["fn"],
            fmt(ev.ratio(tot["tp"], tot["tp"] + tot["fp"])), fmt(ev.ratio(tot["tp"], tot["tp"] + tot["fn"])),
            sum(1 for c in cs if c["gained"])))
    t = out["totals"]["engine"]
    print("| **all** | %d/%d/%d | %s |" % (t["tp"], t["fp"], t["fn"], " | ".join(cells)))


if __name__ == "__main__":
    main()
