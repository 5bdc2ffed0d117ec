// PNG decoding with libpng (internal to the shim). Never included by Swift.
#pragma once
#include "internal.hpp"

#include <cstddef>
#include <cstdint>

namespace ft {

/// True when the bytes start with the PNG signature.
bool is_png(const uint8_t *bytes, size_t count);

/// Decodes PNG bytes to 8-bit BGR as cv::imread(IMREAD_COLOR) would, with libpng's warnings
/// kept off the terminal and the size checked against ft_limits from the header.
ft_status decode_png(const uint8_t *bytes, size_t count, const char *what, cv::Mat &out, ft_error *error);

}  // namespace ft
