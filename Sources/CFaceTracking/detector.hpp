// The HOG face detector as a bank of filters over one scanner (a stream's buffers), and the
// scaling of the region it scans. Internal to the shim.
#pragma once
#include "face_tracking.h"

#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv/cv_image.h>
#include <opencv2/core.hpp>

#include <vector>

namespace ft {

/// The part of the grey frame HOG scans: `roi` scaled by `scale` (into `storage` unless it is the
/// frame itself); empty when it would be smaller than a HOG window. `halves`: the grey frame's
/// reductions by 2, 4, ... (or null). `search`: the reduction of a search (see detector.cpp).
cv::Mat scanned_region(const cv::Mat &gray, const std::vector<cv::Mat> *halves, cv::Rect roi, double scale, bool search,
                       cv::Mat &storage);

/// A detection of the scanned image as a candidate in frame pixels.
ft_candidate to_frame(const dlib::rect_detection &d, cv::Rect roi, double scale);

/// Sorts best first by score.
void sort_by_score(std::vector<ft_candidate> &found);

/// The frontal face detector's five filters (a face looking ahead, to either side, and tilted
/// either way), run one at a time over one HOG pyramid, as dlib's object_detector runs them all:
/// filtering is three quarters of a detection's cost, and a tracked face is nearly always found
/// by the filter that found it the last time.
struct FilterBank {
    using Scanner = dlib::frontal_face_detector::image_scanner_type;
    Scanner scanner;
    std::vector<Scanner::fhog_filterbank> filters;
    std::vector<double> biases;
    dlib::test_box_overlap overlap;

    explicit FilterBank(const dlib::frontal_face_detector &detector);
    /// Filter `i`'s detections on the loaded image, appended to `out` (scores as dlib's
    /// object_detector reports them).
    void run(unsigned long i, double threshold, std::vector<dlib::rect_detection> &out) const;
    /// dlib's non-maximum suppression: the best first, then each that overlaps none kept.
    std::vector<dlib::rect_detection> suppress(std::vector<dlib::rect_detection> all) const;
    /// What dlib's object_detector finds on `image` with these filters (its detections, scores and
    /// order), the filters run at once on the cores.
    std::vector<dlib::rect_detection> detect(const dlib::cv_image<unsigned char> &image, double threshold);
};

/// A copy of `detector` (same filters and settings) whose pyramid stops after `levels` levels.
dlib::frontal_face_detector limited_detector(const dlib::frontal_face_detector &detector, unsigned long levels);

}  // namespace ft
