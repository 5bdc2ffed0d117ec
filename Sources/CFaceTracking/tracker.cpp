// Face detection (dlib HOG), 68-point landmarks (dlib shape predictor) and tracking:
// detect once, then fit the landmarks in the previous frame's box, verify with HOG near the
// box every few frames, and re-detect when the face is lost.
#include "hog_scan.hpp"
#include "internal.hpp"
#include "landmarks.hpp"
#include "picture.hpp"
#include "pose.hpp"

#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_processing/shape_predictor.h>
#include <dlib/opencv/cv_image.h>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <vector>

struct ft_model {
    // The 68-point model, evaluated with its leaves packed (landmarks.hpp): dlib's landmarks.
    ft::LandmarkPredictor predictor;
    // The HOG face detector, deserialised once with the model (≈300 ms): trackers copy it
    // (≈0.07 ms) because scanning uses the detector's own buffers, so threads cannot share one.
    dlib::frontal_face_detector detector;
    std::string path;
};

namespace {

std::mutex &models_mutex() {
    static std::mutex mutex;
    return mutex;
}

std::map<std::string, std::unique_ptr<ft_model>> &models() {
    static std::map<std::string, std::unique_ptr<ft_model>> loaded;
    return loaded;
}

using Clock = std::chrono::steady_clock;
double milliseconds_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// HOG windows are 80x80: a face is found when it is at least ~80 px in the scanned image.
constexpr double kHogFacePixels = 80.0;
/// When re-scanning around a known face, scale it to this width (a little above the minimum).
constexpr double kTargetFacePixels = 100.0;

double iou(const cv::Rect2d &a, const cv::Rect2d &b) {
    double inter = (a & b).area();
    double uni = a.area() + b.area() - inter;
    return uni > 0 ? inter / uni : 0;
}

cv::Rect2d to_rect(const ft_candidate &c) { return cv::Rect2d(c.x, c.y, c.w, c.h); }

/// The part of the grey frame HOG scans: `roi` scaled by `scale` (into `storage` unless it is the
/// frame itself); empty when it would be smaller than a HOG window.
/// `halves` (the grey frame's reductions by 2, 4, ..., or null) make a reduction by 4 or more
/// cheaper: it is taken from the smallest of them still at least the scanned size, bilinear
/// below twice that size (`ft::area_reduce`; area-averaging a level at a ratio just over 2 took
/// OpenCV's general area path, 1 M instructions a tracked 720p frame).
/// A `search` (for a face not yet tracked, at a fixed cadence on every frame without one)
/// reduces bilinearly from the smallest level still at least the scanned size: OpenCV's general
/// area path costs about 40 instructions a pixel at ratios below 2, a fifth of the search.
cv::Mat scanned_region(const cv::Mat &gray, const std::vector<cv::Mat> *halves, cv::Rect roi, double scale, bool search,
                       cv::Mat &storage) {
    cv::Mat region = gray(roi), scaled;
    if (search && scale < 1 - 1e-3) {
        cv::Size size(cv::saturate_cast<int>(roi.width * scale), cv::saturate_cast<int>(roi.height * scale));
        if (size.width < 80 || size.height < 80) return cv::Mat();
        cv::Rect at;
        const cv::Mat *source = ft::smallest_level(gray, halves, roi, size, 1, at);
        bool near = at.width < 2 * size.width && at.height < 2 * size.height;
        cv::resize((*source)(at), storage, size, 0, 0, near ? cv::INTER_LINEAR : cv::INTER_AREA);
        scaled = storage;
    } else if (halves && scale <= 0.25) {
        cv::Size size(cv::saturate_cast<int>(roi.width * scale), cv::saturate_cast<int>(roi.height * scale));
        if (size.width < 80 || size.height < 80) return cv::Mat();
        ft::area_reduce(gray, halves, roi, size, storage, 1, false);
        scaled = storage;
    } else if (std::fabs(scale - 1.0) > 1e-3) {
        cv::resize(region, storage, cv::Size(), scale, scale, scale < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
        scaled = storage;
    } else {
        scaled = region;
    }
    if (scaled.cols < 80 || scaled.rows < 80) return cv::Mat();
    if (!scaled.isContinuous()) scaled = scaled.clone();
    return scaled;
}

/// A detection of the scanned image as a candidate in frame pixels.
ft_candidate to_frame(const dlib::rect_detection &d, cv::Rect roi, double scale) {
    ft_candidate c;
    c.x = roi.x + d.rect.left() / scale;
    c.y = roi.y + d.rect.top() / scale;
    c.w = d.rect.width() / scale;
    c.h = d.rect.height() / scale;
    c.score = d.detection_confidence;
    return c;
}

void sort_by_score(std::vector<ft_candidate> &found) {
    std::sort(found.begin(), found.end(), [](const ft_candidate &a, const ft_candidate &b) { return a.score > b.score; });
}

/// The frontal face detector's five filters (a face looking ahead, to either side, and tilted
/// either way), run one at a time over one HOG pyramid, as dlib's object_detector runs them all:
/// filtering is three quarters of a detection's cost, and the tracked face is nearly always
/// found by the filter that found it the last time.
struct FilterBank {
    using Scanner = dlib::frontal_face_detector::image_scanner_type;
    Scanner scanner;
    std::vector<Scanner::fhog_filterbank> filters;
    std::vector<double> biases;
    dlib::test_box_overlap overlap;

    explicit FilterBank(const dlib::frontal_face_detector &detector) : overlap(detector.get_overlap_tester()) {
        scanner.copy_configuration(detector.get_scanner());
        for (unsigned long i = 0; i < detector.num_detectors(); ++i) {
            const auto &w = detector.get_w(i);
            filters.push_back(scanner.build_fhog_filterbank(w));
            biases.push_back(w(scanner.get_num_dimensions()));
        }
    }

    /// Filter `i`'s detections on the loaded image, appended to `out` (scores as dlib's
    /// object_detector reports them).
    void run(unsigned long i, double threshold, std::vector<dlib::rect_detection> &out) const {
        thread_local std::vector<std::pair<double, dlib::rectangle>> dets;
        ft::hog::detect(scanner, filters[i], dets, biases[i] + threshold);
        for (const auto &d : dets) {
            dlib::rect_detection r;
            r.detection_confidence = d.first - biases[i];
            r.weight_index = i;
            r.rect = d.second;
            out.push_back(r);
        }
    }

    /// dlib's non-maximum suppression: the best first, then each that overlaps none kept.
    std::vector<dlib::rect_detection> suppress(std::vector<dlib::rect_detection> all) const {
        std::sort(all.rbegin(), all.rend());
        std::vector<dlib::rect_detection> kept;
        for (const auto &d : all) {
            bool overlaps = false;
            for (const auto &k : kept) overlaps = overlaps || overlap(k.rect, d.rect);
            if (!overlaps) kept.push_back(d);
        }
        return kept;
    }

    /// What dlib's object_detector finds on `image` with these filters (its detections, scores
    /// and order): one HOG pyramid, the filters run at once on the cores (cv::parallel_for_,
    /// each filter's detections kept apart), then gathered in filter order and suppressed as
    /// dlib does. A search without a face runs on an otherwise idle core this way: the decoder
    /// has little to do for the tracking thread then.
    std::vector<dlib::rect_detection> detect(const dlib::cv_image<unsigned char> &image, double threshold) {
        ft::hog::load(scanner, image);
        std::vector<std::vector<dlib::rect_detection>> each(filters.size());
        cv::parallel_for_(cv::Range(0, (int)filters.size()), [&](const cv::Range &range) {
            for (int i = range.start; i < range.end; ++i) run((unsigned long)i, threshold, each[i]);
        }, (double)filters.size());
        std::vector<dlib::rect_detection> all;
        for (const auto &found : each) all.insert(all.end(), found.begin(), found.end());
        return suppress(std::move(all));
    }
};

/// Runs the HOG detector (`bank`'s filters) on `roi` of the grey frame scaled by `scale`; boxes
/// in frame pixels, best first. (`scanned_region` says how the region is scaled.)
std::vector<ft_candidate> detect(FilterBank &bank, const cv::Mat &gray, const std::vector<cv::Mat> *halves, cv::Rect roi,
                                 double scale, double threshold, bool search = false) {
    roi &= cv::Rect(0, 0, gray.cols, gray.rows);
    std::vector<ft_candidate> found;
    if (roi.area() <= 0) return found;
    thread_local cv::Mat storage;
    cv::Mat scaled = scanned_region(gray, halves, roi, scale, search, storage);
    if (scaled.empty()) return found;
    for (const auto &d : bank.detect(dlib::cv_image<unsigned char>(scaled), threshold)) found.push_back(to_frame(d, roi, scale));
    sort_by_score(found);
    return found;
}

/// dlib's HOG pyramid shrinks the image by 5/6 per level.
constexpr double kPyramidStep = 5.0 / 6.0;

/// Scales at which to scan a whole frame for faces of at least `min_fraction` of the shorter side:
/// a coarse pass for the large faces of a selfie first, then the fine pass.
std::vector<double> detection_ladder(int width, int height, double min_fraction) {
    double shorter = std::min(width, height);
    double fine = std::min(2.0, kHogFacePixels / std::max(8.0, min_fraction * shorter));
    double coarse = std::min(fine, kHogFacePixels / (0.3 * shorter));
    std::vector<double> ladder{coarse};
    if (fine > coarse * 1.25) ladder.push_back(fine);
    return ladder;
}

/// Pyramid levels the fine pass (scale `fine`) needs when the coarse pass (scale `coarse`) runs
/// too: those scanned above the coarse scale. Each level finds faces from 80 to 96 px in its
/// image, so levels down to 1.1 × the coarse scale reach the sizes where the coarse pass's own
/// first level starts; the levels below, which the coarse pass scans again, are left out.
unsigned long fine_pyramid_levels(double fine, double coarse) {
    unsigned long levels = 0;
    for (double s = fine; s > 1.1 * coarse && levels < 64; s *= kPyramidStep) ++levels;
    return std::max(1ul, levels);
}

/// A copy of `detector` (same filters and settings) whose pyramid stops after `levels` levels.
dlib::frontal_face_detector limited_detector(const dlib::frontal_face_detector &detector, unsigned long levels) {
    dlib::frontal_face_detector::image_scanner_type scanner;
    scanner.copy_configuration(detector.get_scanner());
    scanner.set_max_pyramid_levels(levels);
    std::vector<dlib::frontal_face_detector::feature_vector_type> weights;
    for (unsigned long i = 0; i < detector.num_detectors(); ++i) weights.push_back(detector.get_w(i));
    return dlib::frontal_face_detector(scanner, detector.get_overlap_tester(), weights);
}

void fill_landmarks(const dlib::full_object_detection &shape, double *out) {
    for (unsigned i = 0; i < shape.num_parts() && i < FT_LANDMARKS; ++i) {
        out[2 * i] = shape.part(i).x();
        out[2 * i + 1] = shape.part(i).y();
    }
}

cv::Rect2d landmark_bounds(const double *points) {
    double x0 = points[0], x1 = points[0], y0 = points[1], y1 = points[1];
    for (int i = 1; i < FT_LANDMARKS; ++i) {
        x0 = std::min(x0, points[2 * i]), x1 = std::max(x1, points[2 * i]);
        y0 = std::min(y0, points[2 * i + 1]), y1 = std::max(y1, points[2 * i + 1]);
    }
    return cv::Rect2d(x0, y0, x1 - x0, y1 - y0);
}

}  // namespace

struct ft_tracker {
    const ft_model *model = nullptr;
    ft_tracker_config config{};
    // The model's HOG detector as a bank of filters with its own scanner (a tracker's buffers),
    // for searches, scans and the confirmations near the box (one filter at a time there), and
    // the filter that found the tracked face at the last confirmation (-1: none yet).
    std::unique_ptr<FilterBank> filters;
    int last_filter = -1;
    // The fine search's filters: the detector's with its pyramid cut where the coarse pass takes
    // over (`fine_pyramid_levels`); made on first use for the frame's scales.
    std::unique_ptr<FilterBank> fine_filters;
    unsigned long fine_levels = 0;
    ft::PoseEstimator pose;
    /// The picture area (the frame less its padding) of the last frame it was found on.
    cv::Rect picture;
    // The frame's grey image during a call: `own_gray` (converted here) or the caller's, and its
    // reductions by 2, 4, ... (`ft::build_halves`; null when the caller's image has none).
    cv::Mat gray;
    const std::vector<cv::Mat> *halves = nullptr;
    ft_image own_gray;

