#!/usr/bin/env python3
"""Measures the presentation-attack checks as ISO/IEC 30107-3 does, for
docs/presentation-attacks.md:

* APCER per attack species: the share of the generated attack cases (Recordings/cases/attack-*)
  that pass (a bona fide verdict for an attack);
* BPCER: the share of live sessions that pass with the checks off (parallaxCheck, frozenCheck
  and loopCheck 0: the engine before them) and fail with them on: every real clip in
  ../shared/recordings and every live generated case;
* the margins of the frozen and looped-input checks: the longest unchanged run and the longest
  moving repeat of every input, live and attack, against frozenSeconds and loopSeconds;
* the parallax residual of each labelled real turn (labels.json windows; the frames' residual
  against the autoshot frame, from `liveness trace`) and of each attack, side by side.

    python3 Tools/measure_presentation_attacks.py [--liveness .build/release/liveness]

Needs the rendered cases (Tools/setup.sh) and, for the real clips, the shared recordings
(skipped when absent). Uses only the standard library and the engine's command line.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def analyse(liveness, path, policy, out):
    """The report of `path` under `policy` (a policy file path or None)."""
    args = [liveness, "analyze", path, "--json", "--output", out, "--force"]
    if policy:
        args += ["--policy", policy, "--allow-weaker-policy"]
    res = subprocess.run(args, capture_output=True, text=True)
    lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise SystemExit("no report for %s: %s" % (path, res.stderr.strip()))
    return json.loads(lines[-1])


def trace_residuals(liveness, path):
    """(seconds, planar_residual) of every frame of `path` that has one."""
    with tempfile.NamedTemporaryFile(suffix=".csv") as tmp:
        subprocess.run([liveness, "trace", path, "--output", tmp.name], check=True, capture_output=True)
        with open(tmp.name) as fh:
            return [(float(r["seconds"]), float(r["planar_residual"])) for r in csv.DictReader(fh) if r.get("planar_residual")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--liveness", default=os.path.join(ROOT, ".build", "release", "liveness"))
    ap.add_argument("--cases", default=os.path.join(ROOT, "Recordings", "cases"))
    ap.add_argument("--rendered", default=os.path.join(ROOT, "Recordings", ".cache", "cases"))
    ap.add_argument("--recordings", default=os.environ.get("LIVENESS_RECORDINGS") or os.path.join(os.path.dirname(ROOT), "shared", "recordings"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="pad-measure-")
    off = os.path.join(work, "off.json")
    with open(off, "w") as fh:
        json.dump({"parallaxCheck": 0, "frozenCheck": 0, "loopCheck": 0}, fh)

    rows = []  # (kind, name, live, passed without, passed with, status, residual, reason)
    for name in sorted(os.listdir(args.cases)):
        video = os.path.join(args.rendered, name, "video.mp4")
        if not os.path.exists(video):
            continue
        with open(os.path.join(args.cases, name, "expected.json")) as fh:
            expected = json.load(fh)
        # Live: a face that is really there, turning its own head (the generated live cases);
        # the held prints and the attack species are not; no-face has no subject.
        live = not name.startswith("attack-") and name not in ("held-photo", "still-photo", "no-face")
        without = analyse(args.liveness, video, off, os.path.join(work, "o-" + name))
        with_ = analyse(args.liveness, video, None, os.path.join(work, "w-" + name))
        p = with_["presentationAttack"]["parallax"]
        rows.append(("generated", name, live, without["verdict"]["status"] == "passed", with_["verdict"]["status"] == "passed",
                     p["status"], p["residual"], with_["verdict"]["reason"], expected.get("knownIssue"), with_["presentationAttack"]))

    labels = {}
    if os.path.isdir(args.recordings):
        with open(os.path.join(args.recordings, "labels.json")) as fh:
            labels = {r["file"]: r for r in json.load(fh)["recordings"]}
        for name in sorted(os.listdir(args.recordings)):
            if not name.endswith((".mp4", ".avi")):
                continue
            path = os.path.join(args.recordings, name)
            live = not name.startswith(("astronaut", "clm-cap12-freeze", "opencv-"))
            without = analyse(args.liveness, path, off, os.path.join(work, "o-" + name))
            with_ = analyse(args.liveness, path, None, os.path.join(work, "w-" + name))
            p = with_["presentationAttack"]["parallax"]
            rows.append(("real", name, live, without["verdict"]["status"] == "passed", with_["verdict"]["status"] == "passed",
                         p["status"], p["residual"], with_["verdict"]["reason"], None, with_["presentationAttack"]))
    else:
        print("no shared recordings at %s: real clips skipped" % args.recordings)

    print("| input | kind | live | passed, checks off | passed, checks on | parallax | judged residual | frozen (longest run s) | looped (longest repeat s) | reason |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind, name, live, before, after, status, residual, reason, known, pa in rows:
        print("| %s | %s | %s | %s | %s | %s | %s | %s (%.2f) | %s (%.2f) | %s |" % (name, kind, "yes" if live else "no", "yes" if before else "no",
              "yes" if after else "no", status, "%.4f" % residual if residual is not None else "—",
              pa["frozen"]["status"], pa["frozen"]["longestRunSeconds"], pa["looped"]["status"], pa["looped"]["longestRepeatSeconds"],
              reason or "—"))
    live_rows = [r for r in rows if r[2]]
    if live_rows:
        worst_frozen = max(live_rows, key=lambda r: r[9]["frozen"]["longestRunSeconds"])
        worst_loop = max(live_rows, key=lambda r: r[9]["looped"]["longestRepeatSeconds"])
        print("\nLive inputs: longest unchanged face region %.2f s (%s), longest moving repeat %.2f s (%s)" % (
            worst_frozen[9]["frozen"]["longestRunSeconds"], worst_frozen[1], worst_loop[9]["looped"]["longestRepeatSeconds"], worst_loop[1]))

    live_before = [r for r in rows if r[2] and r[3]]
    newly_failed = [r[1] for r in live_before if not r[4]]
    print("\nBPCER: %d of %d live sessions that pass with the checks off fail with them on (%.1f %%)%s" % (
        len(newly_failed), len(live_before), 100.0 * len(newly_failed) / max(1, len(live_before)),
        ": " + ", ".join(newly_failed) if newly_failed else ""))
    attacks = [r for r in rows if r[1].startswith("attack-") or r[1] == "still-photo"]
    print("APCER per attack species (generated, one presentation each):")
    for r in attacks:
        print("  %-32s %s%s" % (r[1], "ACCEPTED (APCER 100 %)" if r[4] else "rejected (APCER 0 %)", " — known limit" if r[8] else ""))
    accepted = sum(1 for r in attacks if r[4])
    print("  overall: %d of %d attacks accepted" % (accepted, len(attacks)))

    print("\nLabelled real turns: residual against the autoshot frame over each window (frames with one)")
    print("| clip | turn window (s) | frames | min | median | max |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, label in sorted(labels.items()):
        # Turn windows only: some entries name the directions without times ("left", "right").
        turns = [t for t in label.get("turns") or [] if isinstance(t, dict) and "from" in t and "to" in t]
        if not turns:
            continue
        series = trace_residuals(args.liveness, os.path.join(args.recordings, name))
        for turn in turns:
            values = sorted(v for t, v in series if turn["from"] <= t <= turn["to"])
            if not values:
                print("| %s | %.1f–%.1f | 0 | — | — | — |" % (name, turn["from"], turn["to"]))
                continue
            print("| %s | %.1f–%.1f | %d | %.4f | %.4f | %.4f |" % (name, turn["from"], turn["to"], len(values), values[0],
                  values[len(values) // 2], values[-1]))
    print("\nAttacks: residual over every scan frame (the flat side's noise)")
    print("| case | frames | median | max |")
    print("| --- | --- | --- | --- |")
    for r in attacks + [r for r in rows if r[1] == "held-photo"]:
        values = sorted(v for t, v in trace_residuals(args.liveness, os.path.join(args.rendered, r[1], "video.mp4")))
        if values:
            print("| %s | %d | %.4f | %.4f |" % (r[1], len(values), values[len(values) // 2], values[-1]))


if __name__ == "__main__":
    main()
