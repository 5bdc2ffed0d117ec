"""Recaptured sessions: a live generated session (the 3D head turning and blinking, as the live
cases render it) or the still portrait, shown on a surface (a phone screen, a monitor, a print)
that is itself filmed by a camera: the surface is a textured plane in 3D (bezel, phone body,
taskbar, paper border), placed and moved with a hand's jitter, projected with the camera the
engine assumes (f = the frame's longer side) by a homography (cv2.warpPerspective) over a
synthetic room. Screens get their tint, a pixel grid beating with the camera's sampling
(moire) and glare.

The recipe's `recapture` block describes the surface (docs/generator.md, "Recaptured
sessions"); the recipe's `yaw`, `blinks`, `faceFraction`, `centerY`, `offsetX`/`offsetY` and
`sway` describe the session shown on it (a frame of `contentSize`), `size` the filmed frame.
"""
import math

import cv2
import numpy as np

from .render import Scene, blink_closure, piecewise, rotation_matrix, angle_between, sway_offsets


def smooth_noise(seed, axes, hz=(0.3, 1.4), tremor=0.08):
    """Smooth seeded hand motion: per axis a sum of four sinusoids at frequencies in `hz` plus a
    small tremor (8-10 Hz, `tremor` of the amplitude), normalised to peak at about 1. Returns
    f(t) -> array of `axes` values. Its own generator, so the case's other randomness is unchanged."""
    rng = np.random.default_rng(seed + 4241)
    params = []
    for _ in range(axes):
        freqs = np.concatenate([rng.uniform(hz[0], hz[1], 4), rng.uniform(8, 10, 1)])
        phases = rng.uniform(0, 2 * math.pi, 5)
        weights = rng.uniform(0.5, 1.0, 5)
        weights[:4] /= weights[:4].sum()
        weights[4] = tremor
        params.append((freqs, phases, weights))

    def value(t):
        return np.array([float(np.sum(w * np.sin(2 * math.pi * f * t + p))) for f, p, w in params])
    return value


