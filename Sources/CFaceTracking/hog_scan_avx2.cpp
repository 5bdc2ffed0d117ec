// The AVX2 path of the HOG detector's scan: dlib's own pyramid and filter code, compiled here for
// AVX2 with FMA (dlib picks its 8-wide SIMD types from DLIB_HAVE_AVX*), while the rest of the
// shim is built for baseline x86-64. hog_scan.cpp calls it only on a CPU that has both.
//
// One rule makes this safe: every dlib function this file compiles has internal linkage (the
// `internal_linkage` attribute over the dlib headers), so none of these AVX2 copies can stand in,
// at link time, for the baseline copy of the same inline or template function in another file,
// nor the other way round. The standard library and OpenCV are included before that region and
// stay as they are everywhere else.
#if defined(__x86_64__) && defined(__clang__)

// Everything dlib's headers include from outside dlib, first, so it is compiled as usual.
#include <opencv2/core.hpp>
#include <opencv2/core/types_c.h>
#include <opencv2/imgproc.hpp>

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <complex>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <future>
#include <iomanip>
#include <iosfwd>
#include <iostream>
#include <istream>
#include <iterator>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <ostream>
#include <queue>
#include <random>
#include <set>
#include <sstream>
#include <stack>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#define dlib dlib_avx2
#define DLIB_HAVE_SSE2
#define DLIB_HAVE_SSE3
#define DLIB_HAVE_SSE41
#define DLIB_HAVE_AVX
#define DLIB_HAVE_AVX2
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#pragma clang attribute push(__attribute__((internal_linkage)), apply_to = function)
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/opencv/cv_image.h>
#pragma clang attribute pop
#pragma clang attribute pop

#include "hog_scan_avx2.hpp"

namespace ft::hog::avx2 {
namespace {
using Scanner = dlib::frontal_face_detector::image_scanner_type;
using Detections = std::vector<std::pair<double, dlib::rectangle>>;
}  // namespace

bool built() { return true; }

__attribute__((target("avx2,fma"))) void load(void *scanner, const void *image) {
    static_cast<Scanner *>(scanner)->load(*static_cast<const dlib::cv_image<unsigned char> *>(image));
}

__attribute__((target("avx2,fma"))) void detect(const void *scanner, const void *filter, void *out, double threshold) {
    const auto &s = *static_cast<const Scanner *>(scanner);
    s.detect(*static_cast<const Scanner::fhog_filterbank *>(filter), *static_cast<Detections *>(out), threshold);
}

__attribute__((target("avx2,fma"))) void detect_all(void *detector, const void *image, void *out, double threshold) {
    auto &d = *static_cast<dlib::frontal_face_detector *>(detector);
    d(*static_cast<const dlib::cv_image<unsigned char> *>(image), *static_cast<std::vector<dlib::rect_detection> *>(out),
      threshold);
}

}  // namespace ft::hog::avx2

#else  // not x86-64 built by clang: the baseline path only (hog_scan.cpp never calls these).

#include "hog_scan_avx2.hpp"

namespace ft::hog::avx2 {
bool built() { return false; }
void load(void *, const void *) {}
void detect(const void *, const void *, void *, double) {}
void detect_all(void *, const void *, void *, double) {}
}  // namespace ft::hog::avx2

#endif
