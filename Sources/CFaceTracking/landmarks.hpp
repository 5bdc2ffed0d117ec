// dlib's shape predictor (the 68-point landmark model) with its regression trees laid out for the
// memory: the same model file, the same tree walks and leaf additions in the same order, and the
// mean-to-current similarity of each cascade in closed form (dlib solves it with an SVD), so the
// same landmarks (the tests compare them fit for fit). Internal to the shim.
#pragma once

#include <dlib/image_processing/full_object_detection.h>
#include <dlib/image_processing/shape_predictor.h>
#include <dlib/opencv/cv_image.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ft {

/// A cascade of regression trees over a face box, as `dlib::shape_predictor` evaluates it.
///
/// dlib keeps every leaf's shape update (136 floats for 68 points) in its own heap block and
/// walks the trees one at a time, adding each leaf as soon as it is found: with 7,500 trees and a
/// 95 MB model, a fit waits on thousands of cache misses in a row (a third of a tracked 720p
/// frame's time by `perf`, although 8% of its instructions). Here the leaves of a cascade are one
/// array, the leaf of every tree is found first (the splits are small and stay in cache), and the
/// leaves are then added in dlib's order while the next ones are prefetched.
class LandmarkPredictor {
public:
    /// Reads a model in dlib's serialisation (`dlib::serialize(shape_predictor)`, version 1).
    /// Throws `dlib::serialization_error` or `std::runtime_error` naming what is wrong.
    void load(const std::string &path);
    /// Landmarks in the model (68 for the engine's).
    unsigned long num_parts() const { return initial_shape_.size() / 2; }
    /// The landmarks fitted in `rect`: what `dlib::shape_predictor::operator()(img, rect)` gives
    /// for the same model, bit for bit.
    dlib::full_object_detection operator()(const dlib::cv_image<unsigned char> &image, const dlib::rectangle &rect) const;

private:
    /// Floats on 64-byte boundaries (cache lines), freed with the owner.
    struct AlignedFloats {
        float *data = nullptr;
        AlignedFloats() = default;
        AlignedFloats(const AlignedFloats &) = delete;
        AlignedFloats &operator=(const AlignedFloats &) = delete;
        AlignedFloats(AlignedFloats &&other) noexcept : data(other.data) { other.data = nullptr; }
        ~AlignedFloats();
        void allocate(std::size_t count);
    };
    struct Split {
        uint32_t first, second;  // the feature pixels compared
        float threshold;
    };
    struct Cascade {
        std::vector<Split> splits;            // every tree's splits, tree after tree
        std::vector<uint32_t> split_offset;   // each tree's first split
        std::vector<uint32_t> split_count;    // each tree's splits (its leaves: one more)
        std::vector<uint32_t> leaf_offset;    // each tree's first leaf
        AlignedFloats leaves;                 // every leaf's shape update, `stride_` floats apart
        std::vector<unsigned long> anchor;    // each feature pixel's landmark of the mean shape
        std::vector<dlib::vector<float, 2>> deltas;  // and its offset from that landmark
    };

    dlib::matrix<float, 0, 1> initial_shape_;
    std::vector<Cascade> cascades_;
    std::size_t stride_ = 0;  // floats from one leaf to the next: the shape's size in whole cache lines
};

}  // namespace ft
