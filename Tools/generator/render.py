"""Renders one case from its recipe: frames (a face photo turned, blinking, seen by a moving or
rotating camera, or printed and held in a hand, or shown on a screen or a print that is filmed
again: recapture.py), the per-frame truth, and the video file.

All randomness comes from a generator seeded by the recipe (`seed`, default 7), so a recipe
always gives the same frames.
"""
import json
import math
import os
import shutil
import subprocess
import tempfile

import cv2
import numpy as np

from . import prompts as prompted
from .face3d import FaceWarp

PAD = 256  # pixels of mirrored photo around the source, so a rotating camera never sees an edge


def piecewise(keys, t, default=0.0):
    """Linear interpolation through [[t, v], ...] keyframes, held before the first and after the last."""
    if not keys:
        return default
    ts = [k[0] for k in keys]
    vs = [k[1] for k in keys]
    return float(np.interp(t, ts, vs))


def blink_closure(blinks, t):
    """Eyelid closure 0..1 at time t: each blink closes over 40 % of its duration, stays shut for
    20 %, opens over 40 %."""
    c = 0.0
    for b in blinks:
        start, d, amount = b["t"], b["duration"], b.get("closure", 1.0)
        u = (t - start) / d
        if 0 <= u <= 1:
            v = u / 0.4 if u < 0.4 else (1.0 if u < 0.6 else (1 - u) / 0.4)
            c = max(c, amount * min(1.0, max(0.0, v)))
    return c


def sway_offsets(seed, amplitude_px):
    """Postural sway of a person holding still (what keeps a live face's picture from ever
    repeating exactly): per axis a sum of three sinusoids at seeded frequencies of 0.15-0.9 Hz
    with seeded phases, scaled so the axis peaks at about `amplitude_px` pixels. Returns
    f(t) -> (dx, dy) in pixels. Its own generator, so the case's other randomness is unchanged."""
    rng = np.random.default_rng(seed + 7919)
    axes = []
    for _ in range(2):
        freqs = rng.uniform(0.15, 0.9, 3)
        phases = rng.uniform(0, 2 * math.pi, 3)
        weights = rng.uniform(0.5, 1.0, 3)
        weights = weights / weights.sum()
        axes.append((freqs, phases, weights))

    def offset(t):
        return tuple(amplitude_px * float(np.sum(w * np.sin(2 * math.pi * f * t + p))) for f, p, w in axes)
    return offset


def rotation_matrix(pan_deg, tilt_deg, roll_deg):
    """Camera rotation: pan about the image's vertical axis, tilt about the horizontal, roll about the optical axis."""
    a, b, c = (math.radians(v) for v in (pan_deg, tilt_deg, roll_deg))
    ry = np.array([[math.cos(a), 0, math.sin(a)], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]])
    rx = np.array([[1, 0, 0], [0, math.cos(b), -math.sin(b)], [0, math.sin(b), math.cos(b)]])
    rz = np.array([[math.cos(c), -math.sin(c), 0], [math.sin(c), math.cos(c), 0], [0, 0, 1]])
    return rz @ rx @ ry


def angle_between(r1, r2):
    """Angle in degrees of the rotation taking r1 to r2."""
    r = r2 @ r1.T
    return math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(r) - 1) / 2))))


