// Per-face measurements from the 68 landmarks: eye aspect ratio, face anchor, eye distance,
// head pose. Internal to the shim.
#pragma once
#include <opencv2/core.hpp>

namespace ft {

/// Eye aspect ratio (|p2-p6| + |p3-p5|) / (2 |p1-p4|) of the six landmarks starting at `first`
/// (36: the subject's right eye, 42: their left eye). `points` is x0,y0,x1,y1,... in pixels.
double eye_aspect_ratio(const double *points, int first);
/// The face anchor: mean of the nose bridge (27-30) and the four eye corners, pixels.
void face_anchor(const double *points, double *x, double *y);
/// Distance between the centres of the two eyes, pixels.
double eye_distance(const double *points);

struct Pose {
    /// Yaw against the camera's axes; yaw against the line of sight from the head's turning
    /// point (100 mm behind the nose tip) to the camera; pitch and roll against the camera's
    /// axes; RMS reprojection error in pixels.
    double yaw_degrees = 0, line_of_sight_yaw_degrees = 0, pitch_degrees = 0, roll_degrees = 0, error_px = 0;
};

/// solvePnP (SQPnP) of the rigid landmarks against a generic 3D face, with intrinsics derived
/// from the frame size (or the picture area within it). Stateless: each frame is solved on its own.
class PoseEstimator {
public:
    bool estimate(const double *points, int width, int height, Pose &pose) {
        return estimate(points, cv::Rect(0, 0, width, height), pose);
    }
    /// With the camera's picture occupying `area` of the frame (padding around it is no part of
    /// the camera's view): focal length its longer side, principal point its centre.
    bool estimate(const double *points, const cv::Rect &area, Pose &pose);
    void reset() {}
};

}  // namespace ft