    bool tracking = false;
    cv::Rect2d box;               // the primary face, detector convention, frame pixels
    // The detector box relative to the landmarks' bounding box, learnt at each detection, so
    // that a box derived from landmarks stays in the convention the shape predictor expects.
    double offset_x = 0.0, offset_y = -0.1, scale_w = 1.0, scale_h = 1.0;
    int frames_since_verify = 0;
    int frames_since_scan = 0;
    int failed_verifies = 0;
    int last_face_count = 0;
    // Pacing of the searches without a face (media time, milliseconds; NaN: never searched).
    double last_coarse_ms = NAN, last_fine_ms = NAN;
};

namespace {

constexpr int kMaxFailedVerifies = 3;
/// Frames between whole-frame HOG scans at the tracked face's scale, which count the faces on
/// the frame (a second person) and confirm the face where the check near the box would not.
constexpr int kScanInterval = 30;
/// HOG score a detection needs to count as a face when a better one exists on the frame.
constexpr double kSecondaryFaceScore = 0.5;
/// A confirmed track is re-anchored on the detector's box only below this overlap (IoU).
constexpr double kReanchorOverlap = 0.7;
/// Movement of the face box between frames, as a fraction of its width, above which the
/// landmarks are fitted a second time in the box the first fit found.
constexpr double kRefitMotion = 0.03;

void learn_offsets(ft_tracker &t, const cv::Rect2d &box, const double *points) {
    cv::Rect2d lb = landmark_bounds(points);
    if (lb.width < 4 || lb.height < 4) return;
    t.offset_x = (box.x - lb.x) / lb.width;
    t.offset_y = (box.y - lb.y) / lb.height;
    t.scale_w = box.width / lb.width;
    t.scale_h = box.height / lb.height;
}

cv::Rect2d box_from_landmarks(const ft_tracker &t, const double *points) {
    cv::Rect2d lb = landmark_bounds(points);
    return cv::Rect2d(lb.x + t.offset_x * lb.width, lb.y + t.offset_y * lb.height, t.scale_w * lb.width,
                      t.scale_h * lb.height);
}

void fit(const ft_tracker &t, const cv::Rect2d &box, double *points) {
    dlib::cv_image<unsigned char> image(t.gray);
    dlib::rectangle rect((long)std::lround(box.x), (long)std::lround(box.y), (long)std::lround(box.x + box.width),
                         (long)std::lround(box.y + box.height));
    fill_landmarks(t.model->predictor(image, rect), points);
}

/// The candidate to follow: the one overlapping the face already tracked (stability), else the
/// one whose centre is nearest the guide circle's centre (a larger face-like object elsewhere
/// in the frame loses to a face in the guide).
int choose_primary(const ft_tracker &t, const std::vector<ft_candidate> &candidates, int width, int height) {
    int best = -1;
    double best_cost = 1e18;
    double shorter = std::min(width, height);
    for (size_t i = 0; i < candidates.size(); ++i) {
        const auto &c = candidates[i];
        double cx = c.x + c.w / 2, cy = c.y + c.h / 2;
        double dx = cx - t.config.guide_center_x * width, dy = cy - t.config.guide_center_y * height;
        double cost = std::hypot(dx, dy) / shorter;
        if (t.tracking && iou(to_rect(c), t.box) > 0.3) cost -= 10;  // keep following the same face
        if (cost < best_cost) best_cost = cost, best = (int)i;
    }
    return best;
}

void copy_candidates(const std::vector<ft_candidate> &candidates, ft_observation *out) {
    out->candidate_count = (int)std::min<size_t>(candidates.size(), FT_MAX_CANDIDATES);
    for (int i = 0; i < out->candidate_count; ++i) out->candidates[i] = candidates[i];
}

/// Fills the per-face measurements from the landmarks already in out->landmarks.
void measure(ft_tracker &t, ft_observation *out, int width, int height) {
    const double *p = out->landmarks;
    out->face = 1;
    out->box_x = t.box.x, out->box_y = t.box.y, out->box_w = t.box.width, out->box_h = t.box.height;
    double ax, ay;
    ft::face_anchor(p, &ax, &ay);
    out->center_x = ax / width;
    out->center_y = ay / height;
    out->ear_right = ft::eye_aspect_ratio(p, 36);
    out->ear_left = ft::eye_aspect_ratio(p, 42);
    out->eye_distance_px = ft::eye_distance(p);
    auto start = Clock::now();
    ft::Pose pose;
    // The camera's picture: the frame less any padding round it (letterboxing), found again
    // only when the last frame's no longer holds (its boundary lines checked).
    if (!ft::picture_area_holds(t.gray, t.picture)) t.picture = ft::picture_area(t.gray);
    if (t.pose.estimate(p, t.picture, pose)) {
        out->yaw_degrees = pose.yaw_degrees;
        out->line_of_sight_yaw_degrees = pose.line_of_sight_yaw_degrees;
        out->pitch_degrees = pose.pitch_degrees;
        out->roll_degrees = pose.roll_degrees;
        out->pose_error_px = pose.error_px;
    }
    out->pose_ms = milliseconds_since(start);
}

bool plausible(const cv::Rect2d &box, const cv::Rect2d &previous, int width, int height) {
    if (box.width < 20 || box.height < 20) return false;
    // A face changes size by a few percent between frames; a box that grows or shrinks by a
    // quarter in one frame is the landmark fit running away, not the face.
    double ratio = box.width / std::max(1.0, previous.width);
    if (ratio < 0.8 || ratio > 1.25) return false;
    cv::Rect2d frame(0, 0, width, height);
    return (box & frame).area() > 0.5 * box.area();
}

/// Which passes of the detection ladder a search without a track runs: the coarse one (large
/// faces) and the fine one (all faces down to the minimum size).
struct SearchPasses {
    bool coarse = true, fine = true;
};

ft_status full_detection(ft_tracker &t, ft_observation *out, int width, int height, SearchPasses passes = {}) {
    auto start = Clock::now();
    std::vector<ft_candidate> candidates;
    cv::Rect whole(0, 0, width, height);
    if (t.tracking) {
        // Scan the whole frame at the scale of the face we follow: cheap, and finds faces of
        // a similar size (a second person) as well as the one we track.
        candidates = detect(*t.filters, t.gray, t.halves, whole, std::min(2.0, kTargetFacePixels / std::max(1.0, t.box.width)),
                            t.config.detection_threshold);
    } else {
        auto ladder = detection_ladder(width, height, t.config.min_face_fraction);
        for (size_t i = 0; i < ladder.size(); ++i) {
            // One scale only (a small frame): it runs when either pass is due.
            bool due = ladder.size() == 1 ? (passes.coarse || passes.fine) : (i == 0 ? passes.coarse : passes.fine);
            if (!due) continue;
            if (i == 1) {
                // The fine pass scans only the sizes the coarse pass does not (faces from the
                // minimum up to about 30% of the shorter side); it always runs after the coarse
                // pass (`process` makes a fine search a coarse one too), so the pair costs what
                // the whole pyramid at the fine scale alone cost.
                unsigned long levels = fine_pyramid_levels(ladder[1], ladder[0]);
                if (!t.fine_filters || t.fine_levels != levels) {
                    t.fine_filters = std::make_unique<FilterBank>(limited_detector(t.model->detector, levels));
                    t.fine_levels = levels;
                }
                candidates = detect(*t.fine_filters, t.gray, t.halves, whole, ladder[1], t.config.detection_threshold, true);
            } else {
                candidates = detect(*t.filters, t.gray, t.halves, whole, ladder[i], t.config.detection_threshold, true);
            }
            if (!candidates.empty()) break;
        }
    }
    out->detect_ms += milliseconds_since(start);
    // The best detection counts at the configured threshold (a real face turning or closing
    // its eyes can score near 0); any further one must be confident, so that a weak hit on a
    // badge or a patch is not a second face (HOG scores of real faces here: 0.6 to 3.0).
    candidates.erase(std::remove_if(candidates.begin() + std::min<size_t>(1, candidates.size()), candidates.end(),
                                    [](const ft_candidate &c) { return c.score < kSecondaryFaceScore; }),
                     candidates.end());
    copy_candidates(candidates, out);
    t.last_face_count = (int)candidates.size();
    out->faces = t.last_face_count;
    int primary = choose_primary(t, candidates, width, height);
    if (primary < 0) {
        t.tracking = false;
        t.pose.reset();
        return FT_OK;
    }
    bool same_face = t.tracking && iou(to_rect(candidates[primary]), t.box) > 0.3;
    if (!same_face) t.pose.reset(), t.last_filter = -1;
    t.box = to_rect(candidates[primary]);
    start = Clock::now();
    fit(t, t.box, out->landmarks);
    out->landmarks_ms += milliseconds_since(start);
    learn_offsets(t, t.box, out->landmarks);
    t.tracking = true;
    t.failed_verifies = 0;
    t.frames_since_verify = 0;
    t.frames_since_scan = 0;
    out->source = FT_SOURCE_DETECTED;
    measure(t, out, width, height);
    return FT_OK;
}

/// The detection that is the tracked face: the best overlap above 0.3, or else one whose centre
/// lies inside the track's box at a size within a factor 2 (a drifted box overlaps little).
int same_face(const std::vector<ft_candidate> &found, const cv::Rect2d &box) {
    int match = -1;
    double best = 0.3;
    for (size_t i = 0; i < found.size(); ++i) {
        double overlap = iou(to_rect(found[i]), box);
        if (overlap > best) best = overlap, match = (int)i;
    }
    if (match >= 0) return match;
    for (size_t i = 0; i < found.size(); ++i) {
        const auto &c = found[i];
        double ratio = c.w / std::max(1.0, box.width);
        if (box.contains(cv::Point2d(c.x + c.w / 2, c.y + c.h / 2)) && ratio > 0.5 && ratio < 2) return (int)i;
    }
    return -1;
}

/// The score above which the first filter's detection of the tracked face is taken without
/// running the others.
constexpr double kSureFilterScore = 1.0;

/// Confirms the track with HOG over `roi` of the frame at `scale`, as `detect` with the whole
/// detector would, filter by filter: the filter that found the face at the last confirmation
/// runs first, and when it alone finds the tracked face where the track is (overlap at least
/// kReanchorOverlap: the track is kept as it is), the other filters are skipped and its
/// detections are the result. Otherwise all filters run and the result is the whole detector's.
std::vector<ft_candidate> confirm_near(ft_tracker &t, cv::Rect roi, double scale) {
    roi &= cv::Rect(0, 0, t.gray.cols, t.gray.rows);
    std::vector<ft_candidate> found;
    if (roi.area() <= 0) return found;
    thread_local cv::Mat storage;
    cv::Mat scaled = scanned_region(t.gray, t.halves, roi, scale, false, storage);
    if (scaled.empty()) return found;
    FilterBank &bank = *t.filters;
    ft::hog::load(bank.scanner, dlib::cv_image<unsigned char>(scaled));
    double threshold = t.config.detection_threshold;
    std::vector<dlib::rect_detection> all;
    auto candidates = [&](const std::vector<dlib::rect_detection> &kept) {
        found.clear();
        for (const auto &d : kept) found.push_back(to_frame(d, roi, scale));
    };
    int first = t.last_filter;
    if (first >= 0 && first < (int)bank.filters.size()) {
        bank.run(first, threshold, all);
        candidates(bank.suppress(all));
        int match = same_face(found, t.box);
        if (match >= 0 && iou(to_rect(found[match]), t.box) >= kReanchorOverlap && found[match].score >= kSureFilterScore)
            return found;
    }
    for (int i = 0; i < (int)bank.filters.size(); ++i)
        if (i != first) bank.run(i, threshold, all);
    auto kept = bank.suppress(all);
    candidates(kept);
    int match = same_face(found, t.box);
    if (match >= 0) t.last_filter = (int)kept[match].weight_index;
    return found;
}

ft_status track(ft_tracker &t, ft_observation *out, int width, int height) {
    auto start = Clock::now();
    fit(t, t.box, out->landmarks);
    cv::Rect2d next = box_from_landmarks(t, out->landmarks);
    // A fast-moving face (a face being brought into the guide moves 10 px a frame and more):
    // the landmarks fitted in last frame's box lag behind and squash the eyes, which reads as
    // a blink. Fit again in the box the first pass found.
    double moved = std::hypot(next.x + next.width / 2 - (t.box.x + t.box.width / 2),
                              next.y + next.height / 2 - (t.box.y + t.box.height / 2));
    if (moved > kRefitMotion * t.box.width && plausible(next, t.box, width, height)) {
        fit(t, next, out->landmarks);
        next = box_from_landmarks(t, out->landmarks);
    }
    out->landmarks_ms += milliseconds_since(start);
    if (!plausible(next, t.box, width, height)) return full_detection(t, out, width, height);
    t.box = next;
    out->source = FT_SOURCE_TRACKED;
    out->faces = t.last_face_count;

    int interval = std::max(1, t.config.verify_interval);
    bool scan = ++t.frames_since_scan >= kScanInterval;
    bool verify = ++t.frames_since_verify >= interval;
    if (scan || verify) {
        // Confirm the face with HOG: near the box every few frames, and now and then over the
        // whole frame at the face's scale (which also counts the faces on the frame).
        t.frames_since_verify = 0;
        start = Clock::now();
        double scale = std::min(2.0, kTargetFacePixels / std::max(1.0, t.box.width));
        std::vector<ft_candidate> found;
        if (scan) {
            t.frames_since_scan = 0;
            found = detect(*t.filters, t.gray, t.halves, cv::Rect(0, 0, width, height), scale, t.config.detection_threshold);
            found.erase(std::remove_if(found.begin() + std::min<size_t>(1, found.size()), found.end(),
                                       [](const ft_candidate &c) { return c.score < kSecondaryFaceScore; }),
                        found.end());
            copy_candidates(found, out);
            t.last_face_count = std::max(1, (int)found.size());
            out->faces = t.last_face_count;
        } else {
            cv::Rect roi((int)(t.box.x - 0.5 * t.box.width), (int)(t.box.y - 0.5 * t.box.height),
                         (int)(2 * t.box.width), (int)(2 * t.box.height));
            found = confirm_near(t, roi, scale);
        }
        out->detect_ms += milliseconds_since(start);
        int match = same_face(found, t.box);
        if (match < 0 && !scan) {
            // HOG does not see the face where the track is. Either the face is turned too far
            // for HOG (the track is fine) or the track has drifted off the face: look over the
            // whole frame at the face's scale before counting a failure.
            start = Clock::now();
            found = detect(*t.filters, t.gray, t.halves, cv::Rect(0, 0, width, height), scale, t.config.detection_threshold);
            out->detect_ms += milliseconds_since(start);
            match = same_face(found, t.box);
        }
        double best = match >= 0 ? iou(to_rect(found[match]), t.box) : 0;
        if (match >= 0) {
            t.failed_verifies = 0;
            out->source = FT_SOURCE_VERIFIED;
            if (best < kReanchorOverlap) {
                // The track has drifted from where HOG sees the face: re-anchor on the
                // detector's box. (Re-anchoring on every confirmation would make the landmarks,
                // and the yaw, jump by a degree or two every few frames.)
                t.box = to_rect(found[match]);
                start = Clock::now();
                fit(t, t.box, out->landmarks);
                out->landmarks_ms += milliseconds_since(start);
                learn_offsets(t, t.box, out->landmarks);
            }
        } else if (++t.failed_verifies >= kMaxFailedVerifies) {
            // HOG has not seen a face near the box for a while: the track is lost.
            t.tracking = false;
            t.pose.reset();
            std::memset(out->landmarks, 0, sizeof out->landmarks);
            return full_detection(t, out, width, height);
        }
    }
    measure(t, out, width, height);
    return FT_OK;
}

}  // namespace

extern "C" {

ft_status ft_model_load(const char *path, ft_model **out, ft_error *error) {
    if (!path || !out) return ft::set_error(error, "model: null argument"), FT_ERR_ARGUMENT;
    *out = nullptr;
    std::lock_guard<std::mutex> lock(models_mutex());
    auto found = models().find(path);
    if (found != models().end()) {
        *out = found->second.get();
        return FT_OK;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return ft::set_error(error, "landmark model %s: %s (Debian's libdlib-data installs it)", path,
                             std::strerror(errno)), FT_ERR_MODEL;
    ft_status status = ft::guarded(error, path, [&] {
        auto model = std::make_unique<ft_model>();
        model->path = path;
        // The HOG detector (decompressed from dlib's library, 0.3 s) on a second thread while the
        // landmark model is read (0.6 s): the future's destructor waits for it if reading throws.
        std::future<dlib::frontal_face_detector> detector =
            std::async(std::launch::async, [] { return dlib::get_frontal_face_detector(); });
        model->predictor.load(path);
        model->detector = detector.get();
        if (model->predictor.num_parts() != FT_LANDMARKS) {
            ft::set_error(error, "%s: a %lu-point model; the engine needs the 68-point one", path,
                          (unsigned long)model->predictor.num_parts());
            return FT_ERR_MODEL;
        }
        *out = model.get();
        models()[path] = std::move(model);
        return FT_OK;
    });
    if (status == FT_ERR_INTERNAL) status = FT_ERR_MODEL;
    return status;
}

ft_tracker_config ft_tracker_config_default(void) {
    ft_tracker_config config;
    config.guide_center_x = 0.5;
    config.guide_center_y = 0.5;
    config.guide_radius = 0.3;
    config.min_face_fraction = 0.12;
    config.detection_threshold = 0.0;
    config.verify_interval = 5;
    config.track = 1;
    config.search_coarse_interval_ms = 250;
    config.search_fine_interval_ms = 1000;
    return config;
}

ft_status ft_tracker_new(const ft_model *model, const ft_tracker_config *config, ft_tracker **out, ft_error *error) {
    if (!model || !out) return ft::set_error(error, "tracker: null argument"), FT_ERR_ARGUMENT;
    *out = nullptr;
    return ft::guarded(error, "tracker", [&] {
        auto tracker = std::make_unique<ft_tracker>();
        tracker->model = model;
        tracker->filters = std::make_unique<FilterBank>(model->detector);
        tracker->config = config ? *config : ft_tracker_config_default();
        if (!(tracker->config.min_face_fraction > 0.01 && tracker->config.min_face_fraction <= 1)) {
            ft::set_error(error, "tracker: min_face_fraction %g not in 0.01...1", tracker->config.min_face_fraction);
            return FT_ERR_ARGUMENT;
        }
        *out = tracker.release();
        return FT_OK;
    });
}

void ft_tracker_free(ft_tracker *tracker) { delete tracker; }

void ft_tracker_reset(ft_tracker *tracker) {
    if (!tracker) return;
    tracker->tracking = false;
    tracker->pose.reset();
    tracker->last_face_count = 0;
    tracker->last_filter = -1;
    tracker->last_coarse_ms = tracker->last_fine_ms = NAN;
}

static ft_status process(ft_tracker *tracker, const ft_image *frame, const ft_image *gray, double timestamp_ms, bool paced,
                         ft_observation *out, ft_error *error) {
    if (!tracker || !frame || !out) return ft::set_error(error, "process: null argument"), FT_ERR_ARGUMENT;
    if (frame->empty() || frame->type() != CV_8UC3)
        return ft::set_error(error, "process: empty or non-BGR frame"), FT_ERR_ARGUMENT;
    if (gray && (gray->type() != CV_8UC1 || gray->size() != frame->size()))
        return ft::set_error(error, "process: the grey image is not a one-channel image of the frame's size"), FT_ERR_ARGUMENT;
    std::memset(out, 0, sizeof *out);
    return ft::guarded(error, "process", [&] {
        auto &t = *tracker;
        int width = frame->size().width, height = frame->size().height;
        SearchPasses passes;
        if (!(t.tracking && t.config.track) && paced && !std::isnan(t.last_fine_ms)) {
            // No face since the last search: search again only when a pass is due (media time).
            passes.coarse = !(timestamp_ms - t.last_coarse_ms < t.config.search_coarse_interval_ms);
            passes.fine = !(timestamp_ms - t.last_fine_ms < t.config.search_fine_interval_ms);
            passes.coarse = passes.coarse || passes.fine;  // the fine pass leaves the large faces to it
            if (!passes.coarse && !passes.fine) {
                t.tracking = false;
                out->faces = 0;
                return FT_OK;
            }
        }
        if (gray) {
            t.gray = gray->view();  // shares the caller's pixels for this call; only read
            t.halves = ft::valid_halves(gray);
        } else {
            cv::Mat &pixels = t.own_gray.replace();
            if (t.own_gray.halves.empty()) t.own_gray.halves.emplace_back();
            ft::build_halves(t.own_gray, ft::gray_of(*frame, pixels, &t.own_gray.halves[0]));
            t.gray = t.own_gray.pixels;
            t.halves = ft::valid_halves(&t.own_gray);
        }
        ft_status status;
        if (t.tracking && t.config.track) {
            status = track(t, out, width, height);
        } else {
            t.tracking = false;
            status = full_detection(t, out, width, height, passes);
        }
        if (paced && !out->face) {
            // A search ran on this frame (the passes due, or all of them after a lost track).
            if (passes.coarse) t.last_coarse_ms = timestamp_ms;
            if (passes.fine) t.last_fine_ms = timestamp_ms;
        }
        if (out->face) t.last_coarse_ms = t.last_fine_ms = NAN;
        t.gray = cv::Mat();  // never keep the caller's image past the call
        t.halves = nullptr;
        return status;
    });
}

ft_status ft_tracker_process(ft_tracker *tracker, const ft_image *frame, ft_observation *out, ft_error *error) {
    return process(tracker, frame, nullptr, 0, false, out, error);
}

ft_status ft_tracker_process_at(ft_tracker *tracker, const ft_image *frame, double timestamp_ms, ft_observation *out,
                                ft_error *error) {
    if (!std::isfinite(timestamp_ms)) return ft::set_error(error, "process: timestamp is not finite"), FT_ERR_ARGUMENT;
    return process(tracker, frame, nullptr, timestamp_ms, true, out, error);
}

ft_status ft_tracker_process_gray_at(ft_tracker *tracker, const ft_image *frame, const ft_image *gray, double timestamp_ms,
                                     ft_observation *out, ft_error *error) {
    if (!std::isfinite(timestamp_ms)) return ft::set_error(error, "process: timestamp is not finite"), FT_ERR_ARGUMENT;
    return process(tracker, frame, gray, timestamp_ms, true, out, error);
}

/// A fit of the 68 landmarks in a box of `frame` by `predict` (the engine's packed predictor or
/// dlib's own): the argument checks and the grey conversion both share.
extern "C++" template <typename Predict>
static ft_status fit_in_box(const ft_model *model, const ft_image *frame, double x, double y, double w, double h,
                            double *xy, ft_error *error, Predict &&predict) {
    if (!model || !frame || !xy) return ft::set_error(error, "fit: null argument"), FT_ERR_ARGUMENT;
    if (frame->empty() || (frame->type() != CV_8UC3 && frame->type() != CV_8UC1))
        return ft::set_error(error, "fit: empty frame"), FT_ERR_ARGUMENT;
    if (!(w > 1 && h > 1) || !std::isfinite(x) || !std::isfinite(y)) return ft::set_error(error, "fit: bad box"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "fit", [&] {
        cv::Mat gray;
        ft::gray_of(*frame, gray);
        dlib::cv_image<unsigned char> image(gray);
        dlib::rectangle rect((long)std::lround(x), (long)std::lround(y), (long)std::lround(x + w), (long)std::lround(y + h));
        fill_landmarks(predict(image, rect), xy);
        return FT_OK;
    });
}

ft_status ft_fit_landmarks(const ft_model *model, const ft_image *frame, double x, double y, double w, double h,
                           double *xy, ft_error *error) {
    return fit_in_box(model, frame, x, y, w, h, xy, error,
                      [&](const dlib::cv_image<unsigned char> &image, const dlib::rectangle &rect) {
                          return model->predictor(image, rect);
                      });
}

ft_status ft_reference_dlib_fit(const ft_model *model, const ft_image *frame, double x, double y, double w, double h,
                                double *xy, ft_error *error) {
    return fit_in_box(model, frame, x, y, w, h, xy, error,
                      [&](const dlib::cv_image<unsigned char> &image, const dlib::rectangle &rect) {
        // dlib's own shape_predictor for the same file, loaded on first use (tests, benchmarks).
        static std::mutex lock;
        static std::map<std::string, std::unique_ptr<dlib::shape_predictor>> loaded;
        const dlib::shape_predictor *predictor;
        {
            std::lock_guard<std::mutex> hold(lock);
            auto &slot = loaded[model->path];
            if (!slot) {
                auto fresh = std::make_unique<dlib::shape_predictor>();
                dlib::deserialize(model->path) >> *fresh;
                slot = std::move(fresh);
            }
            predictor = slot.get();
        }
        return (*predictor)(image, rect);
    });
}

ft_status ft_detect_faces(const ft_model *model, const ft_image *frame, double scale, double threshold,
                          ft_candidate *out, int capacity, int *count, ft_error *error) {
    if (!model || !frame || !count || (capacity > 0 && !out)) return ft::set_error(error, "detect: null argument"), FT_ERR_ARGUMENT;
    if (frame->empty()) return ft::set_error(error, "detect: empty frame"), FT_ERR_ARGUMENT;
    if (!(scale > 0.05 && scale <= 4)) return ft::set_error(error, "detect: scale %g not in 0.05...4", scale), FT_ERR_ARGUMENT;
    return ft::guarded(error, "detect", [&] {
        // dlib's object_detector as it is, on one thread (the naive baseline's detector): a copy
        // per thread and model, since scanning uses the detector's own buffers.
        thread_local std::map<const ft_model *, std::unique_ptr<dlib::frontal_face_detector>> detectors;
        auto &detector = detectors[model];
        if (!detector) detector = std::make_unique<dlib::frontal_face_detector>(model->detector);
        cv::Mat gray, storage;
        ft::gray_of(*frame, gray);
        cv::Rect whole(0, 0, gray.cols, gray.rows);
        cv::Mat scaled = scanned_region(gray, nullptr, whole, scale, false, storage);
        std::vector<dlib::rect_detection> detections;
        if (!scaled.empty()) ft::hog::detect_all(*detector, dlib::cv_image<unsigned char>(scaled), detections, threshold);
        std::vector<ft_candidate> found;
        for (const auto &d : detections) found.push_back(to_frame(d, whole, scale));
        sort_by_score(found);
        *count = (int)found.size();
        for (int i = 0; i < capacity && i < (int)found.size(); ++i) out[i] = found[i];
        return FT_OK;
    });
}

int ft_detector_filter_count(const ft_model *model) { return model ? (int)model->detector.num_detectors() : 0; }

/// The tracker's HOG scans of a whole frame at `scale` through a bank of the model's filters (one
/// per thread and model): filter `filter` alone, or all of them at once on the cores (-1).
static ft_status detect_with_bank(const ft_model *model, const ft_image *frame, double scale, double threshold, int filter,
                                  ft_candidate *out, int capacity, int *count, ft_error *error) {
    if (!model || !frame || !count || (capacity > 0 && !out)) return ft::set_error(error, "detect: null argument"), FT_ERR_ARGUMENT;
    if (frame->empty()) return ft::set_error(error, "detect: empty frame"), FT_ERR_ARGUMENT;
    if (!(scale > 0.05 && scale <= 4)) return ft::set_error(error, "detect: scale %g not in 0.05...4", scale), FT_ERR_ARGUMENT;
    if (filter < -1 || filter >= ft_detector_filter_count(model))
        return ft::set_error(error, "detect: filter %d not in 0...%d", filter, ft_detector_filter_count(model) - 1), FT_ERR_ARGUMENT;
    return ft::guarded(error, "detect", [&] {
        thread_local std::map<const ft_model *, std::unique_ptr<FilterBank>> banks;
        auto &bank = banks[model];
        if (!bank) bank = std::make_unique<FilterBank>(model->detector);
        cv::Mat gray, storage;
        ft::gray_of(*frame, gray);
        cv::Rect whole(0, 0, gray.cols, gray.rows);
        cv::Mat scaled = scanned_region(gray, nullptr, whole, scale, false, storage);
        *count = 0;
        if (scaled.empty()) return FT_OK;
        std::vector<dlib::rect_detection> kept;
        if (filter < 0) {
            kept = bank->detect(dlib::cv_image<unsigned char>(scaled), threshold);
        } else {
            ft::hog::load(bank->scanner, dlib::cv_image<unsigned char>(scaled));
            std::vector<dlib::rect_detection> found;
            bank->run((unsigned long)filter, threshold, found);
            kept = bank->suppress(found);
        }
        std::vector<ft_candidate> found;
        for (const auto &d : kept) found.push_back(to_frame(d, whole, scale));
        if (filter < 0) sort_by_score(found);  // best first, as ft_detect_faces and the tracker sort them
        *count = (int)found.size();
        for (int i = 0; i < capacity && i < (int)found.size(); ++i) out[i] = found[i];
        return FT_OK;
    });
}

ft_status ft_detect_faces_with_filter(const ft_model *model, const ft_image *frame, double scale, double threshold, int filter,
                                      ft_candidate *out, int capacity, int *count, ft_error *error) {
    if (filter < 0) return ft::set_error(error, "detect: filter %d not in 0...%d", filter, ft_detector_filter_count(model) - 1), FT_ERR_ARGUMENT;
    return detect_with_bank(model, frame, scale, threshold, filter, out, capacity, count, error);
}

ft_status ft_detect_faces_on_cores(const ft_model *model, const ft_image *frame, double scale, double threshold,
                                   ft_candidate *out, int capacity, int *count, ft_error *error) {
    return detect_with_bank(model, frame, scale, threshold, -1, out, capacity, count, error);
}

}  // extern "C"
