// The loaded face model (dlib's HOG frontal face detector and the 68-point shape predictor),
// shared by the detector, landmark and reference translation units. Internal to the shim.
#pragma once
#include "face_tracking.h"
#include "landmarks.hpp"

#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_processing/full_object_detection.h>
#include <dlib/opencv/cv_image.h>

#include "internal.hpp"

#include <cmath>
#include <string>

struct ft_model {
    // The 68-point model, evaluated with its leaves packed (landmarks.hpp): dlib's landmarks.
    ft::LandmarkPredictor predictor;
    // The HOG face detector, deserialised once with the model (≈300 ms): each ft_detector copies
    // its filters (≈0.07 ms) because scanning uses the detector's own buffers, so threads cannot
    // share one.
    dlib::frontal_face_detector detector;
    std::string path;
};

namespace ft {

/// Copies the first 68 parts of `shape` into `out` (x0, y0, x1, y1, ... pixels).
void fill_landmarks(const dlib::full_object_detection &shape, double *out);

/// The grey pixels of `image` for a fit or a scan: a grey image's own pixels (shared, not
/// copied), or a BGR image converted into `storage`.
const cv::Mat &gray_pixels(const ft_image &image, cv::Mat &storage);

/// A fit of the 68 landmarks in a box (x, y, w, h pixels) of `frame` by `predict` (the engine's
/// packed predictor or dlib's own, `predict(image, rect)`): the argument checks and the grey
/// pixels both share.
template <typename Predict>
ft_status fit_in_box(const ft_model *model, const ft_image *frame, double x, double y, double w, double h, double *xy,
                     ft_error *error, Predict &&predict) {
    if (!model || !frame || !xy) return set_error(error, "fit: null argument"), FT_ERR_ARGUMENT;
    if (frame->empty() || (frame->type() != CV_8UC3 && frame->type() != CV_8UC1))
        return set_error(error, "fit: empty frame"), FT_ERR_ARGUMENT;
    if (!(w > 1 && h > 1) || !std::isfinite(x) || !std::isfinite(y)) return set_error(error, "fit: bad box"), FT_ERR_ARGUMENT;
    return guarded(error, "fit", [&] {
        cv::Mat storage;
        dlib::cv_image<unsigned char> image(gray_pixels(*frame, storage));
        dlib::rectangle rect((long)std::lround(x), (long)std::lround(y), (long)std::lround(x + w), (long)std::lround(y + h));
        fill_landmarks(predict(image, rect), xy);
        return FT_OK;
    });
}

}  // namespace ft
