// The loaded face model (dlib's HOG frontal face detector and the 68-point shape predictor),
// shared by the detector, landmark and reference translation units. Internal to the shim.
#pragma once
#include "face_tracking.h"
#include "landmarks.hpp"

#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_processing/full_object_detection.h>

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

}  // namespace ft
