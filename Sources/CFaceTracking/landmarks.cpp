// dlib's shape predictor evaluated with its leaves in one array per cascade and prefetched, and
// each cascade's similarity in closed form: the same landmarks as dlib::shape_predictor (the
// tests compare the two fit for fit).
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
/// The 2x2 part of dlib's `find_tform_between_shapes(reference, current)`: the similarity
/// (scale times rotation) that best maps the reference shape onto the current one in least
/// squares (Umeyama's method, as dlib's `find_similarity_transform`), in closed form. With
/// cov = [[a, b], [c, d]] the cross-covariance of the centred points, the best rotation has
/// cos θ ∝ a + d and sin θ ∝ c − b, and Umeyama's trace(DS) is sqrt((a + d)² + (c − b)²), so
/// scale × rotation = [[a + d, b − c], [c − b, a + d]] / σ²(reference): dlib reaches the same
/// matrix through a singular value decomposition in LAPACK (30 calls a fit, 7% of the tracking
/// thread's time for 2x2 matrices). The sums are dlib's, in double and in its order; the result
/// differs from dlib's by rounding in the last bits of a double, below what the cast to float
/// keeps. Returns false (the caller then asks dlib) when the reference shape is a single point.
bool similarity_between_shapes(const dlib::matrix<float, 0, 1> &from, const dlib::matrix<float, 0, 1> &to,
                               dlib::matrix<float, 2, 2> &out) {
    const long n = from.size() / 2;
    if (n < 2) return false;
    double mfx = 0, mfy = 0, mtx = 0, mty = 0;
    for (long i = 0; i < n; ++i) {
        mfx += from(2 * i), mfy += from(2 * i + 1);
        mtx += to(2 * i), mty += to(2 * i + 1);
    }
    mfx /= n, mfy /= n, mtx /= n, mty /= n;
    double sigma_from = 0, a = 0, b = 0, c = 0, d = 0;
    for (long i = 0; i < n; ++i) {
        double fx = from(2 * i) - mfx, fy = from(2 * i + 1) - mfy;
        double tx = to(2 * i) - mtx, ty = to(2 * i + 1) - mty;
        sigma_from += fx * fx + fy * fy;
        a += tx * fx, b += tx * fy, c += ty * fx, d += ty * fy;
    }
    sigma_from /= n;
    if (sigma_from == 0) return false;
    a /= n, b /= n, c /= n, d /= n;
    const double cosine = (a + d) / sigma_from, sine = (c - b) / sigma_from;
    out = dlib::matrix<float, 2, 2>();
    out(0, 0) = (float)cosine, out(0, 1) = (float)-sine;
    out(1, 0) = (float)sine, out(1, 1) = (float)cosine;
    return true;
}

/// dlib's `extract_feature_pixel_values` (the grey level under each of the cascade's feature
/// pixels, placed by the similarity between the mean shape and the current one), with the
/// similarity in closed form and the box's transform made once a fit rather than once a cascade.
void feature_pixel_values(const dlib::cv_image<unsigned char> &image, const dlib::point_transform_affine &to_image,
                          const dlib::matrix<float, 0, 1> &current, const dlib::matrix<float, 0, 1> &reference,
                          const std::vector<unsigned long> &anchor, const std::vector<dlib::vector<float, 2>> &deltas,
                          std::vector<float> &values) {
    dlib::matrix<float, 2, 2> tform;
    if (!similarity_between_shapes(reference, current, tform))
        tform = dlib::matrix_cast<float>(dlib::impl::find_tform_between_shapes(reference, current).get_m());
    const dlib::rectangle area = dlib::get_rect(image);
    values.resize(deltas.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        dlib::point p = to_image(tform * deltas[i] + dlib::impl::location(current, anchor[i]));
        values[i] = area.contains(p) ? (float)image[p.y()][p.x()] : 0.0f;
    }
}
/// Adds the `trees` leaves `chosen` (each `stride` floats apart, the shape's `size` first) to
/// `shape`, in order, prefetching the leaves ahead. Additions only, so the AVX2 copy (8 floats at
/// a time, chosen at run time on CPUs that have it) gives the baseline copy's sums bit for bit.
#if defined(__x86_64__) && defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void add_leaves(float *shape, std::size_t size, const float *const *chosen, std::size_t trees, std::size_t stride) {
    auto prefetch = [&](const float *leaf) {
        for (std::size_t line = 0; line < stride; line += kLineFloats) __builtin_prefetch(leaf + line, 0, 2);
    };
    for (std::size_t t = 0; t < trees && t < kPrefetchAhead; ++t) prefetch(chosen[t]);
    for (std::size_t t = 0; t < trees; ++t) {
        if (t + kPrefetchAhead < trees) prefetch(chosen[t + kPrefetchAhead]);
        const float *leaf = chosen[t];
        for (std::size_t j = 0; j < size; ++j) shape[j] += leaf[j];
    }
}
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
    const dlib::point_transform_affine to_image = dlib::impl::unnormalizing_tform(rect);
    for (const Cascade &cascade : cascades_) {
        feature_pixel_values(image, to_image, current, initial_shape_, cascade.anchor, cascade.deltas, features);
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
        add_leaves(&current(0), (std::size_t)size, chosen.data(), trees, stride_);
    }
    std::vector<dlib::point> parts((std::size_t)size / 2);
    for (std::size_t i = 0; i < parts.size(); ++i) parts[i] = to_image(dlib::impl::location(current, i));
    return dlib::full_object_detection(rect, parts);
}

}  // namespace ft
