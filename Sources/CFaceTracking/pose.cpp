// Head pose from the rigid landmarks (OpenCV calib3d solvePnP) and the other per-face
// measurements taken from the 68 landmarks.
#include "pose.hpp"

#include <opencv2/calib3d.hpp>

#include <cmath>

#include "internal.hpp"

namespace ft {

// A generic face in millimetres, in a face frame whose axes match the camera's when the face
// looks straight into it: X towards the image's right (the subject's left), Y down, Z away from
// the camera. Origin at the nose tip (landmark 30); scaled so that the outer eye corners are
// 90 mm apart. Only rigid points: eye corners and nose (the mouth and jaw move when the subject
// talks or smiles, and would read as a turn).
// X and Y are where dlib's landmarks sit on real frontal faces: the mean over 353 frontal
// frames (nose tip within 3% of the eye span from the eyes' midpoint) of six real clips.
// Depths (Z): anthropometric values (outer eye corners 38 mm behind the nose tip, inner 28,
// nasion and alar bases 20, subnasale 15) scaled by 0.9. Reprojection error on 685 real
// frames is flat for scales 0.8-1.2, so real footage does not pin the depth down; the
// generated turns with exact truth do: at 1.0 the measured yaw ran 0.4-1.1° short of the
// truth and an 8.0° turn read as 7.2°; at 0.9 the bias is 0.0 ± 0.4° over the yaw cases
// and 7.0° vs 8.0° separate as they should; at 0.8 a 7.0° turn was credited.
static const int kPoseIndices[] = {27, 30, 31, 33, 35, 36, 39, 42, 45};
static const cv::Point3d kPoseModel[] = {
    {0.0, -33.6, 18.0},    // 27 nasion (top of the nose bridge)
    {0.0, 0.0, 0.0},       // 30 nose tip
    {-15.0, 13.8, 18.0},   // 31 right alar base (subject's right)
    {0.0, 17.1, 13.5},     // 33 subnasale
    {15.0, 13.8, 18.0},    // 35 left alar base
    {-45.0, -26.3, 34.2},  // 36 right eye, outer corner
    {-19.6, -26.6, 25.2},  // 39 right eye, inner corner
    {19.6, -26.6, 25.2},   // 42 left eye, inner corner
    {45.0, -26.3, 34.2},   // 45 left eye, outer corner
};
static const int kPosePointCount = sizeof kPoseIndices / sizeof kPoseIndices[0];

// The point the head turns about, in the face frame above (mm): on the midline, 100 mm behind
// the nose tip. Measured on the labelled turns of the real clips: the point along the face's
// axis whose image position moves least while the head turns lies 54-123 mm behind the nose
// tip (median 97 mm over the 9 windows; 84-106 mm on the still webcam of clm-cap12).
static const cv::Vec3d kTurnPivot(0.0, 0.0, 100.0);

static double distance(const double *points, int a, int b) {
    double dx = points[2 * a] - points[2 * b], dy = points[2 * a + 1] - points[2 * b + 1];
    return std::sqrt(dx * dx + dy * dy);
}

double eye_aspect_ratio(const double *points, int first) {
    double width = distance(points, first, first + 3);
    if (width <= 1e-6) return 0;
    return (distance(points, first + 1, first + 5) + distance(points, first + 2, first + 4)) / (2.0 * width);
}

void face_anchor(const double *points, double *x, double *y) {
    static const int anchor[] = {27, 28, 29, 30, 36, 39, 42, 45};
    double sx = 0, sy = 0;
    for (int i : anchor) sx += points[2 * i], sy += points[2 * i + 1];
    *x = sx / 8.0;
    *y = sy / 8.0;
}

double eye_distance(const double *points) {
    double lx = 0, ly = 0, rx = 0, ry = 0;
    for (int i = 0; i < 6; ++i) {
        rx += points[2 * (36 + i)], ry += points[2 * (36 + i) + 1];
        lx += points[2 * (42 + i)], ly += points[2 * (42 + i) + 1];
    }
    return std::hypot((lx - rx) / 6.0, (ly - ry) / 6.0);
}

bool PoseEstimator::estimate(const double *points, const cv::Rect &area, Pose &pose) {
    std::vector<cv::Point3d> model(kPoseModel, kPoseModel + kPosePointCount);
    std::vector<cv::Point2d> image;
    image.reserve(kPosePointCount);
    for (int i : kPoseIndices) image.emplace_back(points[2 * i], points[2 * i + 1]);
    // Intrinsics from the picture's size: focal length = the longer side in pixels (about 53°
    // across the longer side, a typical front camera), principal point at the centre, no
    // distortion. The picture is the frame less its padding (a video letterboxed or centred in
    // a larger frame): padding widens the frame, not the camera's view.
    double focal = std::max(area.width, area.height);
    cv::Matx33d camera(focal, 0, area.x + area.width / 2.0, 0, focal, area.y + area.height / 2.0, 0, 0, 1);
    cv::Mat rvec, tvec;
    // SQPnP finds the global minimum for each frame on its own (no warm start that could keep
    // a wrong local minimum from frame to frame).
    bool ok = cv::solvePnP(model, image, camera, cv::noArray(), rvec, tvec, false, cv::SOLVEPNP_SQPNP);
    if (!ok || tvec.at<double>(2) <= 0) {
        return false;
    }
    std::vector<cv::Point2d> projected;
    cv::projectPoints(model, rvec, tvec, camera, cv::noArray(), projected);
    double squared = 0;
    for (int i = 0; i < kPosePointCount; ++i) {
        double dx = projected[i].x - image[i].x, dy = projected[i].y - image[i].y;
        squared += dx * dx + dy * dy;
    }
    pose.error_px = std::sqrt(squared / kPosePointCount);

    cv::Matx33d r;
    cv::Rodrigues(rvec, r);
    // The face's forward direction (towards the camera, -Z in the face frame) and its
    // left-right axis (+X, towards the subject's left), in camera coordinates.
    double fx = -r(0, 2), fy = -r(1, 2), fz = -r(2, 2);
    double ax = r(0, 0), ay = r(1, 0);
    const double degrees = 180.0 / M_PI;
    // Yaw > 0: the nose swings towards the image's right, which is the subject's own left.
    pose.yaw_degrees = std::atan2(fx, -fz) * degrees;
    // Yaw against the line of sight: the direction from the head's pivot to the camera centre,
    // expressed in the face's own frame, and the face's forward axis (-Z) turned away from it.
    // A camera rotating about its centre, or the image of the face moving across the frame,
    // moves the pivot and the face's axes together: this angle stays the same, while the yaw
    // against the camera's axes changes by the angle the line of sight swept.
    cv::Vec3d pivot = r * kTurnPivot + cv::Vec3d(tvec.at<double>(0), tvec.at<double>(1), tvec.at<double>(2));
    cv::Vec3d to_camera = r.t() * (-pivot);
    pose.line_of_sight_yaw_degrees = std::atan2(-to_camera[0], -to_camera[2]) * degrees;
    // Pitch > 0: the subject looks up (the nose rises in the image).
    pose.pitch_degrees = std::atan2(-fy, std::hypot(fx, fz)) * degrees;
    // Roll > 0: the head tilts towards the subject's left shoulder (its left side drops).
    pose.roll_degrees = std::atan2(ay, ax) * degrees;
    return true;
}

}  // namespace ft

ft_status ft_estimate_pose(const double *landmarks, int width, int height, ft_pose *out, ft_error *error) {
    if (!landmarks || !out) return ft::set_error(error, "pose: null argument"), FT_ERR_ARGUMENT;
    if (width <= 0 || height <= 0) return ft::set_error(error, "pose: frame size %dx%d", width, height), FT_ERR_ARGUMENT;
    for (int i = 0; i < 2 * FT_LANDMARKS; ++i) {
        if (!std::isfinite(landmarks[i])) return ft::set_error(error, "pose: landmark %d is not a finite number", i / 2), FT_ERR_ARGUMENT;
    }
    return ft::guarded(error, "pose", [&] {
        ft::PoseEstimator estimator;
        ft::Pose pose;
        if (!estimator.estimate(landmarks, width, height, pose)) {
            ft::set_error(error, "pose: no head pose fits these landmarks");
            return FT_ERR_DECODE;
        }
        out->yaw_degrees = pose.yaw_degrees;
        out->line_of_sight_yaw_degrees = pose.line_of_sight_yaw_degrees;
        out->pitch_degrees = pose.pitch_degrees;
        out->roll_degrees = pose.roll_degrees;
        out->error_px = pose.error_px;
        return FT_OK;
    });
}
