"""A generic 3D face for the 68 dlib landmarks, and the piecewise-affine warp that turns a
frontal photograph into the same face turned by a yaw angle, with the eyelids closed by a
fraction.

Depths are in millimetres, positive towards the camera, relative to the plane of the inner eye
corners. They are rough anthropometric values (nose tip ~30 mm in front of the eye corners,
outer eye corners ~8 mm behind the inner ones, jaw angle and ear region 45-70 mm behind), not a
scan of anyone. The head turns about a vertical axis through the neck, `PIVOT_DEPTH_MM` behind
the eye plane. Pixel scale comes from the photo: the eye-centre distance is taken as 63 mm.
"""
import numpy as np
import cv2

EYE_DISTANCE_MM = 63.0
PIVOT_DEPTH_MM = -85.0

# Depth per landmark (dlib 68-point order), mm.
_JAW = [-70, -60, -48, -36, -25, -14, -5, 2, 6, 2, -5, -14, -25, -36, -48, -60, -70]
_BROWS = [-14, -6, 0, 4, 5, 5, 4, 0, -6, -14]
_NOSE = [8, 14, 21, 28, 8, 11, 13, 11, 8]      # 27-30 bridge to tip, 31-35 nostrils
_EYE = [-8, -2, -1, 0, -1, -2]                    # 36-41 and 42-47 (outer, upper, upper, inner, lower, lower)
_EYE_R = [0, -1, -2, -8, -2, -1]                  # 42-47: inner, upper, upper, outer, lower, lower
_MOUTH = [2, 8, 12, 13, 12, 8, 2, 8, 12, 13, 12, 8,   # 48-59 outer lip
          4, 10, 11, 10, 4, 10, 11, 10]                # 60-67 inner lip
DEPTH_MM = np.array(_JAW + _BROWS + _NOSE + _EYE + _EYE_R + _MOUTH, dtype=np.float64)
assert DEPTH_MM.shape == (68,)


