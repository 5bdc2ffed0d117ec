// The HOG face detector of one stream (ft_detector): whole scans of a region at a scale, all
// filters at once on the cores, and filter-by-filter scans for confirming a known face.
#include "detector.hpp"
#include "hog_scan.hpp"
#include "internal.hpp"
#include "model.hpp"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <memory>

namespace ft {

/// `halves` make a reduction by 4 or more cheaper: it is taken from the smallest of them still
/// at least the scanned size, bilinear below twice that size (`ft::area_reduce`; area-averaging a
/// level at a ratio just over 2 took OpenCV's general area path, 1 M instructions a tracked 720p
/// frame). A `search` (for a face not yet tracked, at a fixed cadence on every frame without one)
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

ft_candidate to_frame(const dlib::rect_detection &d, cv::Rect roi, double scale) {
    ft_candidate c;
    c.x = roi.x + d.rect.left() / scale;
    c.y = roi.y + d.rect.top() / scale;
    c.w = d.rect.width() / scale;
    c.h = d.rect.height() / scale;
    c.score = d.detection_confidence;
    c.filter = (int)d.weight_index;
    return c;
}

void sort_by_score(std::vector<ft_candidate> &found) {
    std::sort(found.begin(), found.end(), [](const ft_candidate &a, const ft_candidate &b) { return a.score > b.score; });
}

FilterBank::FilterBank(const dlib::frontal_face_detector &detector) : overlap(detector.get_overlap_tester()) {
    scanner.copy_configuration(detector.get_scanner());
    for (unsigned long i = 0; i < detector.num_detectors(); ++i) {
        const auto &w = detector.get_w(i);
        filters.push_back(scanner.build_fhog_filterbank(w));
        biases.push_back(w(scanner.get_num_dimensions()));
    }
}

void FilterBank::run(unsigned long i, double threshold, std::vector<dlib::rect_detection> &out) const {
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

std::vector<dlib::rect_detection> FilterBank::suppress(std::vector<dlib::rect_detection> all) const {
    std::sort(all.rbegin(), all.rend());
    std::vector<dlib::rect_detection> kept;
    for (const auto &d : all) {
        bool overlaps = false;
        for (const auto &k : kept) overlaps = overlaps || overlap(k.rect, d.rect);
        if (!overlaps) kept.push_back(d);
    }
    return kept;
}

/// One HOG pyramid, the filters run at once on the cores (cv::parallel_for_, each filter's
/// detections kept apart), then gathered in filter order and suppressed as dlib does. A search
/// without a face runs on an otherwise idle core this way: the decoder has little to do for the
/// tracking thread then.
std::vector<dlib::rect_detection> FilterBank::detect(const dlib::cv_image<unsigned char> &image, double threshold) {
    ft::hog::load(scanner, image);
    std::vector<std::vector<dlib::rect_detection>> each(filters.size());
    cv::parallel_for_(cv::Range(0, (int)filters.size()), [&](const cv::Range &range) {
        for (int i = range.start; i < range.end; ++i) run((unsigned long)i, threshold, each[i]);
    }, (double)filters.size());
    std::vector<dlib::rect_detection> all;
    for (const auto &found : each) all.insert(all.end(), found.begin(), found.end());
    return suppress(std::move(all));
}

dlib::frontal_face_detector limited_detector(const dlib::frontal_face_detector &detector, unsigned long levels) {
    dlib::frontal_face_detector::image_scanner_type scanner;
    scanner.copy_configuration(detector.get_scanner());
    scanner.set_max_pyramid_levels(levels);
    std::vector<dlib::frontal_face_detector::feature_vector_type> weights;
    for (unsigned long i = 0; i < detector.num_detectors(); ++i) weights.push_back(detector.get_w(i));
    return dlib::frontal_face_detector(scanner, detector.get_overlap_tester(), weights);
}

}  // namespace ft

struct ft_detector {
    explicit ft_detector(const ft_model *m) : model(m), bank(m->detector) {}
    const ft_model *model;
    ft::FilterBank bank;
    // The bank with its pyramid cut after `limited_levels` levels, made on first use.
    std::unique_ptr<ft::FilterBank> limited;
    unsigned long limited_levels = 0;
    cv::Mat storage, gray_storage;
    // A filter-by-filter scan: the region loaded into `bank.scanner`, its scale, and the
    // detections of the filters run on it so far.
    bool loaded = false;
    cv::Rect roi;
    double scale = 1;
    std::vector<dlib::rect_detection> pending;
};

namespace {

/// The region (x, y, w, h) clipped to the image, or an error for bad arguments.
ft_status scan_arguments(const ft_detector *detector, const ft_image *image, double scale, const char *what, ft_error *error) {
    if (!detector || !image) return ft::set_error(error, "%s: null argument", what), FT_ERR_ARGUMENT;
    if (image->empty() || (image->type() != CV_8UC1 && image->type() != CV_8UC3))
        return ft::set_error(error, "%s: empty image, or neither grey nor BGR", what), FT_ERR_ARGUMENT;
    if (!(scale > 0.05 && scale <= 4)) return ft::set_error(error, "%s: scale %g not in 0.05...4", what, scale), FT_ERR_ARGUMENT;
    return FT_OK;
}

void write(const std::vector<ft_candidate> &found, ft_candidate *out, int capacity, int *count) {
    *count = (int)found.size();
    for (int i = 0; i < capacity && i < (int)found.size(); ++i) out[i] = found[i];
}

}  // namespace

extern "C" {

ft_status ft_detector_new(const ft_model *model, ft_detector **out, ft_error *error) {
    if (!model || !out) return ft::set_error(error, "detector: null argument"), FT_ERR_ARGUMENT;
    *out = nullptr;
    return ft::guarded(error, "detector", [&] {
        *out = new ft_detector(model);
        return FT_OK;
    });
}

void ft_detector_free(ft_detector *detector) {
    ft::quietly([&] { delete detector; });
}

ft_status ft_detector_scan(ft_detector *detector, const ft_image *image, int x, int y, int w, int h, double scale,
                           double threshold, int search, int pyramid_levels, ft_candidate *out, int capacity, int *count,
                           ft_error *error) {
    if (!count || (capacity > 0 && !out)) return ft::set_error(error, "scan: null argument"), FT_ERR_ARGUMENT;
    ft_status status = scan_arguments(detector, image, scale, "scan", error);
    if (status != FT_OK) return status;
    if (pyramid_levels < 0 || pyramid_levels > 64)
        return ft::set_error(error, "scan: pyramid levels %d not in 0...64", pyramid_levels), FT_ERR_ARGUMENT;
    *count = 0;
    return ft::guarded(error, "scan", [&] {
        auto &d = *detector;
        d.loaded = false;  // the scan reloads the scanner
        const cv::Mat &gray = ft::gray_pixels(*image, d.gray_storage);
        const std::vector<cv::Mat> *halves = image->type() == CV_8UC1 ? ft::valid_halves(image) : nullptr;
        cv::Rect roi = cv::Rect(x, y, w, h) & cv::Rect(0, 0, gray.cols, gray.rows);
        if (roi.area() <= 0) return FT_OK;
        cv::Mat scaled = ft::scanned_region(gray, halves, roi, scale, search != 0, d.storage);
        if (scaled.empty()) return FT_OK;
        ft::FilterBank *bank = &d.bank;
        if (pyramid_levels > 0) {
            if (!d.limited || d.limited_levels != (unsigned long)pyramid_levels) {
                d.limited = std::make_unique<ft::FilterBank>(ft::limited_detector(d.model->detector, pyramid_levels));
                d.limited_levels = pyramid_levels;
            }
            bank = d.limited.get();
        }
        std::vector<ft_candidate> found;
        for (const auto &detection : bank->detect(dlib::cv_image<unsigned char>(scaled), threshold))
            found.push_back(ft::to_frame(detection, roi, scale));
        ft::sort_by_score(found);
        write(found, out, capacity, count);
        return FT_OK;
    });
}

ft_status ft_detector_load(ft_detector *detector, const ft_image *image, int x, int y, int w, int h, double scale,
                           int *loaded, ft_error *error) {
    if (!loaded) return ft::set_error(error, "load: null argument"), FT_ERR_ARGUMENT;
    ft_status status = scan_arguments(detector, image, scale, "load", error);
    if (status != FT_OK) return status;
    *loaded = 0;
    return ft::guarded(error, "load", [&] {
        auto &d = *detector;
        d.loaded = false;
        d.pending.clear();
        const cv::Mat &gray = ft::gray_pixels(*image, d.gray_storage);
        const std::vector<cv::Mat> *halves = image->type() == CV_8UC1 ? ft::valid_halves(image) : nullptr;
        cv::Rect roi = cv::Rect(x, y, w, h) & cv::Rect(0, 0, gray.cols, gray.rows);
        if (roi.area() <= 0) return FT_OK;
        cv::Mat scaled = ft::scanned_region(gray, halves, roi, scale, false, d.storage);
        if (scaled.empty()) return FT_OK;
        ft::hog::load(d.bank.scanner, dlib::cv_image<unsigned char>(scaled));
        d.loaded = true;
        d.roi = roi;
        d.scale = scale;
        *loaded = 1;
        return FT_OK;
    });
}

ft_status ft_detector_run_filter(ft_detector *detector, int filter, double threshold, ft_error *error) {
    if (!detector) return ft::set_error(error, "filter: null argument"), FT_ERR_ARGUMENT;
    if (!detector->loaded) return ft::set_error(error, "filter: no region loaded"), FT_ERR_ARGUMENT;
    if (filter < 0 || filter >= (int)detector->bank.filters.size())
        return ft::set_error(error, "filter: %d not in 0...%d", filter, (int)detector->bank.filters.size() - 1), FT_ERR_ARGUMENT;
    return ft::guarded(error, "filter", [&] {
        detector->bank.run((unsigned long)filter, threshold, detector->pending);
        return FT_OK;
    });
}

ft_status ft_detector_suppressed(ft_detector *detector, ft_candidate *out, int capacity, int *count, ft_error *error) {
    if (!detector || !count || (capacity > 0 && !out)) return ft::set_error(error, "suppressed: null argument"), FT_ERR_ARGUMENT;
    *count = 0;
    if (!detector->loaded) return ft::set_error(error, "suppressed: no region loaded"), FT_ERR_ARGUMENT;
    return ft::guarded(error, "suppressed", [&] {
        std::vector<ft_candidate> found;
        for (const auto &d : detector->bank.suppress(detector->pending)) found.push_back(ft::to_frame(d, detector->roi, detector->scale));
        write(found, out, capacity, count);
        return FT_OK;
    });
}

}  // extern "C"
