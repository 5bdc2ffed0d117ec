"""Prompted sessions: a head that answers (or ignores) the prompts a capture client showed, with
the exact truth of every answer, and the unsigned prompt log (`liveness-prompt-log/1`) the
client would have written.

The recipe key `prompts` (docs/generator.md):

    "prompts": {"shown": [[1.0, "turnLeft"], [3.0, "blink"], [5.0, "turnRight"]],
                "follow": true, "reaction": 0.5, "turnDegrees": 18,
                "turnSeconds": [0.3, 0.6, 0.3], "blink": {"duration": 0.3, "closure": 1.0},
                "answers": [null, {"do": "turnRight"}, {"reaction": 3.5}]}

* `shown`: when the client showed each planned step (seconds on the video clock; `null` for a
  step never shown, which may only follow shown ones), and the step: `turnLeft`, `turnRight`
  or `blink`.
* `follow` (true): the head answers every shown prompt `reaction` seconds after it: a turn out
  to ±`turnDegrees` (positive = the subject's own left, as `yaw`) over `turnSeconds[0]`, held
  `turnSeconds[1]`, back over `turnSeconds[2]`, linear like `yaw` keys; a blink is a normal
  blink (`blink`). With `follow` false the head answers nothing: it does only what the
  recipe's `yaw` and `blinks` say (a recording made for other prompts).
* `answers`: per-step overrides (index-aligned, `null` for none) of `reaction`, `turnDegrees`,
  `turnSeconds`, `blink`, and `do`: what the head does instead of the prompted step
  (`turnLeft`, `turnRight`, `blink` or `none`): failure species. An answer that would start
  after the clip's end is recorded as `none`.

The answers are added to the recipe's own `yaw` (a sum of piecewise-linear functions is one
again: the merged keys are exact) and `blinks`, so every renderer (live head, recapture) shows
them. The truth records each prompt and each answer: when the head starts to move or the blink
starts, and for a turn the exact time the head's yaw, relative to its yaw at 0 s, crosses half
the engine's turn threshold (3.75°): the onset the engine measures a turn's reaction from.
"""
import json

# The engine's default turn threshold (LivenessPolicy.turnYawDegrees): a turn is credited at
# 7.5° held; it begins at the first frame of the stretch turned by at least half of it.
TURN_DEGREES = 7.5
ONSET_DEGREES = TURN_DEGREES / 2
STEPS = ("turnLeft", "turnRight", "blink")
LOG_FORMAT = "liveness-prompt-log/1"


def _interp(keys, t):
    """`render.piecewise` without numpy: linear through [[t, v], ...], held outside."""
    if not keys:
        return 0.0
    if t <= keys[0][0]:
        return float(keys[0][1])
    for (t0, v0), (t1, v1) in zip(keys, keys[1:]):
        if t <= t1:
            return float(v0) if t1 == t0 else float(v0 + (v1 - v0) * (t - t0) / (t1 - t0))
    return float(keys[-1][1])


def _turn_keys(start, degrees, seconds):
    out, hold, back = seconds
    return [[start, 0.0], [start + out, degrees], [start + out + hold, degrees], [start + out + hold + back, 0.0]]


def _validate(spec):
    shown = spec.get("shown")
    if not isinstance(shown, list) or not 2 <= len(shown) <= 20:
        raise ValueError("prompts.shown must list 2 to 20 [t, step] pairs")
    last, never = None, False
    for i, entry in enumerate(shown):
        if not (isinstance(entry, list) and len(entry) == 2 and entry[1] in STEPS):
            raise ValueError("prompts.shown[%d] must be [t, \"turnLeft\"|\"turnRight\"|\"blink\"]" % i)
        t = entry[0]
        if t is None:
            never = True
            continue
        if never:
            raise ValueError("prompts.shown[%d]: a step is shown after one that never was" % i)
        if last is not None and t <= last:
            raise ValueError("prompts.shown[%d]: prompt times must increase" % i)
        last = t
    answers = spec.get("answers", [])
    if len(answers) > len(shown):
        raise ValueError("prompts.answers has more entries than prompts.shown")
    for i, a in enumerate(answers):
        if a is not None and a.get("do", "prompted") not in STEPS + ("none", "prompted"):
            raise ValueError("prompts.answers[%d].do must be turnLeft, turnRight, blink or none" % i)


def expand(recipe):
    """The recipe the renderers draw (the answers merged into `yaw` and `blinks`) and the plan of
    the answers (a list of dicts, not yet timed against frames). A recipe without `prompts` is
    returned unchanged, with None."""
    spec = recipe.get("prompts")
    if spec is None:
        return recipe, None
    _validate(spec)
    follow = spec.get("follow", True)
    answers = []
    turn_keys = []
    blinks = list(recipe.get("blinks", []))
    overrides = spec.get("answers", [])
    for i, (t, step) in enumerate(spec["shown"]):
        if t is None or not follow:
            continue
        o = (overrides[i] if i < len(overrides) else None) or {}
        did = o.get("do", "prompted")
        did = step if did == "prompted" else did
        reaction = o.get("reaction", spec.get("reaction", 0.5))
        start = t + reaction
        if did == "none" or start >= recipe["seconds"]:
            # No answer, or one the clip ends before.
            answers.append({"index": i, "step": step, "did": "none"})
            continue
        answer = {"index": i, "step": step, "did": did, "reaction": round(reaction, 6), "start": round(start, 6)}
        if did == "blink":
            b = dict(spec.get("blink", {}), **o.get("blink", {}))
            duration, closure = b.get("duration", 0.3), b.get("closure", 1.0)
            blinks.append({"t": start, "duration": duration, "closure": closure})
            # Each blink closes over 40 % of its duration, stays shut 20 %, opens over 40 %.
            answer.update({"closed": round(start + 0.4 * duration, 6), "end": round(start + duration, 6),
                           "closure": closure})
        else:
            degrees = abs(o.get("turnDegrees", spec.get("turnDegrees", 18.0)))
            seconds = o.get("turnSeconds", spec.get("turnSeconds", [0.3, 0.6, 0.3]))
            sign = 1.0 if did == "turnLeft" else -1.0
            turn_keys.append(_turn_keys(start, sign * degrees, seconds))
            answer.update({"degrees": sign * degrees, "peak": round(start + seconds[0], 6),
                           "end": round(start + sum(seconds), 6)})
        answers.append(answer)
    out = dict(recipe)
    if turn_keys:
        # The sum of piecewise-linear functions, exact at the union of their breakpoints.
        base = recipe.get("yaw", [])
        times = sorted({k[0] for k in base} | {k[0] for keys in turn_keys for k in keys})
        out["yaw"] = [[round(s, 6), round(_interp(base, s) + sum(_interp(keys, s) for keys in turn_keys), 6)] for s in times]
    if len(blinks) != len(recipe.get("blinks", [])):
        out["blinks"] = sorted(blinks, key=lambda b: b["t"])
    return out, answers


