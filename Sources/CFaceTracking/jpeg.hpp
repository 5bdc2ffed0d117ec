// JPEG header reading (internal to the shim). Never included by Swift.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ft {

/// True when the bytes start with a JPEG SOI marker.
bool is_jpeg(const uint8_t *bytes, size_t count);

/// The width and height a JPEG declares (libjpeg's jpeg_read_header); false when the header
/// cannot be read.
bool jpeg_size(const uint8_t *bytes, size_t count, int *width, int *height);

}  // namespace ft
