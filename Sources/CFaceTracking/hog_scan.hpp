// The HOG detector's two costly steps (the feature pyramid and the filters over it), compiled
// twice: for baseline x86-64, and for AVX2 with FMA (hog_scan_avx2.cpp), chosen at run time by
// the CPU that runs the engine rather than the one that built it.
#pragma once

#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv/cv_image.h>

#include <utility>
#include <vector>

namespace ft::hog {

/// The frontal face detector's scanner: dlib's `scan_fhog_pyramid<pyramid_down<6>>`.
using Scanner = dlib::frontal_face_detector::image_scanner_type;
/// Detections of one filter: scores (before the filter's bias is removed) and boxes in the
/// scanned image's pixels.
using Detections = std::vector<std::pair<double, dlib::rectangle>>;

/// Builds `image`'s HOG pyramid in `scanner` (dlib's `scanner.load(image)`).
void load(Scanner &scanner, const dlib::cv_image<unsigned char> &image);
/// Runs `filter` over the loaded pyramid (dlib's `scanner.detect(filter, out, threshold)`).
void detect(const Scanner &scanner, const Scanner::fhog_filterbank &filter, Detections &out, double threshold);

/// dlib's whole `object_detector` on `image` (`detector(image, out, threshold)`): the naive
/// baseline's detector.
void detect_all(dlib::frontal_face_detector &detector, const dlib::cv_image<unsigned char> &image,
                std::vector<dlib::rect_detection> &out, double threshold);

/// The code path in use: "avx2" (AVX2 and FMA, when the CPU has both) or "baseline". The
/// environment variable LIVENESS_SIMD=baseline forces the baseline path, for measurements and
/// tests of the other path on the same machine.
const char *instruction_set();


}  // namespace ft::hog
