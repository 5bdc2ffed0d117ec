"""Blink events of the engine and of the peer, and matching them with hand labels (docs/blinks.md).

Standard library only, so that Tools/measure_blinks.py runs with /usr/bin/python3.
"""

# The engine's blink threshold (policy `blinkClosureThreshold`, spec section 4).
ENGINE_THRESHOLD = 0.22

# The peer's rule (docs/blinks.md, "The peer"):
PEER_BASELINE_SECONDS = 2.0   # open-eye baseline: this many seconds either side of the frame
PEER_BASELINE_PERCENTILE = 0.90  # ... the 90th percentile of that eye's aspect ratio there
PEER_MIN_BASELINE_FRAMES = 5  # fewer face frames in the window: no baseline, no event
PEER_MEAN_RATIO = 0.70        # closed frame: mean of the two eyes' EAR/baseline at most this
PEER_EYE_RATIO = 0.80         # ... and each eye's at most this (both eyes dip: a wink is not a blink)
PEER_RECOVER_RATIO = 0.85     # recovered: the mean ratio back at or above this ...
PEER_RECOVER_SECONDS = 0.5    # ... within this many seconds after the last closed frame, face tracked


def runs(flags):
    """Maximal runs of consecutive True flags, as (first index, last index)."""
    out, start = [], None
    for i, f in enumerate(flags):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i - 1))
            start = None
    if start is not None:
        out.append((start, len(flags) - 1))
    return out


def engine_events(rows, threshold=ENGINE_THRESHOLD):
    """Engine events from a `liveness trace` CSV (list of dicts).

    A frame is closed when a face is tracked and the mean of `eye_closure_left` and
    `eye_closure_right` is >= threshold. An event is a maximal run of consecutive closed frames.
    It is 'credited' when at least one of its frames is credited (the machine would count the
    blink there); runs without a credited frame (device rotating) are kept with credited False.
    It is 'edgeRejected' when the engine's eye-edge check judged the eyes open on every one of
    its frames (`eyes_open_by_edges` = 1): the machine credits no blink there, so such runs are
    not engine events (traces without the column: never rejected).

    Traces with the `eyes_closed` column (the engine's blink episodes, `BlinkEpisode`: from a
    closed frame until the eyes look open again) give the engine's own events instead: maximal
    runs of frames with `eyes_closed` = 1 (one closure is one event even when its closure falls
    back under the threshold for a frame inside it).
    """
    means = []
    for r in rows:
        if r.get("face") == "1" and r.get("eye_closure_left") and r.get("eye_closure_right"):
            means.append((float(r["eye_closure_left"]) + float(r["eye_closure_right"])) / 2.0)
        else:
            means.append(None)
    events = []
    if rows and "eyes_closed" in rows[0]:
        flags = [r.get("face") == "1" and r.get("eyes_closed") == "1" for r in rows]
        means = [m if m is not None else 0.0 for m in means]
    else:
        flags = [m is not None and m >= threshold for m in means]
    for a, b in runs(flags):
        seg = rows[a:b + 1]
        peak = max(range(a, b + 1), key=lambda i: means[i])
        events.append({
            "start": float(rows[a]["seconds"]), "end": float(rows[b]["seconds"]),
            "frames": [int(rows[a]["frame"]), int(rows[b]["frame"])],
            "peak": round(means[peak], 4), "peakSeconds": float(rows[peak]["seconds"]),
            "credited": any(r.get("credited") == "1" for r in seg),
            "edgeRejected": all(r.get("eyes_open_by_edges") == "1" for r in seg),
        })
    return events


