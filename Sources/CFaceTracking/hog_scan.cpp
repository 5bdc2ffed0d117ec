// The baseline path of the HOG detector's scan, and the choice between it and the AVX2 path.
#include "hog_scan.hpp"
#include "hog_scan_avx2.hpp"
#include "face_tracking.h"

#include <cstdlib>
#include <cstring>

namespace ft::hog {

namespace {
bool use_avx2() {
    static const bool chosen = [] {
        const char *forced = std::getenv("LIVENESS_SIMD");
        if (forced && std::strcmp(forced, "baseline") == 0) return false;
        if (!avx2::built()) return false;
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
        return false;
#endif
    }();
    return chosen;
}
}  // namespace

void load(Scanner &scanner, const dlib::cv_image<unsigned char> &image) {
    if (use_avx2()) return avx2::load(&scanner, &image);
    scanner.load(image);
}

void detect(const Scanner &scanner, const Scanner::fhog_filterbank &filter, Detections &out, double threshold) {
    if (use_avx2()) return avx2::detect(&scanner, &filter, &out, threshold);
    scanner.detect(filter, out, threshold);
}

void detect_all(dlib::frontal_face_detector &detector, const dlib::cv_image<unsigned char> &image,
                std::vector<dlib::rect_detection> &out, double threshold) {
    if (use_avx2()) return avx2::detect_all(&detector, &image, &out, threshold);
    detector(image, out, threshold);
}

const char *instruction_set() { return use_avx2() ? "avx2" : "baseline"; }

}  // namespace ft::hog

#if !defined(__OPTIMIZE__)
#warning "CFaceTracking is being built without optimisation: dlib's detector will run about 150x slower. Build with -c release, or pass -Xcxx -O2 to swift build / swift test (README, Building)."
#endif

extern "C" ft_build_info ft_build(void) {
    ft_build_info info;
#if defined(__OPTIMIZE__)
    info.optimised = 1;
#else
    info.optimised = 0;
#endif
    info.simd = ft::hog::instruction_set();
    return info;
}
