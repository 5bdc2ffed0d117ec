// The AVX2 path of the HOG scan (hog_scan_avx2.cpp). Its dlib types are that file's own (internal
// linkage), laid out as everywhere else but not the same C++ types, so they cross as addresses:
// `scanner` is a `ft::hog::Scanner`, `image` a `dlib::cv_image<unsigned char>`, `filter` a
// `Scanner::fhog_filterbank`, `out` a `ft::hog::Detections` (hog_scan.hpp); for `detect_all`, `detector` is a
// `dlib::frontal_face_detector` and `out` a `std::vector<dlib::rect_detection>`.
#pragma once

namespace ft::hog::avx2 {
/// True when this build holds the AVX2 path (x86-64, built by clang).
bool built();
void load(void *scanner, const void *image);
void detect(const void *scanner, const void *filter, void *out, double threshold);
void detect_all(void *detector, const void *image, void *out, double threshold);
}  // namespace ft::hog::avx2