class FaceWarp:
    """Warps one source image (the photo, padded) so that its face looks turned and blinking.

    `landmarks` are the 68 points (x, y) in the source image's pixels, of a frontal face.
    """

    def __init__(self, image, landmarks, focal_px=None):
        """`focal_px`: the focal length, in source pixels, of the camera that sees the result
        (perspective; the principal point is taken at the face). None: orthographic."""
        self.image = image
        h, w = image.shape[:2]
        pts = np.asarray(landmarks, dtype=np.float64).reshape(68, 2)
        self.landmarks = pts
        left_eye = pts[36:42].mean(axis=0)
        right_eye = pts[42:48].mean(axis=0)
        self.eye_distance_px = float(np.linalg.norm(right_eye - left_eye))
        self.px_per_mm = self.eye_distance_px / EYE_DISTANCE_MM
        self.center = (left_eye + right_eye) / 2
        self.pivot_x = float(pts[27, 0])
        self.focal_px = focal_px
        self.principal = pts[[27, 28, 29, 30, 36, 39, 42, 45]].mean(axis=0)
        # Anchor rings: the head outline (hair, ears: on the pivot, so they only foreshorten), and
        # an outer ring and the image border that stay put (background, shoulders).
        face_w = pts[16, 0] - pts[0, 0]
        face_h = pts[8, 1] - pts[19, 1]
        cx, cy = self.pivot_x, float((pts[19, 1] + pts[8, 1]) / 2)
        ring, ring_z, outer = [], [], []
        for k in range(20):
            a = 2 * np.pi * k / 20
            ring.append((cx + 0.78 * face_w * np.cos(a), cy - 0.12 * face_h + 0.85 * face_h * np.sin(a)))
            ring_z.append(PIVOT_DEPTH_MM)
            outer.append((cx + 1.5 * face_w * np.cos(a), cy + 1.5 * face_h * np.sin(a)))
        border = []
        for fx in (0, 0.25, 0.5, 0.75, 1):
            for fy in (0, 0.25, 0.5, 0.75, 1):
                if fx in (0, 1) or fy in (0, 1):
                    border.append((fx * (w - 1), fy * (h - 1)))
        self.points = np.vstack([pts, np.array(ring), np.array(outer), np.array(border)])
        self.n_moving = 68 + len(ring)
        self.depth = np.concatenate([DEPTH_MM, np.array(ring_z)])
        self.triangles = _delaunay(self.points, w, h)
        # Paint order: far triangles first, so that the nose covers the cheek when turned.
        depth_all = np.concatenate([self.depth, np.full(len(outer) + len(border), -200.0)])
        order = np.argsort(depth_all[self.triangles].mean(axis=1), kind="stable")
        self.triangles = self.triangles[order]
        ys, xs = np.mgrid[0:h, 0:w]
        self.grid = np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)], axis=0).astype(np.float32)

    def target_points(self, yaw_degrees, closure_left=0.0, closure_right=0.0):
        """Where each anchor goes: yaw about the neck axis (orthographic), eyelids closed by a
        fraction (subject's left eye = landmarks 42-47, on the image's right)."""
        p = self.points.copy()
        t = np.radians(yaw_degrees)
        n = self.n_moving
        # Work in pixels at the eye plane: x across, z towards the camera (depth in mm * scale).
        z = (self.depth - PIVOT_DEPTH_MM) * self.px_per_mm
        if self.focal_px is None:
            x = self.points[:n, 0] - self.pivot_x
            # Positive yaw: the subject's own left, i.e. the nose moves to the image's right.
            p[:n, 0] = self.pivot_x + x * np.cos(t) + z * np.sin(t)
        else:
            # Perspective: back-project each anchor at its depth, rotate about the neck axis,
            # project again. The eye plane is at distance f (in eye-plane pixels) from the camera.
            f = self.focal_px
            cx, cy = self.principal
            zc = self.depth * self.px_per_mm            # towards the camera, from the eye plane
            scale = (f - zc) / f                        # image -> eye-plane pixels at that depth
            X = (self.points[:n, 0] - cx) * scale
            Y = (self.points[:n, 1] - cy) * scale
            px = self.pivot_x - cx
            zp = PIVOT_DEPTH_MM * self.px_per_mm
            Xr = px + (X - px) * np.cos(t) + (zc - zp) * np.sin(t)
            Zr = zp - (X - px) * np.sin(t) + (zc - zp) * np.cos(t)
            p[:n, 0] = cx + f * Xr / (f - Zr)
            p[:n, 1] = cy + f * Y / (f - Zr)
        for upper, lower, c in (((37, 41), (38, 40), closure_right), ((43, 47), (44, 46), closure_left)):
            for u, l in (upper, lower):
                p[u] = p[u] + c * (p[l] - p[u]) * 0.92
        return p

    def render(self, yaw_degrees, closure_left=0.0, closure_right=0.0):
        if abs(yaw_degrees) < 1e-6 and closure_left <= 0 and closure_right <= 0:
            return self.image.copy()
        dst = self.target_points(yaw_degrees, closure_left, closure_right)
        h, w = self.image.shape[:2]
        index = np.full((h, w), -1, dtype=np.int32)
        affines = np.zeros((len(self.triangles), 2, 3), dtype=np.float32)
        for i, tri in enumerate(self.triangles):
            d = dst[tri].astype(np.float32)
            s = self.points[tri].astype(np.float32)
            affines[i] = cv2.getAffineTransform(d, s)
            cv2.fillConvexPoly(index, np.round(d * 16).astype(np.int32), int(i), lineType=cv2.LINE_8, shift=4)
        missing = index < 0
        index[missing] = 0
        a = affines[index.ravel()]  # (N, 2, 3)
        g = self.grid
        map_x = (a[:, 0, 0] * g[0] + a[:, 0, 1] * g[1] + a[:, 0, 2]).reshape(h, w)
        map_y = (a[:, 1, 0] * g[0] + a[:, 1, 1] * g[1] + a[:, 1, 2]).reshape(h, w)
        map_x[missing] = g[0].reshape(h, w)[missing]
        map_y[missing] = g[1].reshape(h, w)[missing]
        return cv2.remap(self.image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def _delaunay(points, w, h):
    subdiv = cv2.Subdiv2D((-1, -1, w + 2, h + 2))
    lookup = {}
    for i, (x, y) in enumerate(points):
        x = float(min(max(x, 0), w - 1))
        y = float(min(max(y, 0), h - 1))
        lookup[(round(x, 3), round(y, 3))] = i
        subdiv.insert((x, y))
    tris = []
    for t in subdiv.getTriangleList():
        idx = []
        for k in range(3):
            key = (round(float(t[2 * k]), 3), round(float(t[2 * k + 1]), 3))
            if key not in lookup:
                break
            idx.append(lookup[key])
        if len(idx) == 3:
            tris.append(idx)
    return np.array(tris, dtype=np.int64)