def textured_background(w, h, rng):
    """A room-like textured background: blurred noise plus random shelves and boxes."""
    base = rng.integers(60, 200, size=(h // 16 + 1, w // 16 + 1, 3)).astype(np.uint8)
    img = cv2.resize(base, (w, h), interpolation=cv2.INTER_CUBIC)
    for _ in range(60):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        bw, bh = int(rng.integers(10, w // 5)), int(rng.integers(8, h // 5))
        color = tuple(int(v) for v in rng.integers(20, 235, size=3))
        cv2.rectangle(img, (x, y), (x + bw, y + bh), color, -1)
        cv2.rectangle(img, (x, y), (x + bw, y + bh), (20, 20, 20), 1)
    noise = rng.normal(0, 6, size=img.shape)
    return np.clip(img.astype(np.float64) + noise, 0, 255).astype(np.uint8)


class Scene:
    """The padded photo with its landmarks, the face warp, and the framing window."""

    def __init__(self, photo, landmarks, out_size, face_fraction):
        self.photo = cv2.copyMakeBorder(photo, PAD, PAD, PAD, PAD, cv2.BORDER_REFLECT)
        # Above the photo a mirror would show the head upside down: continue the backdrop
        # instead (the top row stretched upwards, softened, with a faint mottle).
        top = cv2.copyMakeBorder(photo[:1], PAD - 1, 0, PAD, PAD, cv2.BORDER_REPLICATE)
        top = cv2.copyMakeBorder(top[:, PAD:-PAD], 0, 0, PAD, PAD, cv2.BORDER_REFLECT)
        top = cv2.GaussianBlur(top, (0, 0), 9)
        mottle = cv2.resize(np.random.default_rng(3).normal(0, 5, (PAD // 32 + 1, top.shape[1] // 32 + 1)), (top.shape[1], PAD))
        self.photo[:PAD] = np.clip(top.astype(np.float64) + mottle[..., None], 0, 255).astype(np.uint8)
        pts = np.asarray(landmarks, dtype=np.float64).reshape(68, 2) + PAD
        face_width = float(pts[16, 0] - pts[0, 0])
        # The camera that films the scene has the focal length the engine assumes (the output's
        # longer side); in photo pixels that is longer side / window scale.
        focal_src = max(out_size) / (face_fraction * out_size[0] / face_width)
        self.warp = FaceWarp(self.photo, pts, focal_src)
        self.landmarks = pts
        # The face anchor the engine uses: mean of the nose bridge and eye corners.
        self.anchor = pts[[27, 28, 29, 30, 36, 39, 42, 45]].mean(axis=0)
        self.face_width = float(pts[16, 0] - pts[0, 0])

    def window(self, out_w, out_h, face_fraction, center=(0.5, 0.45)):
        """Affine map from the padded photo to the output frame: the face (jaw width) takes
        `face_fraction` of the frame width and its anchor lands at `center` (normalised)."""
        s = face_fraction * out_w / self.face_width
        tx = center[0] * out_w - s * self.anchor[0]
        ty = center[1] * out_h - s * self.anchor[1]
        return np.array([[s, 0, tx], [0, s, ty], [0, 0, 1]])


def render_case(recipe, photo, landmarks, out_dir, seed_default=7):
    # A head that answers logged prompts: the answers become yaw keys and blinks (prompts.py).
    recipe, answers = prompted.expand(recipe)
    rng = np.random.default_rng(recipe.get("seed", seed_default))
    fps = recipe.get("fps", 30)
    seconds = recipe["seconds"]
    out_w, out_h = recipe.get("size", [480, 360])
    portrait = recipe.get("portraitMetadata", False)
    if portrait:
        out_w, out_h = recipe.get("size", [360, 480])

    # Frame times: constant rate, or variable with a seeded jitter.
    if "vfr" in recipe:
        # Variable frame rate with exact timestamps: t_n = n/rate + jitter*sin(2.3 n), which
        # ffmpeg's setpts reproduces (intervals between 1/rate - 2 jitter and 1/rate + 2 jitter).
        base, jitter = recipe["vfr"]["rate"], recipe["vfr"]["jitter"]
        times = [n / base + jitter * math.sin(2.3 * n) for n in range(int(seconds * base))]
    else:
        times = [i / fps for i in range(int(round(seconds * fps)))]

    if "recapture" in recipe:
        # A live session (or the portrait) shown on a screen or a print that is filmed again.
        from .recapture import render_recaptured
        frames, truth_frames = render_recaptured(recipe, photo, landmarks, times, rng, out_w, out_h,
                                                 recipe.get("seed", seed_default))
        frames = [degrade(fr, recipe, rng) for fr in frames]
        return write_case(recipe, frames, truth_frames, times, out_dir, out_w, out_h, fps, portrait, answers)

    face_fraction = recipe.get("faceFraction", 0.25)
    scene = Scene(photo, landmarks, (out_w, out_h), face_fraction)
    f = float(max(out_w, out_h))  # the focal length the engine's estimator assumes
    K = np.array([[f, 0, out_w / 2], [0, f, out_h / 2], [0, 0, 1]])
    Kinv = np.linalg.inv(K)
    background = textured_background(out_w, out_h, rng) if recipe.get("background") == "room" or recipe.get("noFace") or "heldPhoto" in recipe else None
    held = recipe.get("heldPhoto")
    second = recipe.get("secondFace")
    # A live head is never perfectly still: postural sway (pixels, peak) unless the recipe
    # turns it off; prints, screens and empty rooms have their own motion or none.
    live_head = not recipe.get("noFace") and not held
    sway = sway_offsets(recipe.get("seed", seed_default), recipe.get("sway", 0.8)) if live_head and recipe.get("sway", 0.8) > 0 else None
    frames, truth_frames = [], []
    prev_r = None
    prev_t = None
    cache = {}
    for i, t in enumerate(times):
        yaw = piecewise(recipe.get("yaw", []), t)
        closure = blink_closure(recipe.get("blinks", []), t)
        cam = recipe.get("camera", {})
        pan = piecewise(cam.get("pan", []), t)
        tilt = piecewise(cam.get("tilt", []), t)
        roll = piecewise(cam.get("roll", []), t)
        r = rotation_matrix(pan, tilt, roll)
        speed = 0.0 if prev_r is None else angle_between(prev_r, r) / (t - prev_t)
        prev_r, prev_t = r, t
        ox = piecewise(recipe.get("offsetX", []), t)
        oy = piecewise(recipe.get("offsetY", []), t)
        if sway:
            dx, dy = sway(t)
            ox += dx / out_w
            oy += dy / out_h

        key = (round(yaw, 4), round(closure, 4))
        if key not in cache:
            cache.clear()
            cache[key] = scene.warp.render(yaw, closure, closure)
        canvas = cache[key]
        A = scene.window(out_w, out_h, face_fraction, (0.5 + ox, recipe.get("centerY", 0.45) + oy))
        if second:
            canvas = paste_second_face(canvas, scene, second)
        if recipe.get("noFace"):
            frame = background.copy()
            H = K @ r.T @ Kinv
            frame = cv2.warpPerspective(frame, H, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        elif held:
            frame = render_held_photo(canvas, A, out_w, out_h, K, background, held, t, rng)
            if cam:
                # A camera that pans past the held picture: the whole frame, background included.
                frame = cv2.warpPerspective(frame, K @ r.T @ Kinv, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        else:
            H = K @ r.T @ Kinv @ A
            frame = cv2.warpPerspective(canvas, H, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        frame = degrade(frame, recipe, rng)
        frames.append(frame)
        face_center = None
        if not recipe.get("noFace") and not held:
            p = K @ r.T @ Kinv @ A @ np.array([scene.anchor[0], scene.anchor[1], 1.0])
            face_center = [round(p[0] / p[2] / out_w, 4), round(p[1] / p[2] / out_h, 4)]
        # `yaw` is the head's turn about its neck, which is also its yaw against the line of
        # sight from its pivot to the camera: the warp renders the head as seen along that line,
        # and neither a camera rotation (exactly) nor a framing move (to first order: an image
        # translation is a camera rotation for a pinhole) changes it. Against the camera's axes
        # the head's yaw is that minus the angle of the ray to the face: a face off the optical
        # axis, or a camera that panned, is seen from the side.
        yaw_camera = None if face_center is None else yaw - math.degrees(math.atan((face_center[0] - 0.5) * out_w / f))
        truth_frames.append({"i": i, "t": round(t, 5), "yaw": round(yaw, 3),
                             "yawCamera": None if yaw_camera is None else round(yaw_camera, 3), "closure": round(closure, 3),
                             "cameraDegPerSec": round(speed, 3), "cameraPan": round(pan, 3), "cameraRoll": round(roll, 3),
                             "faceCenter": face_center})
    return write_case(recipe, frames, truth_frames, times, out_dir, out_w, out_h, fps, portrait, answers)


def write_case(recipe, frames, truth_frames, times, out_dir, out_w, out_h, fps, portrait, answers=None):
    """The replay attacks on the rendered frames, then video.mp4, motion.csv, truth.json,
    preview.jpg and, for a recipe with `prompts`, prompts.jsonl (the unsigned prompt log; its
    session is the case's folder name)."""
    frames, truth_frames = replay_attacks(recipe, frames, truth_frames, times)
    os.makedirs(out_dir, exist_ok=True)
    video = os.path.join(out_dir, "video.mp4")
    encode(frames, times, recipe["vfr"]["rate"] if "vfr" in recipe else fps, video, portrait, recipe.get("crf", 28), recipe.get("vfr"))
    if recipe.get("motionSidecar"):
        write_motion(recipe, os.path.join(out_dir, "motion.csv"), times[-1])
    truth = {"schema": "liveness-generated-truth/1", "recipe": recipe, "width": out_w, "height": out_h,
             "frames": truth_frames, "blinks": recipe.get("blinks", [])}
    log_path = os.path.join(out_dir, "prompts.jsonl")
    if "prompts" in recipe:
        session = os.path.basename(os.path.normpath(out_dir))
        truth["prompts"] = prompted.truth(recipe, answers, times, session)
        with open(log_path, "w") as fh:
            fh.write(prompted.log_body(recipe, session))
    elif os.path.exists(log_path):
        os.remove(log_path)  # a recipe that no longer has prompts: no stale log makes it prompted
    with open(os.path.join(out_dir, "truth.json"), "w") as fh:
        json.dump(truth, fh, separators=(",", ":"))
    # A look at the case: its first frame and its most turned / most closed frame.
    pick = max(range(len(truth_frames)), key=lambda k: abs(truth_frames[k]["yaw"]) + 40 * truth_frames[k]["closure"] + abs(truth_frames[k]["cameraPan"]) + abs(truth_frames[k]["cameraRoll"]))
    cv2.imwrite(os.path.join(out_dir, "preview.jpg"), np.hstack([frames[0], frames[pick]]))
    return video


def replay_attacks(recipe, frames, truth_frames, times):
    """Frozen, looped and slideshow input, made from the rendered live frames as a virtual camera
    would: `freeze` {at}: from the first frame at or after `at` seconds every frame is that frame
    again (a stuck decoder, an injected still); `loop` {from, to, at}: from `at` seconds on, the
    frames of [from, to) are played again and again (a recording looped to look alive);
    `slideshow` {photos, holdSeconds, noise}: the frames at the `photos` times (seconds), each
    held for `holdSeconds` in turn (the last to the end), with fresh sensor noise of `noise` grey
    levels (standard deviation, seeded) on every frame: photos of a live person shown one after
    the other. Each replayed frame's truth is its source frame's, with its own index and time and
    `sourceFrame` naming the frame it repeats."""
    freeze, loop, slideshow = recipe.get("freeze"), recipe.get("loop"), recipe.get("slideshow")
    if not freeze and not loop and not slideshow:
        return frames, truth_frames
    first = lambda s: next(i for i, t in enumerate(times) if t >= s - 1e-9)
    source = list(range(len(frames)))
    if freeze:
        k = first(freeze["at"])
        source = [i if i < k else k for i in source]
    if loop:
        a, b, c = first(loop["from"]), first(loop["to"]), first(loop["at"])
        source = [i if i < c else a + (i - c) % (b - a) for i in source]
    if slideshow:
        hold = slideshow.get("holdSeconds", 1.0)
        photos = [first(p) for p in slideshow["photos"]]
        source = [photos[min(int(times[i] / hold + 1e-9), len(photos) - 1)] for i in range(len(frames))]
    out_frames = [frames[k] for k in source]
    if slideshow and slideshow.get("noise"):
        rng = np.random.default_rng(recipe.get("seed", 7) + 101)
        out_frames = [np.clip(f.astype(np.float32) + rng.normal(0, slideshow["noise"], f.shape), 0, 255).astype(np.uint8)
                      for f in out_frames]
    out_truth = []
    for i, k in enumerate(source):
        row = dict(truth_frames[k])
        row["i"], row["t"] = i, truth_frames[i]["t"]
        if k != i:
            row["sourceFrame"] = k
            row["cameraDegPerSec"] = 0.0
        out_truth.append(row)
    return out_frames, out_truth


def paste_second_face(canvas, scene, spec):
    """A second, smaller person: the face region mirrored, scaled, feathered into the scene."""
    pts = scene.landmarks
    x0, y0 = pts[:, 0].min(), pts[:, 1].min()
    x1, y1 = pts[:, 0].max(), pts[:, 1].max()
    mx, my = 0.45 * (x1 - x0), 0.6 * (y1 - y0)
    x0, y0, x1, y1 = int(x0 - mx), int(y0 - my), int(x1 + mx), int(y1 + 0.3 * my)
    crop = cv2.flip(scene.photo[y0:y1, x0:x1], 1)
    s = spec.get("scale", 0.85)
    crop = cv2.resize(crop, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
    h, w = crop.shape[:2]
    mask = np.zeros((h, w), np.float32)
    cv2.ellipse(mask, (w // 2, h // 2), (int(w * 0.42), int(h * 0.46)), 0, 0, 360, 1.0, -1)
    mask = cv2.GaussianBlur(mask, (0, 0), 6)[..., None]
    out = canvas.copy()
    cx = int(scene.anchor[0] + spec.get("dx", 1.9) * scene.face_width)
    cy = int(scene.anchor[1] + spec.get("dy", 0.1) * scene.face_width)
    ys, xs = cy - h // 2, cx - w // 2
    region = out[ys:ys + h, xs:xs + w].astype(np.float32)
    out[ys:ys + h, xs:xs + w] = (mask * crop + (1 - mask) * region).astype(np.uint8)
    return out


def render_held_photo(canvas, A, out_w, out_h, K, background, spec, t, rng):
    """The printed portrait (the still frame with a white border), or a phone screen showing it
    (`bezel`), as a plane held 35 cm away, tilting and rotating with the hand, over a still
    textured background. The face on it may blink (the recipe's `blinks`: a screen replaying a
    blinking face). `curvature` bends the print about its vertical axis into a cylinder of
    radius 1/curvature print widths (a photo that is not quite flat)."""
    pw, ph = out_w, out_h
    print_img = cv2.warpAffine(canvas, A[:2], (pw, ph), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REFLECT)
    bezel = spec.get("bezel")
    if bezel:
        # A screen: slightly blue and bright, with a row pattern, inside a black bezel.
        screen = print_img.astype(np.float32) * np.array([1.04, 0.98, 0.92]) + 10
        screen[::3] *= 0.9
        print_img = np.clip(screen, 0, 255).astype(np.uint8)
        b = int(bezel.get("width", 0.06) * pw)
        print_img = cv2.copyMakeBorder(print_img, b, b, b, b, cv2.BORDER_CONSTANT, value=(18, 18, 18))
    else:
        print_img = cv2.copyMakeBorder(print_img, 18, 18, 18, 18, cv2.BORDER_CONSTANT, value=(235, 235, 235))
    ph2, pw2 = print_img.shape[:2]
    size_mm = spec.get("widthFraction", 0.8)
    ay = math.radians(spec.get("tiltY", 15) * math.sin(2 * math.pi * t / spec.get("periodY", 2.2)))
    ax = math.radians(spec.get("tiltX", 8) * math.sin(2 * math.pi * t / spec.get("periodX", 1.7) + 0.7))
    az = math.radians(spec.get("roll", 6) * math.sin(2 * math.pi * t / spec.get("periodZ", 2.9) + 1.3))
    r = rotation_matrix(math.degrees(ay), math.degrees(ax), math.degrees(az))
    dist = K[0, 0] / size_mm  # so that the print's width in the image is widthFraction of the frame
    jitter = np.array([3 * math.sin(7 * t), 2 * math.sin(5.3 * t + 1), 0.0])
    half_h = 0.5 * ph2 / pw2
    curvature = spec.get("curvature", 0.0)
    strips = 24 if curvature else 1
    frame = background.copy()
    for k in range(strips):
        # Each strip of the print is a plane: a flat print is one strip, a bent one many,
        # their corners on a cylinder (x along the arc, depth towards the camera).
        u0, u1 = k / strips, (k + 1) / strips
        corners = []
        for u, v in ((u0, -half_h), (u1, -half_h), (u1, half_h), (u0, half_h)):
            s_arc = (u - 0.5)
            if curvature:
                x = math.sin(s_arc * curvature) / curvature
                z = (math.cos(s_arc * curvature) - 1) / curvature
            else:
                x, z = s_arc, 0.0
            corners.append([x, v, -z])  # the bulge faces the camera
        cam = (r @ (np.array(corners) * out_w).T).T + np.array([0, 0, dist]) + jitter
        proj = (K @ cam.T).T
        dst = (proj[:, :2] / proj[:, 2:3]).astype(np.float32)
        x0, x1 = u0 * pw2, u1 * pw2
        src = np.array([[x0, 0], [x1, 0], [x1, ph2], [x0, ph2]], dtype=np.float32)
        H = cv2.getPerspectiveTransform(src, dst)
        warped = cv2.warpPerspective(print_img, H, (out_w, out_h), flags=cv2.INTER_LINEAR)
        # The strip's own footprint (one pixel wider, so strips leave no seams).
        footprint = np.zeros((ph2, pw2), np.uint8)
        footprint[:, max(0, int(x0) - 1):min(pw2, int(math.ceil(x1)) + 1)] = 255
        mask = cv2.warpPerspective(footprint, H, (out_w, out_h))
        frame = np.where(mask[..., None] > 127, warped, frame)
    # Sheen and print noise, then a low-quality JPEG (the photo of a photo).
    frame = np.clip(frame.astype(np.float32) * 0.92 + 12 + rng.normal(0, 4, frame.shape), 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, spec.get("jpegQuality", 35)])
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def degrade(frame, recipe, rng):
    light = recipe.get("light")
    if light:
        f = frame.astype(np.float32) / 255.0
        frame = np.clip(255 * light * np.power(f, 1.2), 0, 255).astype(np.uint8)
    blur = recipe.get("blur")
    if blur:
        frame = cv2.GaussianBlur(frame, (0, 0), blur)
    noise = recipe.get("noise")
    if noise:
        frame = np.clip(frame.astype(np.float32) + rng.normal(0, noise, frame.shape), 0, 255).astype(np.uint8)
    return frame


def encode(frames, times, fps, path, portrait, crf, vfr):
    h, w = frames[0].shape[:2]
    common = ["-c:v", "libx264", "-preset", "veryfast", "-crf", str(crf), "-pix_fmt", "yuv420p",
              "-threads", "1", "-x264-params", "threads=1:log-level=error", "-an"]
    if portrait:
        # Stored sideways, shown upright: the frames are kept rotated 90° counter-clockwise and
        # the stream says "rotate 90° clockwise to display", as a phone held upright writes it.
        frames = [cv2.rotate(f, cv2.ROTATE_90_COUNTERCLOCKWISE) for f in frames]
        h, w = w, h
    tmp = path + ".part.mp4"
    if True:
        cmd = ["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgr24", "-s", "%dx%d" % (w, h),
               "-r", str(fps), "-i", "-"] + common + (
            ["-vf", "settb=1/90000,setpts='(N/%s+%s*sin(2.3*N))/TB'" % (vfr["rate"], vfr["jitter"]), "-vsync", "passthrough", "-enc_time_base", "1:90000",
             "-video_track_timescale", "90000"] if vfr else ["-r", str(fps)]) + [tmp]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE)
        for fr in frames:
            proc.stdin.write(np.ascontiguousarray(fr).tobytes())
        proc.stdin.close()
        if proc.wait() != 0:
            raise RuntimeError("ffmpeg failed for " + path)
    if portrait:
        # ffmpeg 5.1 writes the rotation only when remuxing (stream copy). Its "rotate" tag is
        # counter-clockwise: rotate=270 writes the display matrix that turns the frames 90°
        # clockwise (ffprobe: rotation=-90), the one that shows counter-clockwise frames upright.
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", tmp, "-c", "copy", "-metadata:s:v:0", "rotate=270", path + ".rot.mp4"], check=True)
        os.replace(path + ".rot.mp4", tmp)
    os.replace(tmp, path)


def write_motion(recipe, path, end):
    """Gyroscope samples at 200 Hz (CSV t,x,y,z; rad/s; seconds on the video clock), the exact
    angular velocity of the recipe's camera (pan about y, tilt about x, roll about z)."""
    cam = recipe.get("camera", {})
    rows = ["t,x,y,z"]
    dt = 0.005
    n = int(end / dt) + 2
    for k in range(n):
        t = k * dt
        rates = []
        for axis in ("tilt", "pan", "roll"):
            a = piecewise(cam.get(axis, []), t - dt / 2)
            b = piecewise(cam.get(axis, []), t + dt / 2)
            rates.append(math.radians((b - a) / dt))
        rows.append("%.4f,%.6f,%.6f,%.6f" % (t, rates[0], rates[1], rates[2]))
    with open(path, "w") as fh:
        fh.write("\n".join(rows) + "\n")
