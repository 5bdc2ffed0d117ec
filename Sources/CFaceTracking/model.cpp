// Loading the face model, and fitting the 68 landmarks in a box.
#include "internal.hpp"
#include "model.hpp"
#include "picture.hpp"

#include <dlib/opencv/cv_image.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <future>
#include <memory>
#include <sys/stat.h>

namespace ft {

void fill_landmarks(const dlib::full_object_detection &shape, double *out) {
    for (unsigned i = 0; i < shape.num_parts() && i < FT_LANDMARKS; ++i) {
        out[2 * i] = shape.part(i).x();
        out[2 * i + 1] = shape.part(i).y();
    }
}

const cv::Mat &gray_pixels(const ft_image &image, cv::Mat &storage) {
    if (image.type() == CV_8UC1) return image.view();
    ft::gray_of(image, storage);
    return storage;
}

}  // namespace ft

extern "C" {

ft_status ft_model_load(const char *path, ft_model **out, ft_error *error) {
    if (!path || !out) return ft::set_error(error, "model: null argument"), FT_ERR_ARGUMENT;
    *out = nullptr;
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
        *out = model.release();
        return FT_OK;
    });
    if (status == FT_ERR_INTERNAL) status = FT_ERR_MODEL;
    return status;
}

void ft_model_free(ft_model *model) {
    ft::quietly([&] { delete model; });
}

int ft_detector_filter_count(const ft_model *model) { return model ? (int)model->detector.num_detectors() : 0; }

ft_status ft_fit_landmarks(const ft_model *model, const ft_image *frame, double x, double y, double w, double h,
                           double *xy, ft_error *error) {
    return ft::fit_in_box(model, frame, x, y, w, h, xy, error,
                          [&](const dlib::cv_image<unsigned char> &image, const dlib::rectangle &rect) {
                              return model->predictor(image, rect);
                          });
}

}  // extern "C"
