// ft_face_enclosure: the strongest straight step edge on each side of a face (a screen's or a
// print's border around a face shown to the camera).
#include "face_tracking.h"
#include "internal.hpp"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace {

// The face frame: the face scaled to `kFaceWidth` pixels, its eye line levelled (getRotationMatrix2D
// turns counter-clockwise on screen by a positive angle, which levels a line at that clockwise angle), centred at (kU0, kV0)
// of a kCanvasW x kCanvasH canvas. Distances below are in face widths.
constexpr double kFaceWidth = 32;
constexpr int kCanvasW = 6 * 32;              // 3 face widths each side
constexpr int kCanvasH = 208;                 // 6.5 face widths
constexpr double kU0 = kCanvasW / 2.0;
constexpr double kV0 = 2.8 * kFaceWidth;      // more room below the face (the body) than above
// Tilts tried about the roll-corrected axes, degrees: a screen or print held at an angle, and
// the perspective of its sides.
constexpr double kTilts[] = {-8, -4, 0, 4, 8};
// The step across a line: the mean of kStrip pixels on one side minus the mean of kStrip on the
// other, one pixel apart.
constexpr int kStrip = 3;
// A sample is "consistent" when its step has the line's sign and at least this share of its size.
constexpr double kConsistentShare = 0.3;
// A line is measured only where this share of its samples lies inside the picture.
constexpr double kMinInside = 0.9;
// How far (canvas pixels) a sample must be from the picture's edge (or a flat padding band).
constexpr double kEdgeMargin = kStrip + 2;
// Where lines are looked for, canvas pixels (see the loops below for what each band is).
constexpr int kSideTop = int(kV0 - 0.6 * kFaceWidth), kSideBottom = int(kV0 + 1.4 * kFaceWidth);
constexpr int kAcrossLeft = int(kU0 - 0.9 * kFaceWidth), kAcrossRight = int(kU0 + 0.9 * kFaceWidth);
constexpr int kTopFirst = int(kV0 - 2.6 * kFaceWidth) > kStrip ? int(kV0 - 2.6 * kFaceWidth) : kStrip;
constexpr int kTopLast = int(kV0 - 0.75 * kFaceWidth);
constexpr int kBottomFirst = int(kV0 + 1.0 * kFaceWidth);
constexpr int kBottomLast = int(kV0 + 3.2 * kFaceWidth) < kCanvasH - kStrip ? int(kV0 + 3.2 * kFaceWidth) : kCanvasH - kStrip;

struct Candidate {
    double score = 0, contrast = 0, consistency = 0, distance = 0, tilt = 0;
    int inside_brighter = 0;  // +1 when the side towards the face is brighter, -1 darker
};

}  // namespace

