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

        cv::Mat canvas;
        cv::Mat dx(kCanvasH, kCanvasW, CV_32S, cv::Scalar(0)), dy(kCanvasH, kCanvasW, CV_32S, cv::Scalar(0));
        Candidate best[4];  // image left, image right, above, below (in the roll-corrected face frame)
        for (double tilt : kTilts) {
            cv::Mat m = cv::getRotationMatrix2D(cv::Point2f(float(scx), float(scy)), eye_line_degrees + tilt, k);
            m.at<double>(0, 2) += kU0 - scx;
            m.at<double>(1, 2) += kV0 - scy;
            cv::warpAffine(*source, canvas, m, cv::Size(kCanvasW, kCanvasH), cv::INTER_LINEAR, cv::BORDER_CONSTANT,
                           cv::Scalar(0));
            cv::Mat inv;
            cv::invertAffineTransform(m, inv);
            const double *iv = inv.ptr<double>(0);
            const double margin = kEdgeMargin / k;
            auto inside = [&](double u, double v) {
                double x = iv[0] * u + iv[1] * v + iv[2], y = iv[3] * u + iv[4] * v + iv[5];
                return x >= active.x + margin && x <= active.x + active.width - 1 - margin && y >= active.y + margin &&
                       y <= active.y + active.height - 1 - margin;
            };
            // Steps across vertical lines (dx) and horizontal lines (dy), sums of kStrip pixels.
            for (int v = 0; v < kCanvasH; ++v) {
                const uchar *row = canvas.ptr<uchar>(v);
                int *ox = dx.ptr<int>(v);
                for (int u = kStrip; u < kCanvasW - kStrip; ++u) {
                    int s = 0;
                    for (int i = 1; i <= kStrip; ++i) s += int(row[u + i]) - int(row[u - i]);
                    ox[u] = s;
                }
            }
            for (int v = kStrip; v < kCanvasH - kStrip; ++v) {
                int *oy = dy.ptr<int>(v);
                for (int u = 0; u < kCanvasW; ++u) {
                    int s = 0;
                    for (int i = 1; i <= kStrip; ++i) s += int(canvas.at<uchar>(v + i, u)) - int(canvas.at<uchar>(v - i, u));
                    oy[u] = s;
                }
            }
            // One line: its samples' steps (grey levels), kept where the sample is inside.
            // `needed`: samples that must lie inside the picture (the line's core).
            auto judge = [&](bool vertical, int at, int from, int to, int needed) {
                Candidate c;
                double sum = 0;
                int n = 0, total = needed;
                thread_local std::vector<double> steps;
                steps.clear();
                for (int i = from; i < to; ++i) {
                    int u = vertical ? at : i, v = vertical ? i : at;
                    if (!inside(u, v)) continue;
                    double d = (vertical ? dx.at<int>(v, u) : dy.at<int>(v, u)) / double(kStrip);
                    steps.push_back(d);
                    sum += d;
                    ++n;
                }
                if (total <= 0 || n < kMinInside * total || n == 0) return c;
                double contrast = sum / n;
                if (std::fabs(contrast) < 1) return c;
                int agree = 0;
                for (double d : steps)
                    if ((d > 0) == (contrast > 0) && std::fabs(d) >= kConsistentShare * std::fabs(contrast)) ++agree;
                double consistency = double(agree) / n;
                double distance = (vertical ? std::fabs(at - kU0) : std::fabs(at - kV0)) / kFaceWidth;
                // d is (after - before) along the axis: towards +u or +v. The face lies towards +u of a
                // left line, -u of a right one, +v of a top line, -v of a bottom one.
                bool towards_plus = vertical ? at < kU0 : at < kV0;
                int inside_brighter = ((contrast > 0) == towards_plus) ? 1 : -1;
                return Candidate{std::fabs(contrast) * consistency, std::fabs(contrast), consistency, distance, tilt, inside_brighter};
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
            const int u0 = int(kU0 - 0.9 * w), u1 = int(kU0 + 0.9 * w), across = int(1.2 * w);
            Candidate top, bottom;
            int bottom_row = -1;
            for (int v = std::max(kStrip, int(kV0 - 2.6 * w)); v < int(kV0 - 0.75 * w); ++v) keep(judge(false, v, u0, u1, across), top);
            for (int v = int(kV0 + 1.0 * w); v < std::min(kCanvasH - kStrip, int(kV0 + 3.2 * w)); ++v) {
                Candidate c = judge(false, v, u0, u1, across);
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
            const int v0 = int(kV0 - 0.6 * w);
            int v1 = int(kV0 + 1.4 * w);
            if (bottom_row >= 0 && bottom.consistency >= 0.8 && bottom.contrast >= 10)
                v1 = std::min(v1, bottom_row - kStrip - 1);
            for (int u = int(kU0 - 2.6 * w); u < int(kU0 - 0.7 * w); ++u) keep(judge(true, u, v0, v1, v1 - v0), best[0]);
            for (int u = int(kU0 + 0.7 * w); u < int(kU0 + 2.6 * w); ++u) keep(judge(true, u, v0, v1, v1 - v0), best[1]);
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
