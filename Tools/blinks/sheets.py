"""Contact sheets of candidate blink events, for checking labels by eye (docs/blinks.md).

Each row is one candidate (a peer event, an engine event, a labelled blink, merged when they
overlap): a face thumbnail of its middle frame, then the eye region of the frames around it
(from 0.16 s before to 0.2 s after; long events sampled), each captioned with the frame index,
its time, the engine's mean closure (e=) and the peer's mean EAR/baseline ratio (p=). Crops
use one box for the whole row (from the peer's eye landmarks, else the engine's face box) so
that lid motion is visible. Needs OpenCV (Debian's python3-opencv in /usr/bin/python3).
"""
import os

CROP_W = 128
MAX_CROPS = 11
ROWS_PER_PAGE = 6


def _box_for(frames_peer, rows, idxs):
    boxes = [frames_peer[i][4] for i in idxs if i < len(frames_peer) and frames_peer[i][4]]
    if boxes:
        x0 = sorted(b[0] for b in boxes)[len(boxes) // 2]
        y0 = sorted(b[1] for b in boxes)[len(boxes) // 2]
        x1 = sorted(b[2] for b in boxes)[len(boxes) // 2]
        y1 = sorted(b[3] for b in boxes)[len(boxes) // 2]
        w = x1 - x0
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        face = (cx - 1.2 * w, cy - 0.9 * w, cx + 1.2 * w, cy + 1.7 * w)
        return (cx - 0.8 * w, cy - 0.45 * w, cx + 0.8 * w, cy + 0.3 * w), face
    ebox = [rows[i] for i in idxs if i < len(rows) and rows[i].get("box_w")]
    if ebox:
        r = ebox[len(ebox) // 2]
        x, y, w, h = (float(r[k]) for k in ("box_x", "box_y", "box_w", "box_h"))
        return (x, y + 0.1 * h, x + w, y + 0.55 * h), (x - 0.2 * w, y - 0.3 * h, x + 1.2 * w, y + 1.2 * h)
    return None, None


def _crop(img, box, width):
    import cv2
    h, w = img.shape[:2]
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    x0, y0 = max(0, x0), max(0, y0)
    x1, y1 = min(w, max(x0 + 2, x1)), min(h, max(y0 + 2, y1))
    c = img[y0:y1, x0:x1]
    scale = width / max(1, c.shape[1])
    return cv2.resize(c, (width, max(8, int(c.shape[0] * scale))), interpolation=cv2.INTER_CUBIC)


def groups(candidates, merge=0.2):
    """Merge (start, end, tag) candidates that overlap or lie within `merge` s into groups."""
    out = []
    for s, e, tag in sorted(candidates):
        if out and s <= out[-1][1] + merge:
            out[-1][1] = max(out[-1][1], e)
            out[-1][2].append(tag)
        else:
            out.append([s, e, [tag]])
    return out


def frames_for(group, times):
    s, e = group[0], group[1]
    inside = [i for i, t in enumerate(times) if s - 0.161 <= t <= e + 0.201]
    if len(inside) <= MAX_CROPS:
        return inside
    pre = [i for i in inside if times[i] < s][-2:]
    post = [i for i in inside if times[i] > e][:2]
    core = [i for i in inside if s <= times[i] <= e]
    k = MAX_CROPS - len(pre) - len(post)
    step = (len(core) - 1) / max(1, k - 1)
    picked = sorted({core[int(round(j * step))] for j in range(k)})
    return pre + picked + post


def write(video, out_dir, clip, grouped, times, rows, peer_frames, engine_mean, peer_mean):
    """Write pages of contact sheets for `grouped` into out_dir; returns their paths."""
    import cv2
    import numpy as np
    os.makedirs(out_dir, exist_ok=True)
    wanted = {}
    for gi, g in enumerate(grouped):
        for i in frames_for(g, times):
            wanted.setdefault(i, []).append(gi)
    cap = cv2.VideoCapture(video)
    images, index = {}, 0
    last = max(wanted) if wanted else -1
    while index <= last:
        ok, img = cap.read()
        if not ok:
            break
        if index in wanted:
            images[index] = img
        index += 1
    strips = []
    for gi, g in enumerate(grouped):
        idxs = [i for i in frames_for(g, times) if i in images]
        if not idxs:
            continue
        eye_box, face_box = _box_for(peer_frames, rows, idxs)
        if eye_box is None:
            continue
        tiles = []
        mid = idxs[len(idxs) // 2]
        thumb = _crop(images[mid], face_box, CROP_W)
        thumb = thumb[: int(CROP_W * 1.2)]
        tiles.append(thumb)
        for i in idxs:
            c = _crop(images[i], eye_box, CROP_W)
            band = np.zeros((30, CROP_W, 3), np.uint8)
            e = engine_mean[i] if i < len(engine_mean) else None
            p = peer_mean[i] if i < len(peer_mean) else None
            cv2.putText(band, "%d %.2fs" % (i, times[i]), (2, 11), cv2.FONT_HERSHEY_SIMPLEX, 0.36, (255, 255, 255), 1)
            cv2.putText(band, "e=%s p=%s" % ("-" if e is None else "%.2f" % e, "-" if p is None else "%.2f" % p),
                        (2, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.36,
                        (80, 80, 255) if (e is not None and e >= 0.22) else (255, 255, 255), 1)
            tiles.append(np.vstack([c, band]))
        height = max(t.shape[0] for t in tiles)
        row = np.hstack([np.vstack([t, np.zeros((height - t.shape[0], t.shape[1], 3), np.uint8)]) for t in tiles])
        head = np.zeros((16, row.shape[1], 3), np.uint8)
        cv2.putText(head, "%s  #%d  %.2f-%.2f s  %s" % (clip, gi, g[0], g[1], " ".join(sorted(set(g[2])))),
                    (2, 12), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 255, 255), 1)
        strips.append(np.vstack([head, row]))
    paths = []
    for p in range(0, len(strips), ROWS_PER_PAGE):
        page = strips[p:p + ROWS_PER_PAGE]
        width = max(s.shape[1] for s in page)
        page = [np.hstack([s, np.zeros((s.shape[0], width - s.shape[1], 3), np.uint8)]) for s in page]
        path = os.path.join(out_dir, "%s-%02d.png" % (clip, p // ROWS_PER_PAGE))
        cv2.imwrite(path, np.vstack(page))
        paths.append(path)
    return paths
