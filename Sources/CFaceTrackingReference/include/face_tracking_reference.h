/*
 * Reference implementations for tests and benchmarks, kept out of the production shim: dlib's own
 * shape predictor and object detector, which the engine's packed fit and filter-bank scans must
 * equal, and OpenCV's own video reader, which the engine's decoder is measured against.
 */
#pragma once
#include "face_tracking.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * For tests and benchmarks: the same fit as ft_fit_landmarks with dlib's own
 * `dlib::shape_predictor` (loaded from the model's file on first use and kept for the process,
 * about 100 MB and 0.5 s), the reference the engine's packed evaluation must equal.
 */
ft_status ft_reference_dlib_fit(const ft_model *model, const ft_image *frame, double x, double y, double w, double h,
                                double *xy, ft_error *error);

/** For tests and benchmarks: dlib's object_detector as it is, on one thread, over the whole frame
 *  at `scale` (upsampling when > 1); boxes in frame pixels, best first. */
ft_status ft_reference_detect_faces(const ft_model *model, const ft_image *frame, double scale, double threshold,
                          ft_candidate *out, int capacity, int *count, ft_error *error);

/**
 * For benchmarks: decodes up to `limit` frames of `path` with OpenCV's VideoCapture (FFmpeg
 * backend, frames converted to BGR as OpenCV delivers them), the reader the engine used before
 * it decoded videos itself; `frames` receives how many it decoded.
 */
ft_status ft_reference_opencv_decode(const char *path, int64_t limit, int64_t *frames, ft_error *error);

#ifdef __cplusplus
}
#endif