def percentile(values, q):
    s = sorted(values)
    if not s:
        return None
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def peer_ratios(frames):
    """Per frame (ratio_left, ratio_right) of EAR to the eye's open baseline, or None."""
    t = [f[1] for f in frames]
    out = []
    n = len(frames)
    lo = hi = 0
    for i in range(n):
        while t[lo] < t[i] - PEER_BASELINE_SECONDS:
            lo += 1
        while hi < n and t[hi] <= t[i] + PEER_BASELINE_SECONDS:
            hi += 1
        if frames[i][2] is None or frames[i][3] is None:
            out.append(None)
            continue
        left = [f[2] for f in frames[lo:hi] if f[2] is not None]
        right = [f[3] for f in frames[lo:hi] if f[3] is not None]
        if len(left) < PEER_MIN_BASELINE_FRAMES or len(right) < PEER_MIN_BASELINE_FRAMES:
            out.append(None)
            continue
        bl = percentile(left, PEER_BASELINE_PERCENTILE)
        br = percentile(right, PEER_BASELINE_PERCENTILE)
        if not bl or not br:
            out.append(None)
            continue
        out.append((frames[i][2] / bl, frames[i][3] / br))
    return out


def peer_events(frames):
    """Peer events from peer.py's frames [[index, seconds, ear_l, ear_r, box], ...].

    Closed frame: both eyes below their open baseline (mean ratio <= PEER_MEAN_RATIO and each eye
    <= PEER_EYE_RATIO). An event is a maximal run of closed frames that recovers: within
    PEER_RECOVER_SECONDS after its last frame, a tracked frame has mean ratio >=
    PEER_RECOVER_RATIO before any untracked frame. Runs that never recover (the face is lost, the
    clip ends, the eyes stay half shut) are returned separately as 'unrecovered'.
    """
    ratios = peer_ratios(frames)
    mean = [None if r is None else (r[0] + r[1]) / 2 for r in ratios]
    closed = [r is not None and (r[0] + r[1]) / 2 <= PEER_MEAN_RATIO and max(r) <= PEER_EYE_RATIO for r in ratios]
    events, unrecovered = [], []
    for a, b in runs(closed):
        recovered = False
        for j in range(b + 1, len(frames)):
            if frames[j][1] > frames[b][1] + PEER_RECOVER_SECONDS or mean[j] is None:
                break
            if mean[j] >= PEER_RECOVER_RATIO:
                recovered = True
                break
        low = min(range(a, b + 1), key=lambda i: mean[i])
        ev = {"start": frames[a][1], "end": frames[b][1], "frames": [frames[a][0], frames[b][0]],
              "lowest": round(mean[low], 3), "lowestSeconds": frames[low][1]}
        (events if recovered else unrecovered).append(ev)
    return events, unrecovered, mean


def gap(a, b):
    """Seconds between two intervals (0 when they overlap)."""
    return max(0.0, max(a["start"], b["start"]) - min(a["end"], b["end"]))


def match(events, labels, tolerance):
    """One-to-one matching, closest pairs first; a pair matches when its gap <= tolerance.

    Returns (pairs [(event_index, label_index)], unmatched event indices, unmatched label indices).
    """
    candidates = sorted((gap(e, l), i, j) for i, e in enumerate(events) for j, l in enumerate(labels)
                        if gap(e, l) <= tolerance + 1e-9)
    used_e, used_l, pairs = set(), set(), []
    for _, i, j in candidates:
        if i in used_e or j in used_l:
            continue
        used_e.add(i)
        used_l.add(j)
        pairs.append((i, j))
    return (sorted(pairs), [i for i in range(len(events)) if i not in used_e],
            [j for j in range(len(labels)) if j not in used_l])


def score(events, blinks, excluded, tolerance):
    """Score events against labelled blinks.

    `blinks`: labelled blinks that count; `excluded`: labelled intervals that do not count either
    way (ambiguous cases, winks): an event matching one is neither a true nor a false positive.
    Returns a dict with tp, fp, fn, the false events, the missed blinks and the excluded matches.
    """
    pairs, rest, missed = match(events, blinks, tolerance)
    false, neutral = [], []
    for i in rest:  # any number of events may fall on one excluded interval
        (neutral if any(gap(events[i], x) <= tolerance + 1e-9 for x in excluded) else false).append(i)
    return {"tp": len(pairs), "fp": len(false), "fn": len(missed),
            "false": [events[i] for i in false], "missed": [blinks[j] for j in missed],
            "excluded": [events[i] for i in neutral]}


def ratio(a, b):
    return None if b == 0 else a / b