ft_status ft_face_enclosure(const ft_image *gray, double cx, double cy, double face_width, double eye_line_degrees,
                            ft_enclosure *out, ft_error *error) {
    if (!gray || !out) return ft::set_error(error, "face enclosure: null argument"), FT_ERR_ARGUMENT;
    if (!std::isfinite(cx) || !std::isfinite(cy) || !std::isfinite(face_width) || !std::isfinite(eye_line_degrees) ||
        face_width < 8 || std::fabs(eye_line_degrees) > 360) {
        return ft::set_error(error, "face enclosure: bad face (width %g px, eye line %g deg)", face_width, eye_line_degrees),
               FT_ERR_ARGUMENT;
    }
    if (gray->empty()) return ft::set_error(error, "face enclosure: empty image"), FT_ERR_ARGUMENT;
    *out = ft_enclosure{};
    return ft::guarded(error, "face enclosure", [&] {
        cv::Mat converted;
        const cv::Mat *base = &gray->view();
        const std::vector<cv::Mat> *halves = ft::valid_halves(gray);
        if (base->type() != CV_8UC1) {
            cv::cvtColor(*base, converted, cv::COLOR_BGR2GRAY);
            base = &converted;
            halves = nullptr;
        }
        // The smallest reduction by 2, 4, ... where the face is still at least kFaceWidth wide:
        // the warp below then shrinks by less than 2 (bilinear does not alias).
        const cv::Mat *source = base;
        double factor = 1;
        for (size_t l = 0; halves && l < halves->size(); ++l) {
            double f = double(2 << l);
            if (face_width / f < kFaceWidth) break;
            source = &(*halves)[l];
            factor = f;
        }
        // The picture area, found at full resolution (padding is flat there, a plain wall is not),
        // in the source level's pixels.
        const cv::Rect full = ft::picture_area(*base);
        const cv::Rect active(int(std::ceil(full.x / factor)), int(std::ceil(full.y / factor)),
                              int((full.x + full.width) / factor) - int(std::ceil(full.x / factor)),
                              int((full.y + full.height) / factor) - int(std::ceil(full.y / factor)));
        const double scx = (cx + 0.5) / factor - 0.5, scy = (cy + 0.5) / factor - 0.5;
        const double k = kFaceWidth / (face_width / factor);

        cv::Mat canvas, dx, dy;
        // The steps across vertical lines (dx) and horizontal lines (dy): the sum of kStrip pixels
        // after minus the sum of kStrip before (OpenCV correlates: dst(u) = sum k(i) src(u+i-3)).
        static const cv::Mat across = (cv::Mat_<float>(1, 7) << -1, -1, -1, 0, 1, 1, 1);
        static const cv::Mat down = across.t();
        // Each canvas row's samples inside the picture: the columns lo[v]..hi[v] (empty when lo > hi).
        int lo[kCanvasH], hi[kCanvasH];
        Candidate best[4];  // image left, image right, above, below (in the roll-corrected face frame)
        for (double tilt : kTilts) {
            cv::Mat m = cv::getRotationMatrix2D(cv::Point2f(float(scx), float(scy)), eye_line_degrees + tilt, k);
            m.at<double>(0, 2) += kU0 - scx;
            m.at<double>(1, 2) += kV0 - scy;
            // Only the part of the canvas the picture covers is warped (the rest, zero, is never
            // measured: its samples lie outside the picture): OpenCV's warp is slow where it fills
            // a border, and a face that fills the frame leaves most of the canvas outside it.
            canvas.create(kCanvasH, kCanvasW, CV_8UC1);
            canvas.setTo(cv::Scalar(0));
            std::vector<cv::Point2f> corners = {
                {float(active.x), float(active.y)}, {float(active.x + active.width), float(active.y)},
                {float(active.x), float(active.y + active.height)}, {float(active.x + active.width), float(active.y + active.height)}};
            std::vector<cv::Point2f> mapped;
            cv::transform(corners, mapped, m);
            cv::Rect covered = cv::boundingRect(mapped);
            covered.x -= 2, covered.y -= 2, covered.width += 4, covered.height += 4;
            covered &= cv::Rect(0, 0, kCanvasW, kCanvasH);
            if (!covered.empty()) {
                cv::Mat shifted = m.clone();
                shifted.at<double>(0, 2) -= covered.x;
                shifted.at<double>(1, 2) -= covered.y;
                cv::Mat part = canvas(covered);
                cv::warpAffine(*source, part, shifted, covered.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0));
            }
            // The steps only in the bands where lines are measured (rows of the side lines; the
            // top and bottom bands' columns), from the canvas's own pixels around them.
            dx.create(kCanvasH, kCanvasW, CV_16S);
            dy.create(kCanvasH, kCanvasW, CV_16S);
            const cv::Rect sides_band(0, kSideTop, kCanvasW, kSideBottom - kSideTop);
            const cv::Rect top_band(kAcrossLeft, kTopFirst, kAcrossRight - kAcrossLeft, kTopLast - kTopFirst);
            const cv::Rect bottom_band(kAcrossLeft, kBottomFirst, kAcrossRight - kAcrossLeft, kBottomLast - kBottomFirst);
            cv::Mat dx_band = dx(sides_band), dy_top = dy(top_band), dy_bottom = dy(bottom_band);
            cv::filter2D(canvas(sides_band), dx_band, CV_16S, across, cv::Point(-1, -1), 0, cv::BORDER_REPLICATE);
            cv::filter2D(canvas(top_band), dy_top, CV_16S, down, cv::Point(-1, -1), 0, cv::BORDER_REPLICATE);
            cv::filter2D(canvas(bottom_band), dy_bottom, CV_16S, down, cv::Point(-1, -1), 0, cv::BORDER_REPLICATE);
            cv::Mat inv;
            cv::invertAffineTransform(m, inv);
            const double *iv = inv.ptr<double>(0);
            const double margin = kEdgeMargin / k;
            const double x0 = active.x + margin, x1 = active.x + active.width - 1 - margin;
            const double y0 = active.y + margin, y1 = active.y + active.height - 1 - margin;
            // Along a row v, the source point (x, y) moves linearly with u: each bound of the
            // picture keeps u on one side of a point; their intersection is an interval.
            for (int v = 0; v < kCanvasH; ++v) {
                double ulo = 0, uhi = kCanvasW - 1;
                auto clip = [&](double slope, double offset, double low, double high) {
                    // low <= slope * u + offset <= high
                    if (std::fabs(slope) < 1e-12) {
                        if (offset < low || offset > high) ulo = 1, uhi = 0;
                        return;
                    }
                    double a = (low - offset) / slope, b = (high - offset) / slope;
                    if (a > b) std::swap(a, b);
                    ulo = std::max(ulo, a);
                    uhi = std::min(uhi, b);
                };
                clip(iv[0], iv[1] * v + iv[2], x0, x1);
                clip(iv[3], iv[4] * v + iv[5], y0, y1);
                lo[v] = int(std::ceil(ulo - 1e-9));
                hi[v] = int(std::floor(uhi + 1e-9));
            }
            // One line: the mean of its samples' steps (grey levels) where inside the picture, and
            // its consistency; `needed`: samples that must lie inside (the line's core). A line
            // whose mean step cannot beat `floor` (the best score so far: a score is at most the
            // mean step) is not scored further.
            auto judge = [&](bool vertical, int at, int from, int to, int needed, double floor) {
                Candidate c;
                long sum = 0;
                int n = 0;
                if (vertical) {
                    for (int v = from; v < to; ++v) {
                        if (at < lo[v] || at > hi[v]) continue;
                        sum += dx.at<short>(v, at);
                        ++n;
                    }
                } else {
                    const short *row = dy.ptr<short>(at);
                    for (int u = std::max(from, lo[at]); u < std::min(to, hi[at] + 1); ++u) sum += row[u];
                    n = std::max(0, std::min(to, hi[at] + 1) - std::max(from, lo[at]));
                }
                if (needed <= 0 || n < kMinInside * needed || n == 0) return c;
                double contrast = double(sum) / kStrip / n;
                if (std::fabs(contrast) < 1 || std::fabs(contrast) <= floor) return c;
                // Consistent: the step has the mean's sign and at least kConsistentShare of its size.
                const double least = kConsistentShare * std::fabs(contrast) * kStrip;
                int agree = 0;
                auto count = [&](short raw) {
                    if ((raw > 0) == (contrast > 0) && std::fabs(double(raw)) >= least) ++agree;
                };
                if (vertical) {
                    for (int v = from; v < to; ++v)
                        if (at >= lo[v] && at <= hi[v]) count(dx.at<short>(v, at));
                } else {
                    const short *row = dy.ptr<short>(at);
                    for (int u = std::max(from, lo[at]); u < std::min(to, hi[at] + 1); ++u) count(row[u]);
                }
                double consistency = double(agree) / n;
                double distance = (vertical ? std::fabs(at - kU0) : std::fabs(at - kV0)) / kFaceWidth;
                return Candidate{std::fabs(contrast) * consistency, std::fabs(contrast), consistency, distance, tilt};
            };
            auto keep = [&](const Candidate &c, Candidate &into) {
                if (c.score > into.score) into = c;
            };
            const double w = kFaceWidth;
            // Top and bottom: lines across the face, 0.9 face widths each side of the centre
            // where the picture has them and at least the central 1.2 (a face filling a narrow
            // frame), from 0.75 to 2.6 above the centre and 1.0 to 3.2 below it (across the neck
            // and body, where a live subject's body goes on). A screen's or a print's edge runs
            // on past the face; a beard's or a collar's lower edge, or a shoulder, does not.
            const int u0 = kAcrossLeft, u1 = kAcrossRight, span = int(1.2 * w);
            Candidate top, bottom;
            int bottom_row = -1;
            for (int v = kTopFirst; v < kTopLast; ++v) keep(judge(false, v, u0, u1, span, top.score), top);
            for (int v = kBottomFirst; v < kBottomLast; ++v) {
                Candidate c = judge(false, v, u0, u1, span, bottom.score);
                if (c.score > bottom.score) {
                    bottom = c;
                    bottom_row = v;
                }
            }
            keep(top, best[2]);
            keep(bottom, best[3]);
            // Left and right: lines beside the face from 0.7 to 2.6 face widths out (beyond the
            // ears and the hair: a head's own outline with dark hair or a beard against a light
            // wall is a long step 0.6-0.7 out), spanning from 0.6 above the centre to 1.4 below
            // it, past the chin: a screen's edge goes on there, a head's outline turns in at the
            // neck. A rectangle's sides end at its bottom edge: when a consistent border was
            // found below the face nearer than that, the side lines stop short of it.
            const int v0 = kSideTop;
            int v1 = kSideBottom;
            if (bottom_row >= 0 && bottom.consistency >= 0.8 && bottom.contrast >= 10)
                v1 = std::min(v1, bottom_row - kStrip - 1);
            for (int u = int(kU0 - 2.6 * w); u < int(kU0 - 0.7 * w); ++u) keep(judge(true, u, v0, v1, v1 - v0, best[0].score), best[0]);
            for (int u = int(kU0 + 0.7 * w); u < int(kU0 + 2.6 * w); ++u) keep(judge(true, u, v0, v1, v1 - v0, best[1].score), best[1]);
        }
        ft_border_side *sides[4] = {&out->image_left, &out->image_right, &out->above, &out->below};
        for (int s = 0; s < 4; ++s) {
            sides[s]->contrast = best[s].contrast;
            sides[s]->consistency = best[s].consistency;
            sides[s]->distance_face_widths = best[s].distance;
            sides[s]->tilt_degrees = best[s].tilt;
        }
        return FT_OK;
    });
}
