// dlib's shape predictor evaluated with its leaves in one array per cascade and prefetched: the
// same landmarks as dlib::shape_predictor, bit for bit (the tests compare the two).
#include "landmarks.hpp"

#include <cstdlib>
#include <fstream>
#include <new>
#include <stdexcept>

namespace ft {

namespace {
/// Trees ahead whose leaf is prefetched (into the core's L2 cache) while one is added: a leaf is
/// 9 cache lines. Measured in turn in one process, two runs: 8 trees into L1 0.94-1.01 ms a
/// fit, 16 into L1 0.96-1.04, 32 into L2 0.90-0.98.
constexpr std::size_t kPrefetchAhead = 32;
/// Floats in a 64-byte cache line.
constexpr std::size_t kLineFloats = 16;
}  // namespace

LandmarkPredictor::AlignedFloats::~AlignedFloats() { std::free(data); }

void LandmarkPredictor::AlignedFloats::allocate(std::size_t count) {
    std::free(data);
    data = nullptr;
    std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    data = static_cast<float *>(std::aligned_alloc(64, bytes ? bytes : 64));
    if (!data) throw std::bad_alloc();
}

void LandmarkPredictor::load(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    // dlib's serialisation of a shape_predictor: a version, the mean shape, the cascades of
    // trees, then each cascade's feature pixels (their landmark and offset).
    int version = 0;
    dlib::deserialize(version, in);
    if (version != 1) throw dlib::serialization_error("not a dlib shape predictor (version " + std::to_string(version) + ")");
    dlib::deserialize(initial_shape_, in);
    const long size = initial_shape_.size();
    if (size < 2 || size % 2 != 0) throw dlib::serialization_error("a mean shape of " + std::to_string(size) + " values");
    stride_ = ((std::size_t)size + kLineFloats - 1) / kLineFloats * kLineFloats;

    unsigned long count = 0;
    dlib::deserialize(count, in);
    if (count == 0 || count > 1000) throw dlib::serialization_error(std::to_string(count) + " cascades");
    std::vector<Cascade> cascades(count);
    for (Cascade &cascade : cascades) {
        // One cascade's trees at a time in dlib's form (a few MB), then packed.
        std::vector<dlib::impl::regression_tree> trees;
        dlib::deserialize(trees, in);
        std::size_t leaves = 0;
        for (const auto &tree : trees) {
            std::size_t splits = tree.splits.size();
            // dlib's walk needs full trees: 2^depth leaves, one more than the splits.
            if (tree.leaf_values.size() != splits + 1 || (tree.leaf_values.size() & splits) != 0)
                throw dlib::serialization_error("a tree of " + std::to_string(splits) + " splits and " +
                                                std::to_string(tree.leaf_values.size()) + " leaves");
            cascade.split_offset.push_back((uint32_t)cascade.splits.size());
            cascade.split_count.push_back((uint32_t)splits);
            cascade.leaf_offset.push_back((uint32_t)leaves);
            for (const auto &split : tree.splits) {
                if (split.idx1 > UINT32_MAX || split.idx2 > UINT32_MAX) throw dlib::serialization_error("a split's pixel index");
                cascade.splits.push_back(Split{(uint32_t)split.idx1, (uint32_t)split.idx2, split.thresh});
            }
            leaves += tree.leaf_values.size();
        }
        cascade.leaves.allocate(leaves * stride_);
        for (std::size_t t = 0; t < trees.size(); ++t) {
            for (std::size_t l = 0; l < trees[t].leaf_values.size(); ++l) {
                const auto &values = trees[t].leaf_values[l];
                if (values.size() != size) throw dlib::serialization_error("a leaf of " + std::to_string(values.size()) + " values");
                float *leaf = cascade.leaves.data + (cascade.leaf_offset[t] + l) * stride_;
                for (long j = 0; j < size; ++j) leaf[j] = values(j);
                for (std::size_t j = (std::size_t)size; j < stride_; ++j) leaf[j] = 0;
            }
        }
    }
    std::vector<std::vector<unsigned long>> anchors;
    std::vector<std::vector<dlib::vector<float, 2>>> deltas;
    dlib::deserialize(anchors, in);
    dlib::deserialize(deltas, in);
    if (anchors.size() != count || deltas.size() != count)
        throw dlib::serialization_error("feature pixels for " + std::to_string(anchors.size()) + " of " + std::to_string(count) + " cascades");
    for (unsigned long c = 0; c < count; ++c) {
        Cascade &cascade = cascades[c];
        if (anchors[c].size() != deltas[c].size()) throw dlib::serialization_error("feature pixels without their offsets");
        for (unsigned long anchor : anchors[c])
            if (anchor >= (unsigned long)size / 2) throw dlib::serialization_error("a feature pixel's landmark");
        for (const Split &split : cascade.splits)
            if (split.first >= anchors[c].size() || split.second >= anchors[c].size())
                throw dlib::serialization_error("a split of a pixel the cascade does not have");
        cascade.anchor = std::move(anchors[c]);
        cascade.deltas = std::move(deltas[c]);
    }
    cascades_ = std::move(cascades);
}

dlib::full_object_detection LandmarkPredictor::operator()(const dlib::cv_image<unsigned char> &image,
                                                          const dlib::rectangle &rect) const {
    // dlib::shape_predictor::operator(), with the leaves found first and added in its order.
    dlib::matrix<float, 0, 1> current = initial_shape_;
    thread_local std::vector<float> features;
    thread_local std::vector<const float *> chosen;
    const long size = current.size();
    for (const Cascade &cascade : cascades_) {
        dlib::impl::extract_feature_pixel_values(image, rect, current, initial_shape_, cascade.anchor, cascade.deltas, features);
        const std::size_t trees = cascade.split_count.size();
        chosen.resize(trees);
        const float *pixel = features.data();
        for (std::size_t t = 0; t < trees; ++t) {
            const Split *split = cascade.splits.data() + cascade.split_offset[t];
            const uint32_t count = cascade.split_count[t];
            uint32_t i = 0;
            // Left (2i + 1) when the difference exceeds the threshold, as dlib walks, without a
            // branch: the direction is a coin flip the predictor cannot learn (17% of a fit).
            while (i < count) {
                const Split &s = split[i];
                i = 2 * i + 2 - (uint32_t)(pixel[s.first] - pixel[s.second] > s.threshold);
            }
            chosen[t] = cascade.leaves.data + (cascade.leaf_offset[t] + (i - count)) * stride_;
        }
        auto prefetch = [&](const float *leaf) {
            for (std::size_t line = 0; line < stride_; line += kLineFloats) __builtin_prefetch(leaf + line, 0, 2);
        };
        for (std::size_t t = 0; t < trees && t < kPrefetchAhead; ++t) prefetch(chosen[t]);
        float *shape = &current(0);
        for (std::size_t t = 0; t < trees; ++t) {
            if (t + kPrefetchAhead < trees) prefetch(chosen[t + kPrefetchAhead]);
            const float *leaf = chosen[t];
            for (long j = 0; j < size; ++j) shape[j] += leaf[j];
        }
    }
    const dlib::point_transform_affine to_image = dlib::impl::unnormalizing_tform(rect);
    std::vector<dlib::point> parts((std::size_t)size / 2);
    for (std::size_t i = 0; i < parts.size(); ++i) parts[i] = to_image(dlib::impl::location(current, i));
    return dlib::full_object_detection(rect, parts);
}

}  // namespace ft
