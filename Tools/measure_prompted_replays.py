#!/usr/bin/env python3
"""Measures the prompted challenge (docs/prompted-challenge.md) against recordings: how often a
recording passes a prompted session whose prompts it cannot know (issue 25, "Measure: prompted
mode"). Every real clip in ../shared/recordings is a recording here — the live clips stand for
a replayed video of a real person, the two real replays for the attacks — and none of them was
made for the prompts, so every pass is a false accept.

For each video, `liveness trace` writes its observations once (the planar residual on every
frame); then, for seeds 1..N, `liveness replay --seed S` judges that trace in prompted mode,
with the seed drawing the plan (steps and random delays) exactly as a session's secure random
plan would be drawn. Two policies:

* **all checks** — `{"challengeMode": "prompted"}`: the shipped prompted policy;
* **prompts alone** — the same with every presentation-attack check off (parallax, frozen,
  looped, recapture, continuity): what the prompts decide by themselves.

Prints, per clip and policy, the sessions that passed, and how the failed ones failed (the
outcome of the deciding prompt, an unprompted turn, or another reason), and writes the same as
JSON (--json FILE).

    /usr/bin/python3 Tools/measure_prompted_replays.py [--seeds 100] [--liveness .build/release/liveness]

Uses only the standard library and the engine's command line.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VIDEO = (".mp4", ".webm", ".avi", ".mov", ".mkv")
POLICIES = {
    "all checks": {"challengeMode": "prompted"},
    "prompts alone": {"challengeMode": "prompted", "parallaxCheck": 0, "frozenCheck": 0, "loopCheck": 0,
                      "recaptureCheck": 0, "continuityCheck": 0},
}


def judge(liveness, trace, policy_file, seed):
    out = subprocess.run([liveness, "replay", trace, "--json", "--policy", policy_file, "--allow-weaker-policy",
                          "--seed", str(seed)], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        return {"error": out.stderr.strip()}
    report = json.loads(out.stdout)
    prompts = report.get("prompts") or {}
    shown = prompts.get("shown") or []
    verdict = report["verdict"]
    how = verdict["status"]
    if verdict["status"] == "failed":
        if verdict["reason"] == "challengeNotFollowed":
            how = "unprompted turn" if prompts.get("unpromptedTurn") else shown[-1]["outcome"]
        else:
            how = verdict["reason"]
    return {"status": verdict["status"], "how": how, "shown": len(shown),
            "followed": sum(1 for p in shown if p["outcome"] == "followed")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--liveness", default=os.path.join(ROOT, ".build/release/liveness"))
    ap.add_argument("--recordings", default=os.path.join(ROOT, "..", "shared", "recordings"))
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--json")
    ap.add_argument("--generated", action="store_true",
                    help="also the generated attack species (Recordings/.cache/cases/attack-*/video.mp4)")
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help="judge only the clips whose file or case name contains one of these")
    args = ap.parse_args()
    labels = json.load(open(os.path.join(args.recordings, "labels.json")))["recordings"]
    clips = [(os.path.join(args.recordings, l["file"]), l.get("live", True) is not False)
             for l in labels if l["file"].endswith(VIDEO)]
    if args.generated:
        cases = os.path.join(ROOT, "Recordings", ".cache", "cases")
        clips += [(os.path.join(cases, c, "video.mp4"), False) for c in sorted(os.listdir(cases))
                  if c.startswith("attack-") and os.path.exists(os.path.join(cases, c, "video.mp4"))]
    if args.only:
        clips = [(c, live) for c, live in clips if any(o in c for o in args.only)]
    work = tempfile.mkdtemp(prefix="prompted-")
    policy_files = {}
    for name, policy in POLICIES.items():
        path = os.path.join(work, name.replace(" ", "-") + ".json")
        json.dump(policy, open(path, "w"))
        policy_files[name] = path

    def name(clip):
        base = os.path.basename(clip)
        return os.path.basename(os.path.dirname(clip)) if base == "video.mp4" else base

    def trace(clip):
        path = os.path.join(work, name(clip) + ".jsonl")
        out = subprocess.run([args.liveness, "trace", clip, "--format", "jsonl", "--output", path],
                             capture_output=True, text=True)
        return path if out.returncode == 0 else None

    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        traces = dict(zip([c for c, _ in clips], pool.map(trace, [c for c, _ in clips])))
        for clip, live in clips:
            if traces[clip] is None:
                print(f"{name(clip)}: no trace (not a readable video)", file=sys.stderr)
                continue
            results[clip] = {"live": live}
            for policy_name, policy_file in policy_files.items():
                runs = list(pool.map(lambda s: judge(args.liveness, traces[clip], policy_file, s),
                                     range(1, args.seeds + 1)))
                hows = collections.Counter(r.get("how", "error") for r in runs)
                results[clip][policy_name] = {"passed": hows.get("passed", 0), "sessions": len(runs), "outcomes": dict(hows),
                                       "meanFollowed": sum(r.get("followed", 0) for r in runs) / len(runs)}
            row = results[clip]
            print(f"{name(clip):40s} {'live' if live else 'ATTACK':6s} "
                  + "  ".join(f"{n}: {row[n]['passed']}/{row[n]['sessions']} passed "
                              f"({', '.join(f'{k} {v}' for k, v in sorted(row[n]['outcomes'].items(), key=lambda kv: -kv[1]))})"
                              for n in POLICIES), flush=True)
    total = {n: sum(r[n]["passed"] for r in results.values()) for n in POLICIES}
    sessions = {n: sum(r[n]["sessions"] for r in results.values()) for n in POLICIES}
    for n in POLICIES:
        print(f"{n}: {total[n]} of {sessions[n]} sessions passed over {len(results)} recordings")
    if args.json:
        json.dump({"seeds": args.seeds, "clips": {name(c): r for c, r in results.items()}, "passed": total,
                   "sessions": sessions},
                  open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
