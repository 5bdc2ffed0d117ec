// ft_planar_residual: the per-point error of the best homography between two point sets.
#include "face_tracking.h"
#include "internal.hpp"

#include <cmath>
#include <vector>
#include <opencv2/calib3d.hpp>

ft_status ft_planar_residual(const double *reference, const double *points, int count, double *errors, ft_error *error) {
    if (!reference || !points || !errors) return ft::set_error(error, "planar residual: null argument"), FT_ERR_ARGUMENT;
    if (count < 8 || count > 10000) return ft::set_error(error, "planar residual: %d points (8 to 10000 needed)", count), FT_ERR_ARGUMENT;
    for (int i = 0; i < 2 * count; ++i) {
        if (!std::isfinite(reference[i]) || !std::isfinite(points[i])) {
            return ft::set_error(error, "planar residual: point %d is not a finite number", i / 2), FT_ERR_ARGUMENT;
        }
    }
    return ft::guarded(error, "planar residual", [&] {
        std::vector<cv::Point2d> from(count), to(count);
        for (int i = 0; i < count; ++i) {
            from[i] = cv::Point2d(reference[2 * i], reference[2 * i + 1]);
            to[i] = cv::Point2d(points[2 * i], points[2 * i + 1]);
        }
        // LMEDS: no pixel threshold to tune; the fit ignores up to half the points (a few
        // landmarks that jumped), then OpenCV refines it on the inliers (Levenberg-Marquardt).
        // Its sampling uses a fixed seed, so the same points always give the same fit.
        cv::Mat h = cv::findHomography(from, to, cv::LMEDS);
        if (h.empty() || h.rows != 3 || h.cols != 3) {
            ft::set_error(error, "planar residual: no homography fits these points");
            return FT_ERR_DECODE;
        }
        std::vector<cv::Point2d> mapped;
        cv::perspectiveTransform(from, mapped, h);
        for (int i = 0; i < count; ++i) {
            double e = cv::norm(mapped[i] - to[i]);
            if (!std::isfinite(e)) {
                ft::set_error(error, "planar residual: the homography sends point %d to infinity", i);
                return FT_ERR_DECODE;
            }
            errors[i] = e;
        }
        return FT_OK;
    });
}
