// Reference implementations for tests and benchmarks (a target of their own, kept out of the
// production shim): dlib's own shape predictor and object detector, which the engine's packed fit
// and filter-bank scans must equal, and OpenCV's own video reader.
#include "detector.hpp"
#include "hog_scan.hpp"
#include "internal.hpp"
#include "model.hpp"
#include "picture.hpp"
#include "container.hpp"
#include "face_tracking_reference.h"

#include <dlib/image_processing/shape_predictor.h>
#include <opencv2/videoio.hpp>

#include <sys/stat.h>
#include <cerrno>
#include <cstring>

#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>

extern "C" {

ft_status ft_reference_dlib_fit(const ft_model *model, const ft_image *frame, double x, double y, double w, double h,
                                double *xy, ft_error *error) {
    return ft::fit_in_box(model, frame, x, y, w, h, xy, error,
                          [&](const dlib::cv_image<unsigned char> &image, const dlib::rectangle &rect) {
        // dlib's own shape_predictor for the same file, loaded on first use (about 100 MB, 0.5 s)
        // and kept for the process: it is for tests and benchmarks only.
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

ft_status ft_reference_detect_faces(const ft_model *model, const ft_image *frame, double scale, double threshold,
                          ft_candidate *out, int capacity, int *count, ft_error *error) {
    if (!model || !frame || !count || (capacity > 0 && !out)) return ft::set_error(error, "detect: null argument"), FT_ERR_ARGUMENT;
    if (frame->empty()) return ft::set_error(error, "detect: empty frame"), FT_ERR_ARGUMENT;
    if (!(scale > 0.05 && scale <= 4)) return ft::set_error(error, "detect: scale %g not in 0.05...4", scale), FT_ERR_ARGUMENT;
    return ft::guarded(error, "detect", [&] {
        // dlib's object_detector as it is, on one thread (the naive baseline's detector): a copy
        // of the model's (≈0.07 ms), since scanning uses the detector's own buffers.
        dlib::frontal_face_detector detector = model->detector;
        cv::Mat gray, storage;
        ft::gray_of(*frame, gray);
        cv::Rect whole(0, 0, gray.cols, gray.rows);
        cv::Mat scaled = ft::scanned_region(gray, nullptr, whole, scale, false, storage);
        std::vector<dlib::rect_detection> detections;
        if (!scaled.empty()) ft::hog::detect_all(detector, dlib::cv_image<unsigned char>(scaled), detections, threshold);
        std::vector<ft_candidate> found;
        for (const auto &d : detections) found.push_back(ft::to_frame(d, whole, scale));
        ft::sort_by_score(found);
        *count = (int)found.size();
        for (int i = 0; i < capacity && i < (int)found.size(); ++i) out[i] = found[i];
        return FT_OK;
    });
}

ft_status ft_reference_opencv_decode(const char *path, int64_t limit, int64_t *frames, ft_error *error) {
    if (!path || !frames) return ft::set_error(error, "reference decode: null argument"), FT_ERR_ARGUMENT;
    *frames = 0;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return ft::set_error(error, "%s: %s", path, errno ? std::strerror(errno) : "not a regular file"), FT_ERR_NOT_FOUND;
    return ft::guarded(error, path, [&] {
        ft::configure_libraries();
        cv::VideoCapture capture;
        if (!capture.open(path, cv::CAP_FFMPEG))
            return ft::set_error(error, "%s: OpenCV cannot open it", path), FT_ERR_UNSUPPORTED;
        cv::Mat frame;
        while (*frames < limit && capture.read(frame)) ++*frames;
        return FT_OK;
    });
}

}  // extern "C"
