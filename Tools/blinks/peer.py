#!/usr/bin/env python3
"""The independent peer of Tools/measure_blinks.py: MediaPipe Face Mesh (PyPI `mediapipe==0.10.14`,
its models inside the wheel) run on every frame of a video, writing each eye's aspect ratio.

Runs in the measurement venv, never in the engine (Tools/setup.sh --measure makes it):

    /work/.venvs/mediapipe/bin/python Tools/blinks/peer.py VIDEO OUT.json

Frames are decoded with the venv's OpenCV (opencv-contrib-python, a dependency of mediapipe), in
order, every frame; the index is the frame's position in the stream, as in the engine's trace.
Face Mesh runs in video mode (static_image_mode=False: it tracks from frame to frame, as a camera
app would), one face, refined landmarks (iris), detection and tracking confidence 0.5.

The eye aspect ratio of each eye is the usual six-point one on Face Mesh's eyelid landmarks,
in pixels: (|p2-p6| + |p3-p5|) / (2 |p1-p4|), p1 and p4 the eye corners, p2/p3 upper lid,
p6/p5 lower lid. "left" is the SUBJECT's left eye (image right on an unmirrored video), as in the
engine's trace.

Output: JSON {"peer": ..., "frames": [[index, seconds, ear_left, ear_right, eye_box] ...]} with
ear_* null without a face; eye_box [x0, y0, x1, y1] in pixels spans both eyes (for crops).
"""
import json
import sys

import cv2
import mediapipe as mp

# Face Mesh indices: p1 (outer or inner corner), p2, p3 (upper lid), p4 (other corner), p5, p6 (lower lid).
SUBJECT_LEFT = (362, 385, 387, 263, 373, 380)
SUBJECT_RIGHT = (33, 160, 158, 133, 153, 144)


def ear(points, idx):
    p = [points[i] for i in idx]

    def d(a, b):
        return ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5

    width = d(p[0], p[3])
    if width <= 0:
        return None
    return (d(p[1], p[5]) + d(p[2], p[4])) / (2.0 * width)


def main():
    video, out = sys.argv[1], sys.argv[2]
    cap = cv2.VideoCapture(video)
    if not cap.isOpened():
        sys.exit("peer: cannot open %s" % video)
    mesh = mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1, refine_landmarks=True,
                                           min_detection_confidence=0.5, min_tracking_confidence=0.5)
    frames = []
    index = 0
    first = None
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        msec = cap.get(cv2.CAP_PROP_POS_MSEC)
        if first is None:
            first = msec
        h, w = bgr.shape[:2]
        result = mesh.process(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        row = [index, round((msec - first) / 1000.0, 6), None, None, None]
        if result.multi_face_landmarks:
            lm = result.multi_face_landmarks[0].landmark
            pts = {i: (lm[i].x * w, lm[i].y * h) for i in SUBJECT_LEFT + SUBJECT_RIGHT}
            row[2] = ear(pts, SUBJECT_LEFT)
            row[3] = ear(pts, SUBJECT_RIGHT)
            xs = [p[0] for p in pts.values()]
            ys = [p[1] for p in pts.values()]
            row[4] = [round(min(xs), 1), round(min(ys), 1), round(max(xs), 1), round(max(ys), 1)]
            row[2] = None if row[2] is None else round(row[2], 5)
            row[3] = None if row[3] is None else round(row[3], 5)
        frames.append(row)
        index += 1
    with open(out + ".part", "w") as fh:
        json.dump({"peer": "mediapipe %s Face Mesh (video mode, refine_landmarks)" % mp.__version__,
                   "size": [w if frames else 0, h if frames else 0], "frames": frames}, fh)
    import os
    os.replace(out + ".part", out)


if __name__ == "__main__":
    main()