def turn_stretches(yaw_keys, level=ONSET_DEGREES, peak_level=TURN_DEGREES):
    """Every stretch of the piecewise-linear yaw, relative to its value at 0 s, turned by at least
    `level` degrees to one side: onset (the exact crossing time), end (None: still turned at the
    last key), direction (`left` for positive yaw), peak |yaw| and whether it reaches
    `peak_level`. Exact: the yaw is linear between its keys and between the crossings."""
    if not yaw_keys:
        return []
    base = _interp(yaw_keys, 0.0)
    keys = [(float(t), float(v) - base) for t, v in yaw_keys]
    cuts = {t for t, _ in keys}
    for (t0, v0), (t1, v1) in zip(keys, keys[1:]):
        for target in (level, -level):
            if v0 != v1 and min(v0, v1) <= target <= max(v0, v1):
                cuts.add(t0 + (target - v0) * (t1 - t0) / (v1 - v0))
    cuts = sorted(c for c in cuts if c >= 0.0) or [0.0]
    if cuts[0] > 0.0:
        cuts.insert(0, 0.0)

    def side(v):
        return 1 if v >= level - 1e-9 else (-1 if v <= -level + 1e-9 else 0)

    # The side of each interval between cuts (at its middle), and after the last cut.
    spans = [(a, b, side(_interp(keys, (a + b) / 2))) for a, b in zip(cuts, cuts[1:])]
    spans.append((cuts[-1], None, side(keys[-1][1])))
    stretches = []
    for a, b, s in spans:
        if s == 0:
            continue
        peak = max(abs(_interp(keys, a)), abs(_interp(keys, b)) if b is not None else abs(keys[-1][1]))
        if stretches and stretches[-1]["sign"] == s and stretches[-1]["end"] == a:
            stretches[-1]["end"], stretches[-1]["peak"] = b, max(stretches[-1]["peak"], peak)
        else:
            stretches.append({"onset": a, "end": b, "sign": s, "peak": peak})
    return [{"onset": round(s["onset"], 6), "end": None if s["end"] is None else round(s["end"], 6),
             "direction": "left" if s["sign"] > 0 else "right", "peakDegrees": round(s["peak"], 3),
             "reachesTurn": s["peak"] >= peak_level - 1e-9} for s in stretches]


def truth(recipe, answers, times, session):
    """The truth.json section: the prompts (with the frame each lands on), the answers (timed
    against the frames), every turned stretch of the head, and the session name of the log."""
    spec = recipe["prompts"]
    first = lambda s: next((i for i, t in enumerate(times) if t >= s - 1e-9), None)
    shown = [{"index": i, "step": step, "t": t, "microseconds": None if t is None else int(round(t * 1e6)),
              "frame": None if t is None else first(t)} for i, (t, step) in enumerate(spec["shown"])]
    stretches = turn_stretches(recipe.get("yaw", []))
    timed = []
    for a in answers:
        a = dict(a)
        if a["did"] in ("turnLeft", "turnRight"):
            direction = "left" if a["did"] == "turnLeft" else "right"
            s = next((s for s in stretches if s["direction"] == direction and s["onset"] >= a["start"] - 1e-6), None)
            if s is not None:
                a["onset"] = s["onset"]
                a["onsetReaction"] = round(s["onset"] - spec["shown"][a["index"]][0], 6)
                a["onsetFrame"] = first(s["onset"])
        elif a["did"] == "blink":
            a["startFrame"] = first(a["start"])
            a["closedFrame"] = first(a["closed"])
        timed.append(a)
    return {"session": session, "follow": spec.get("follow", True), "onsetDegrees": ONSET_DEGREES,
            "turnDegrees": TURN_DEGREES, "shown": shown, "answers": timed, "turns": stretches}


def log_body(recipe, session):
    """The unsigned prompt log: the header and one line per step, byte for byte what
    `PromptLog.body` writes (signing is the judge's harness's job)."""
    shown = recipe["prompts"]["shown"]
    lines = [json.dumps({"format": LOG_FORMAT, "session": session, "steps": len(shown)}, separators=(",", ":"))]
    for i, (t, step) in enumerate(shown):
        lines.append('{"index":%d,"step":"%s","promptMicroseconds":%s}' % (i, step, "null" if t is None else int(round(t * 1e6))))
    return "\n".join(lines) + "\n"
