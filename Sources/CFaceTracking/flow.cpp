// Background motion between frames (OpenCV video: sparse Lucas-Kanade optical flow; calib3d:
// robust similarity fit), the raw material of the device-rotation estimate.
#include "internal.hpp"
#include "picture.hpp"

#include <opencv2/calib3d.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include <cmath>

static cv::Mat small_gray(const cv::Mat &bgr, double scale) {
    cv::Mat gray, small;
    cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
    if (scale < 1) cv::resize(gray, small, cv::Size(), scale, scale, cv::INTER_AREA);
    else small = gray;
    return small;
}

static ft_status motion(const cv::Mat &a, const cv::Mat &b, double scale, double x, double y, double w, double h,
                        ft_motion *out) {
    cv::Mat mask(a.size(), CV_8UC1, cv::Scalar(255));
    if (w > 0 && h > 0) {
        cv::Rect face((int)(x * scale), (int)(y * scale), (int)std::ceil(w * scale), (int)std::ceil(h * scale));
        mask(face & cv::Rect(0, 0, a.cols, a.rows)).setTo(0);
    }
    std::vector<cv::Point2f> from, to;
    cv::goodFeaturesToTrack(a, from, 80, 0.01, std::max(4.0, a.cols / 32.0), mask, 5);
    if (from.size() < 8) return FT_OK;  // too little texture to tell
    std::vector<uchar> status;
    std::vector<float> errors;
    cv::calcOpticalFlowPyrLK(a, b, from, to, status, errors, cv::Size(13, 13), 2);
    std::vector<cv::Point2f> p, q;
    for (size_t i = 0; i < from.size(); ++i)
        if (status[i]) p.push_back(from[i] / scale), q.push_back(to[i] / scale);
    out->points = (int)p.size();
    if (p.size() < 8) return FT_OK;
    std::vector<uchar> inliers;
    cv::Mat m = cv::estimateAffinePartial2D(p, q, inliers, cv::RANSAC, 2.0 / scale);
    if (m.empty()) return FT_OK;
    int count = 0;
    for (uchar v : inliers) count += v ? 1 : 0;
    out->inliers = count;
    if (count < 6 || count < 0.4 * p.size()) return FT_OK;
    double a00 = m.at<double>(0, 0), a10 = m.at<double>(1, 0);
    out->valid = 1;
    out->dx = m.at<double>(0, 2);
    out->dy = m.at<double>(1, 2);
    out->scale = std::hypot(a00, a10);
    out->rotation_degrees = std::atan2(a10, a00) * 180.0 / M_PI;
    return FT_OK;
}

extern "C" {

ft_status ft_image_reduce_gray(const ft_image *source, int max_side, ft_image *out, double *scale, ft_error *error) {
    if (!source || !out || source->empty() || max_side < 16)
        return ft::set_error(error, "reduce: bad arguments"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "reduce", [&] {
        cv::Size whole = source->size();
        int longer = std::max(whole.width, whole.height);
        double factor = longer > max_side ? (double)max_side / longer : 1.0;
        // The full-size grey image is scratch: kept per thread so that a video's frames (all one
        // size) reuse one buffer instead of allocating 0.9 MB per 720p frame.
        thread_local cv::Mat scratch;
        cv::Mat gray;
        if (source->type() == CV_8UC1) {
            gray = source->view();
        } else {
            ft::gray_of(*source, scratch);
            gray = scratch;
        }
        cv::Mat &target = out->replace();
        const std::vector<cv::Mat> *halves = ft::valid_halves(source);
        if (factor < 1 && halves) {
            // A frame's grey copy: from its smallest reduction by 2, 4, ... still larger than
            // the result (about 10x cheaper than averaging the whole-resolution pixels again).
            cv::Size size(cv::saturate_cast<int>(gray.cols * factor), cv::saturate_cast<int>(gray.rows * factor));
            if (size.width < 1 || size.height < 1) return ft::set_error(error, "reduce: the image is too narrow"), FT_ERR_ARGUMENT;
            ft::area_reduce(gray, halves, cv::Rect(0, 0, gray.cols, gray.rows), size, target, 1, false);
        } else if (factor < 1) {
            cv::resize(gray, target, cv::Size(), factor, factor, cv::INTER_AREA);
        } else {
            gray.copyTo(target);
        }
        if (scale) *scale = factor;
        return FT_OK;
    });
}

ft_status ft_background_motion_reduced(const ft_image *previous, const ft_image *current, double scale,
                                       double x, double y, double w, double h, ft_motion *out, ft_error *error) {
    if (!previous || !current || !out || !(scale > 0)) return ft::set_error(error, "motion: bad arguments"), FT_ERR_ARGUMENT;
    if (previous->empty() || previous->size() != current->size() || previous->type() != CV_8UC1 ||
        current->type() != CV_8UC1)
        return ft::set_error(error, "motion: the reduced frames differ in size or are not grey"), FT_ERR_ARGUMENT;
    *out = ft_motion{};
    out->scale = 1;
    return ft::guarded(error, "motion", [&] { return motion(previous->view(), current->view(), scale, x, y, w, h, out); });
}

ft_status ft_background_motion(const ft_image *previous, const ft_image *current, double x, double y, double w,
                               double h, int max_side, ft_motion *out, ft_error *error) {
    if (!previous || !current || !out) return ft::set_error(error, "motion: null argument"), FT_ERR_ARGUMENT;
    if (previous->empty() || previous->size() != current->size())
        return ft::set_error(error, "motion: frames differ in size"), FT_ERR_ARGUMENT;
    *out = ft_motion{};
    out->scale = 1;
    return ft::guarded(error, "motion", [&] {
        int longer = std::max(current->size().width, current->size().height);
        double scale = max_side > 0 && longer > max_side ? (double)max_side / longer : 1.0;
        return motion(small_gray(previous->view(), scale), small_gray(current->view(), scale), scale, x, y, w, h, out);
    });
}

}  // extern "C"
