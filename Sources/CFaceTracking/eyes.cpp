// ft_eye_edges: how much of the edge energy around each eye runs vertically. An open eye shows
// the iris, whose sides are vertical edges against the sclera; a closed eye shows the lid and
// the lash line, a horizontal edge. The landmark eyelids can close on an open eye behind glare,
// glasses or a smile; these pixels do not follow them.
#include "face_tracking.h"
#include "internal.hpp"

#include <cmath>
#include <cstdlib>
#include <opencv2/imgproc.hpp>

namespace {

// The eye patch: kPatchW x kPatchH pixels, the eye's corners levelled on its middle row, the
// corner-to-corner width spanning kPatchW / kSpan pixels (so 1.4 eye widths across, 0.7 down).
constexpr int kPatchW = 48, kPatchH = 24;
constexpr double kSpan = 1.4;
// The share measured: the patch without its outer 4 rows and 8 columns each side (the Sobel
// border and the corners' skin).
constexpr int kInnerRows = 4, kInnerCols = 8;

/// The vertical-edge share of one eye, -1 when its corners are under 6 px apart.
double edge_share(const cv::Mat &gray, const double *corner_a, const double *corner_b) {
    const double dx = corner_b[0] - corner_a[0], dy = corner_b[1] - corner_a[1];
    const double width = std::hypot(dx, dy);
    if (!(width >= 6)) return -1;
    const cv::Point2f centre((float)((corner_a[0] + corner_b[0]) / 2), (float)((corner_a[1] + corner_b[1]) / 2));
    const double scale = kPatchW / (kSpan * width);
    cv::Mat m = cv::getRotationMatrix2D(centre, std::atan2(dy, dx) * 180 / M_PI, scale);
    m.at<double>(0, 2) += kPatchW / 2.0 - centre.x;
    m.at<double>(1, 2) += kPatchH / 2.0 - centre.y;
    thread_local cv::Mat patch;
    cv::warpAffine(gray, patch, m, cv::Size(kPatchW, kPatchH), cv::INTER_LINEAR, cv::BORDER_REPLICATE);
    // Smoothed with the 3x3 binomial kernel ([1 2 1] / 4 each way) first: sensor noise gives
    // horizontal and vertical derivatives alike and so pulls every share towards 0.5, which
    // hides a closure in a dim, noisy picture; the iris's sides (about 15 patch pixels apart)
    // and the lash line keep their edges. Measured on the shared clips made dark and noisy:
    // blink recall 0.63 without it, 0.80 with it; unchanged on the clips as recorded
    // (docs/blinks.md, "Dim, noisy and blurred pictures").
    cv::GaussianBlur(patch, patch, cv::Size(3, 3), 0, 0, cv::BORDER_REPLICATE);
    // The 3x3 Sobel derivatives over the inner pixels only (their neighbours are all inside the
    // patch, so no border rule applies): the values cv::Sobel gives there, without its filter
    // set-up, which cost 3.6 us a call against 0.7 for these 512 pixels.
    double sx = 0, sy = 0;
    for (int y = kInnerRows; y < kPatchH - kInnerRows; ++y) {
        const uint8_t *a = patch.ptr<uint8_t>(y - 1), *b = patch.ptr<uint8_t>(y), *c = patch.ptr<uint8_t>(y + 1);
        for (int x = kInnerCols; x < kPatchW - kInnerCols; ++x) {
            const int dx = (a[x + 1] - a[x - 1]) + 2 * (b[x + 1] - b[x - 1]) + (c[x + 1] - c[x - 1]);
            const int dy = (c[x - 1] - a[x - 1]) + 2 * (c[x] - a[x]) + (c[x + 1] - a[x + 1]);
            sx += std::abs(dx);
            sy += std::abs(dy);
        }
    }
    return sx + sy > 0 ? sx / (sx + sy) : 0.5;
}

}  // namespace

extern "C" ft_status ft_eye_edges(const ft_image *gray, const double *landmarks, double *left, double *right,
                                  ft_error *error) {
    if (!gray || !landmarks || !left || !right) return ft::set_error(error, "eye edges: null argument"), FT_ERR_ARGUMENT;
    for (int i = 36 * 2; i < 48 * 2; ++i)
        if (!std::isfinite(landmarks[i])) return ft::set_error(error, "eye edges: a landmark is not finite"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "eye edges", [&] {
        const cv::Mat &pixels = gray->view();
        if (pixels.empty() || pixels.type() != CV_8UC1)
            return ft::set_error(error, "eye edges: the image is not a grey image"), FT_ERR_ARGUMENT;
        // The subject's left eye is landmarks 42-47 (corners 42, 45), on the image's right.
        *left = edge_share(pixels, landmarks + 42 * 2, landmarks + 45 * 2);
        *right = edge_share(pixels, landmarks + 36 * 2, landmarks + 39 * 2);
        return FT_OK;
    });
}
