// The measurements of one face from its 68 landmarks: anchor, eye aspect ratios, eye distance
// and head pose (against the camera's picture area on the frame).
#include "internal.hpp"
#include "model.hpp"
#include "pose.hpp"

#include <cmath>

extern "C" {

ft_status ft_measure_face(const ft_image *image, const double *landmarks, int picture[4], ft_face_measures *out,
                          ft_error *error) {
    if (!image || !landmarks || !picture || !out) return ft::set_error(error, "measure: null argument"), FT_ERR_ARGUMENT;
    if (image->empty() || (image->type() != CV_8UC1 && image->type() != CV_8UC3))
        return ft::set_error(error, "measure: empty image, or neither grey nor BGR"), FT_ERR_ARGUMENT;
    for (int i = 0; i < 2 * FT_LANDMARKS; ++i)
        if (!std::isfinite(landmarks[i])) return ft::set_error(error, "measure: landmark %d is not a finite number", i / 2), FT_ERR_ARGUMENT;
    *out = ft_face_measures{};
    return ft::guarded(error, "measure", [&] {
        cv::Mat storage;
        const cv::Mat &gray = ft::gray_pixels(*image, storage);
        double ax, ay;
        ft::face_anchor(landmarks, &ax, &ay);
        out->center_x = ax / gray.cols;
        out->center_y = ay / gray.rows;
        out->ear_right = ft::eye_aspect_ratio(landmarks, 36);
        out->ear_left = ft::eye_aspect_ratio(landmarks, 42);
        out->eye_distance_px = ft::eye_distance(landmarks);
        // The camera's picture: the frame less any padding round it (letterboxing), found again
        // only when the earlier frame's no longer holds (its boundary lines checked).
        cv::Rect area(picture[0], picture[1], picture[2], picture[3]);
        if (!ft::picture_area_holds(gray, area)) area = ft::picture_area(gray);
        picture[0] = area.x, picture[1] = area.y, picture[2] = area.width, picture[3] = area.height;
        ft::PoseEstimator estimator;
        ft::Pose pose;
        if (estimator.estimate(landmarks, area, pose)) {
            out->pose_valid = 1;
            out->pose.yaw_degrees = pose.yaw_degrees;
            out->pose.line_of_sight_yaw_degrees = pose.line_of_sight_yaw_degrees;
            out->pose.pitch_degrees = pose.pitch_degrees;
            out->pose.roll_degrees = pose.roll_degrees;
            out->pose.error_px = pose.error_px;
        }
        return FT_OK;
    });
}

}  // extern "C"