def room_background(w, h, rng, desk_from=None):
    """A synthetic room, not the portrait: a wall with a lighting gradient and a low-frequency
    mottle, a few soft-edged shapes (frames, a shelf, a lamp), optionally a wooden desk from
    `desk_from` (fraction of the height) down, and fine sensor-like noise."""
    wall = np.array([rng.uniform(150, 200), rng.uniform(165, 210), rng.uniform(175, 220)])  # BGR, warm
    ys = np.linspace(0, 1, h)[:, None, None]
    xs = np.linspace(0, 1, w)[None, :, None]
    light = 1.05 - 0.25 * ys - 0.15 * (xs - rng.uniform(0.2, 0.8)) ** 2
    img = wall[None, None, :] * light
    mottle = cv2.resize(rng.normal(0, 10, (h // 48 + 2, w // 48 + 2)), (w, h), interpolation=cv2.INTER_CUBIC)
    img = img + mottle[..., None]
    for _ in range(7):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, int(h * 0.8)))
        bw, bh = int(rng.integers(w // 14, w // 5)), int(rng.integers(h // 12, h // 4))
        color = 0.4 * wall + 0.6 * rng.uniform(30, 230, 3)  # frames, posters, a shelf: muted
        layer = np.zeros((h, w), np.float32)
        cv2.rectangle(layer, (x, y), (x + bw, y + bh), 1.0, -1)
        layer = cv2.GaussianBlur(layer, (0, 0), 1.5)[..., None]
        img = img * (1 - layer) + color * layer
    for _ in range(2):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, int(h * 0.7)))
        r = int(rng.integers(h // 30, h // 10))
        layer = np.zeros((h, w), np.float32)
        cv2.circle(layer, (x, y), r, 1.0, -1, lineType=cv2.LINE_AA)
        img = img * (1 - layer[..., None]) + (0.4 * wall + 0.6 * rng.uniform(60, 240, 3)) * layer[..., None]
    if desk_from is not None:
        y0 = int(desk_from * h)
        rows = h - y0
        wood = np.array([55.0, 85.0, 120.0])
        grain = cv2.resize(rng.normal(0, 1, (max(2, rows // 3), 8)), (w, rows), interpolation=cv2.INTER_CUBIC)
        desk = wood[None, None, :] * (0.85 + 0.1 * np.linspace(0, 1, rows)[:, None, None]) + 12 * grain[..., None]
        img[y0:] = desk
        img[y0:y0 + 3] *= 0.7  # the desk's front edge in shadow
    img = img + rng.normal(0, 3, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def rounded_mask(w, h, radius):
    """An antialiased rounded rectangle of w x h (0..1, float32)."""
    m = np.zeros((h, w), np.uint8)
    r = int(radius)
    if r <= 0:
        m[:] = 255
    else:
        cv2.rectangle(m, (r, 0), (w - 1 - r, h - 1), 255, -1)
        cv2.rectangle(m, (0, r), (w - 1, h - 1 - r), 255, -1)
        for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
            cv2.circle(m, (cx, cy), r, 255, -1, lineType=cv2.LINE_AA)
    return m.astype(np.float32) / 255.0


def screen_look(img):
    """A screen's emitted picture: slightly blue and bright, contrast a little compressed."""
    s = img.astype(np.float32) * np.array([1.04, 0.98, 0.92], np.float32) * 0.9 + 18
    return np.clip(s, 0, 255).astype(np.uint8)


class Surface:
    """The surface's texture (its own pixels), alpha footprint, and where the shown session's
    frame sits on it (`content_origin`, top-left in texture pixels, and the `screen` rectangle
    x0, y0, x1, y1 that glare and moire cover)."""

    def __init__(self, spec, cw, ch, rng):
        kind = spec.get("surface", "phone")
        self.kind = kind
        if kind == "phone":
            bezel = int(round(spec.get("bezel", 0.06) * cw))
            ends = int(round(spec.get("bezelEnds", spec.get("bezel", 0.06)) * cw))
            body = int(round(spec.get("body", 0.03) * cw))
            sw, sh = cw, ch
            tw, th = sw + 2 * (bezel + body), sh + 2 * (ends + body)
            tex = np.zeros((th, tw, 3), np.float32)
            # The body: a light metal rim with a vertical sheen, the black glass inside it.
            body_color = np.array(spec.get("bodyColor", [165, 168, 172]), np.float32)
            sheen = 0.85 + 0.3 * np.abs(np.sin(np.linspace(0, math.pi, tw)))[None, :, None]
            tex[:] = body_color * sheen
            glass = rounded_mask(tw - 2 * body, th - 2 * body, 0.1 * cw)[..., None]
            inner = tex[body:th - body, body:tw - body]
            tex[body:th - body, body:tw - body] = inner * (1 - glass) + 16 * glass
            # A front camera dot in the top bezel.
            cv2.circle(tex, (tw // 2, body + ends // 2), max(2, ends // 6), (40, 34, 30), -1, lineType=cv2.LINE_AA)
            self.alpha = rounded_mask(tw, th, 0.1 * cw + body)
            self.screen = (body + bezel, body + ends, body + bezel + sw, body + ends + sh)
            self.content_origin = (self.screen[0], self.screen[1])
        elif kind == "monitor":
            sw, sh = spec.get("screenSize", [1280, 720])
            bezel = int(round(spec.get("bezel", 0.025) * sw))
            chin = int(round(spec.get("bezelEnds", 0.05) * sw))
            stand_h = int(round(spec.get("stand", 0.12) * sh))
            tw, th = sw + 2 * bezel, sh + bezel + chin + stand_h
            tex = np.zeros((th, tw, 3), np.float32)
            tex[:] = (26, 26, 28)
            # A lighter rim on the bezel's outer edge, the stand's neck below the chin.
            cv2.rectangle(tex, (0, 0), (tw - 1, th - stand_h - 1), (70, 70, 74), 2)
            alpha = np.zeros((th, tw), np.float32)
            alpha[:th - stand_h] = rounded_mask(tw, th - stand_h, 6)
            nx0, nx1 = int(tw * 0.44), int(tw * 0.56)
            alpha[th - stand_h:, nx0:nx1] = 1.0
            tex[th - stand_h:, nx0:nx1] = np.linspace(60, 35, stand_h)[:, None, None]
            self.alpha = alpha
            # The desktop: black pillarbox bars around the full-height video, a taskbar below.
            screen = np.zeros((sh, sw, 3), np.float32)
            bar = int(round(spec.get("taskbar", 0.05) * sh))
            screen[sh - bar:] = (48, 44, 40)
            for k in range(6):
                x = int(sw * 0.35) + k * int(bar * 1.3)
                color = (200, 120, 40) if k == 0 else tuple(float(v) for v in rng.uniform(80, 230, 3))
                cv2.rectangle(screen, (x, sh - bar + bar // 5), (x + int(bar * 0.6), sh - bar // 5), color, -1)
            cv2.rectangle(screen, (sw - int(bar * 2.2), sh - bar + bar // 3), (sw - bar // 3, sh - bar // 3), (210, 210, 210), -1)
            tex[bezel:bezel + sh, bezel:bezel + sw] = screen
            self.screen = (bezel, bezel, bezel + sw, bezel + sh)
            # The content keeps its aspect at the screen's height above the taskbar, centred.
            self.content_scale = (sh - bar) / ch
            self.content_origin = (bezel + (sw - cw * self.content_scale) / 2, bezel)
        elif kind == "print":
            border = int(round(spec.get("border", 0.08) * cw))
            tw, th = cw + 2 * border, ch + 2 * border
            tex = np.zeros((th, tw, 3), np.float32)
            tex[:] = spec.get("paperColor", [232, 236, 238])
            self.alpha = rounded_mask(tw, th, 2)
            self.screen = (border, border, border + cw, border + ch)
            self.content_origin = (border, border)
        else:
            raise ValueError("recapture.surface: phone, monitor or print, not %r" % kind)
        if not hasattr(self, "content_scale"):
            self.content_scale = 1.0
        self.texture = tex
        self.size = (tex.shape[1], tex.shape[0])

    def content_to_texture(self):
        s = self.content_scale
        return np.array([[s, 0, self.content_origin[0]], [0, s, self.content_origin[1]], [0, 0, 1]])

    def prepare(self, aa_sigma):
        """Blurs the still parts once for the surface's scale in the frame (`aa_sigma`, texture
        pixels: a camera integrates over its pixels), with the panel's sub-pixel rows first."""
        self.aa_sigma = aa_sigma
        if self.kind != "print":
            sx0, sy0, sx1, sy1 = self.screen
            self.texture[sy0:sy1:3, sx0:sx1] *= 0.94
        if aa_sigma > 0.05:
            self.texture = cv2.GaussianBlur(self.texture, (0, 0), aa_sigma)

    def compose(self, content):
        """The texture with the session's frame on it (screens: their look and sub-pixel rows;
        prints: matte ink), blurred like the rest."""
        if self.kind == "print":
            shown = content.astype(np.float32) * 0.88 + 14  # ink on paper: lower contrast
        else:
            shown = screen_look(content).astype(np.float32)
        if self.content_scale != 1.0:
            h, w = content.shape[:2]
            shown = cv2.resize(shown, (int(round(w * self.content_scale)), int(round(h * self.content_scale))), interpolation=cv2.INTER_AREA)
        x0, y0 = int(round(self.content_origin[0])), int(round(self.content_origin[1]))
        if self.kind != "print":
            shown[(self.screen[1] - y0) % 3::3] *= 0.94
        if self.aa_sigma > 0.05:
            shown = cv2.GaussianBlur(shown, (0, 0), self.aa_sigma)
        tex = self.texture.copy()
        h, w = shown.shape[:2]
        tex[y0:y0 + h, x0:x0 + w] = shown
        return tex


def thumb_polygon(surface):
    """A thumb over the surface's left edge, lower third, in texture pixels: it comes from
    outside the surface and ends on the bezel or the paper border, short of the picture."""
    tw, th = surface.size
    m = surface.screen[0]
    cx, cy = -0.5 * m - 0.02 * tw, 0.68 * th
    ax, ay = 1.4 * m + 0.02 * tw, 0.06 * th
    return np.array([[cx + ax * math.cos(a), cy + ay * math.sin(a)] for a in np.linspace(0, 2 * math.pi, 32, endpoint=False)])


def draw_thumb(frame, poly):
    """Paints the thumb (its polygon in frame pixels: skin, soft-edged, lit from above) in place."""
    h, w = frame.shape[:2]
    x0, y0 = np.maximum(np.floor(poly.min(axis=0)).astype(int) - 12, 0)
    x1, y1 = np.minimum(np.ceil(poly.max(axis=0)).astype(int) + 12, [w, h])
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [np.round((poly - [x0, y0]) * 16).astype(np.int32)], 255, lineType=cv2.LINE_AA, shift=4)
    a = cv2.GaussianBlur(mask, (0, 0), 1.2).astype(np.float32)[..., None] / 255.0
    shade = 0.8 + 0.2 * cv2.GaussianBlur(mask, (0, 0), 5).astype(np.float32)[..., None] / 255.0
    skin = np.array([120, 150, 200], np.float32)
    roi = frame[y0:y1, x0:x1]
    roi[:] = roi * (1 - a) + skin * shade * a


def render_recaptured(recipe, photo, landmarks, times, rng, out_w, out_h, seed):
    """Frames and per-frame truth of a recaptured session (the recipe's `recapture` block)."""
    spec = recipe["recapture"]
    kind = spec.get("surface", "phone")
    cw, ch = spec.get("contentSize", [360, 640])
    face_fraction = recipe.get("faceFraction", 0.45)
    # The shown session: its own camera (f = its longer side), its own framing.
    scene = Scene(photo, landmarks, (cw, ch), face_fraction)
    sway_px = recipe.get("sway", 0.0 if kind == "print" else 0.8)
    sway = sway_offsets(seed, sway_px) if sway_px > 0 else None
    surface = Surface(spec, cw, ch, rng)
    tw, th = surface.size
    background = room_background(out_w, out_h, rng, spec.get("deskFrom"))
    background_f = background.astype(np.float32)

    f = float(max(out_w, out_h))
    K = np.array([[f, 0, out_w / 2], [0, f, out_h / 2], [0, 0, 1]])
    Kinv = np.linalg.inv(K)
    # Distance (texture pixels as the unit) at which the surface, facing the camera, is
    # `heightFraction` of the frame's height tall.
    dist = f * th / (spec.get("heightFraction", 0.55) * out_h)
    center = spec.get("center", [0.5, 0.5])
    jit = spec.get("jitter", {})
    hand = smooth_noise(seed, 5, tuple(jit.get("hz", [0.3, 1.4])))
    shake_deg = spec.get("shake", 0.0)
    shake = smooth_noise(seed + 1, 3, (0.4, 1.6), 0.15) if shake_deg else None
    moire = spec.get("moire")
    glare = spec.get("glare", 0.0)
    # Screen coordinates as images (for the moire: exact under a linear warp), the screen's
    # footprint, and the glare: a soft reflection of a window on the glass, upper right.
    sx0, sy0, sx1, sy1 = surface.screen
    screen_layers = np.zeros((th, tw, 4), np.float32)  # u, v, screen footprint, glare
    screen_layers[..., 0], screen_layers[..., 1] = np.meshgrid(np.arange(tw, dtype=np.float32), np.arange(th, dtype=np.float32))
    screen_layers[sy0:sy1, sx0:sx1, 2] = 1
    if glare:
        small = 8  # blurred at 1/8 scale: the same soft blob, far cheaper
        gl = np.zeros((th // small + 1, tw // small + 1), np.float32)
        cv2.ellipse(gl, (int((sx0 + 0.7 * (sx1 - sx0)) / small), int((sy0 + 0.25 * (sy1 - sy0)) / small)),
                    (int(0.22 * (sx1 - sx0) / small), int(0.18 * (sy1 - sy0) / small)), -20, 0, 360, 1.0, -1)
        gl = cv2.GaussianBlur(gl, (0, 0), 0.08 * (sx1 - sx0) / small)
        screen_layers[..., 3] = cv2.resize(gl, (tw, th), interpolation=cv2.INTER_LINEAR)
    if noise := spec.get("noise", 2.5):
        cv2.setRNGSeed(seed + 17)  # cv2.randn: seeded, and far faster than numpy's normal on 720p
    # Anti-aliasing of the texture for its scale in the frame (a camera integrates over its pixels).
    scale = spec.get("heightFraction", 0.55) * out_h / th
    surface.prepare(0.5 * math.sqrt(max(0.0, 1 / scale ** 2 - 1)) if scale < 1 else 0.0)
    alpha_u8 = np.round(surface.alpha * 255).astype(np.uint8)
    outline = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float64)
    thumb = thumb_polygon(surface)

    frames, truth = [], []
    cache = {}
    prev_r, prev_t = None, None
    for i, t in enumerate(times):
        yaw = piecewise(recipe.get("yaw", []), t)
        closure = blink_closure(recipe.get("blinks", []), t)
        ox = piecewise(recipe.get("offsetX", []), t)
        oy = piecewise(recipe.get("offsetY", []), t)
        if sway:
            dx, dy = sway(t)
            ox += dx / cw
            oy += dy / ch
        key = (round(yaw, 4), round(closure, 4))
        if key not in cache:
            cache.clear()
            cache[key] = scene.warp.render(yaw, closure, closure)
        A = scene.window(cw, ch, face_fraction, (0.5 + ox, recipe.get("centerY", 0.42) + oy))
        content = cv2.warpAffine(cache[key], A[:2], (cw, ch), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REFLECT)
        tex = surface.compose(content)

        # The surface's pose: a base orientation plus the hand's smooth jitter.
        j = hand(t)
        move = jit.get("move", 0.0)
        rs = rotation_matrix(spec.get("yaw", 0.0) + jit.get("tilt", 0.0) * j[3],
                             spec.get("tilt", 0.0) + jit.get("tilt", 0.0) * j[4],
                             spec.get("roll", 0.0) + jit.get("roll", 0.0) * j[2])
        cx = (center[0] - 0.5) * out_w + move * out_h * j[0]
        cy = (center[1] - 0.5) * out_h + move * out_h * j[1]
        C = np.array([cx * dist / f, cy * dist / f, dist])
        T = C - rs[:, 0] * tw / 2 - rs[:, 1] * th / 2
        H = K @ np.column_stack([rs[:, 0], rs[:, 1], T])
        H = H / H[2, 2]

        # Only the surface's bounding box in the frame is warped and blended.
        q = np.hstack([outline, np.ones((4, 1))]) @ H.T
        q = q[:, :2] / q[:, 2:3]
        x0, y0 = np.clip(np.floor(q.min(axis=0)).astype(int) - 2, 0, [out_w, out_h])
        x1, y1 = np.clip(np.ceil(q.max(axis=0)).astype(int) + 2, 0, [out_w, out_h])
        frame = background_f.copy()
        if x1 > x0 and y1 > y0:
            Hr = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ H
            box = (int(x1 - x0), int(y1 - y0))
            warped = cv2.warpPerspective(tex, Hr, box, flags=cv2.INTER_LINEAR)
            alpha = cv2.warpPerspective(alpha_u8, Hr, box, flags=cv2.INTER_LINEAR).astype(np.float32) * np.float32(1 / 255)
            frame[y0:y1, x0:x1] = cv2.blendLinear(warped, frame[y0:y1, x0:x1], alpha, 1 - alpha)
        roi = frame[y0:y1, x0:x1]
        if kind != "print" and (moire or glare) and x1 > x0 and y1 > y0:
            layers = cv2.warpPerspective(screen_layers, Hr, box, flags=cv2.INTER_LINEAR)
            u, v, smask, gl = (layers[..., k] for k in range(4))
            if moire:
                # A fine grating (the panel's pixel grid, period in screen pixels) sampled at the
                # camera's pixels: where it lands near one camera pixel per period it beats into
                # broad bands that bend with the perspective.
                k = np.float32(2 * math.pi / moire.get("period", 1.5))
                extra = np.sin(u * k)
                extra += np.sin(v * k)
                extra *= np.float32(0.5 * moire.get("amplitude", 4.0))
            else:
                extra = np.zeros_like(smask)
            if glare:
                extra += np.float32(glare) * (gl + np.float32(0.15))
            extra *= smask
            roi += extra[..., None]
        if spec.get("thumb"):
            p = np.hstack([thumb, np.ones((len(thumb), 1))]) @ H.T
            draw_thumb(frame, p[:, :2] / p[:, 2:3])
        if noise:
            # The filming camera's sensor noise (float32: a 720p frame's worth per frame is costly).
            grain = np.empty(frame.shape, np.float32)
            cv2.randn(grain, 0.0, float(noise))
            frame += grain
        frame = np.clip(frame, 0, 255).astype(np.uint8)

        # The filming camera: still (a webcam) or hand-held (`shake`, degrees).
        pan = tilt = roll = 0.0
        if shake:
            s = shake(t) * shake_deg
            pan, tilt, roll = float(s[0]), float(s[1]), float(1.5 * s[2])
            r = rotation_matrix(pan, tilt, roll)
            S = K @ r.T @ Kinv
            frame = cv2.warpPerspective(frame, S, (out_w, out_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        else:
            r = np.eye(3)
            S = np.eye(3)
        speed = 0.0 if prev_r is None else angle_between(prev_r, r) / (t - prev_t)
        prev_r, prev_t = r, t
        frames.append(frame)

        # Truth: the shown head's yaw and closure, where its face anchor and eyes land in the
        # frame, and the surface's outline (its outer corners, normalised).
        M = S @ H @ surface.content_to_texture() @ A
        def proj(x, y):
            q = M @ np.array([x, y, 1.0])
            return q[:2] / q[2]
        lm = scene.landmarks
        anchor = proj(*scene.anchor)
        eye_l, eye_r = proj(*lm[36:42].mean(axis=0)), proj(*lm[42:48].mean(axis=0))
        corners = []
        for x, y in ((0, 0), (tw, 0), (tw, th), (0, th)):
            q = S @ H @ np.array([x, y, 1.0])
            corners.append([round(q[0] / q[2] / out_w, 4), round(q[1] / q[2] / out_h, 4)])
        truth.append({"i": i, "t": round(t, 5), "yaw": round(yaw, 3), "yawCamera": None, "closure": round(closure, 3),
                      "cameraDegPerSec": round(speed, 3), "cameraPan": round(pan, 3), "cameraRoll": round(roll, 3),
                      "faceCenter": [round(anchor[0] / out_w, 4), round(anchor[1] / out_h, 4)],
                      "eyeDistancePx": round(float(np.linalg.norm(eye_r - eye_l)), 2),
                      "surface": corners})
    return frames, truth
