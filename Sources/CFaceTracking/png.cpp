// PNG decoding with libpng directly (the codec OpenCV itself uses for PNG), for two reasons:
// OpenCV leaves libpng's default warning handler in place, which prints lines such as
// "libpng warning: iCCP: known incorrect sRGB profile" on the user's terminal; and the image
// size is checked against ft_limits from the header, before any row is allocated. The
// transforms are OpenCV's for IMREAD_COLOR (8 bits, alpha dropped, grey and palette expanded to
// BGR, no gamma correction), so the pixels are the ones cv::imread gives.
#include "png.hpp"

#include <png.h>

#include <csetjmp>
#include <cstring>
#include <vector>

namespace ft {

namespace {

struct Reader {
    const uint8_t *bytes;
    size_t count;
    size_t offset;
    char message[200];
};

void read_bytes(png_structp png, png_bytep out, png_size_t length) {
    auto *reader = static_cast<Reader *>(png_get_io_ptr(png));
    if (length > reader->count - reader->offset) png_error(png, "the PNG data ends early (truncated)");
    std::memcpy(out, reader->bytes + reader->offset, length);
    reader->offset += length;
}

void on_error(png_structp png, png_const_charp message) {
    auto *reader = static_cast<Reader *>(png_get_error_ptr(png));
    std::snprintf(reader->message, sizeof reader->message, "%s", message);
    png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {
    // A profile or chunk libpng finds odd does not stop the decode; nothing to tell the user.
}

/// The libpng part, free of C++ objects with destructors between setjmp and longjmp.
/// Returns 0 on success, 1 on a libpng error, 2 when the size exceeds the limits.
int decode(Reader &reader, const ft_limits &limits, int *width_out, int *height_out, uint8_t **pixels_out,
           size_t *stride_out) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, on_error, on_warning);
    if (!png) return 1;
    png_infop info = png_create_info_struct(png);
    uint8_t *volatile pixels = nullptr;
    png_bytep *volatile rows = nullptr;
    if (!info) {
        png_destroy_read_struct(&png, nullptr, nullptr);
        return 1;
    }
    if (setjmp(png_jmpbuf(png))) {
        std::free(pixels);
        std::free(rows);
        png_destroy_read_struct(&png, &info, nullptr);
        return 1;
    }
    png_set_read_fn(png, &reader, read_bytes);
    png_read_info(png, info);
    png_uint_32 width = 0, height = 0;
    int depth = 0, color = 0;
    png_get_IHDR(png, info, &width, &height, &depth, &color, nullptr, nullptr, nullptr);
    *width_out = (int)width;
    *height_out = (int)height;
    if ((int64_t)width * height > limits.max_frame_pixels || width > (png_uint_32)limits.max_frame_side ||
        height > (png_uint_32)limits.max_frame_side) {
        png_destroy_read_struct(&png, &info, nullptr);
        return 2;
    }
    if (depth == 16) png_set_strip_16(png);
    if (color & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if ((color & PNG_COLOR_MASK_COLOR) == 0 && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if ((color & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png), png_set_strip_alpha(png);
    png_set_bgr(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t stride = png_get_rowbytes(png, info);
    if (stride != (size_t)width * 3) png_error(png, "unexpected row layout after the colour transforms");
    pixels = static_cast<uint8_t *>(std::malloc(stride * height));
    rows = static_cast<png_bytep *>(std::malloc(sizeof(png_bytep) * height));
    if (!pixels || !rows) png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < height; ++y) rows[y] = pixels + y * stride;
    png_read_image(png, rows);
    png_read_end(png, nullptr);
    std::free(rows);
    png_destroy_read_struct(&png, &info, nullptr);
    *pixels_out = pixels;
    *stride_out = stride;
    return 0;
}

}  // namespace

bool is_png(const uint8_t *bytes, size_t count) { return count >= 8 && png_sig_cmp(bytes, 0, 8) == 0; }

ft_status decode_png(const uint8_t *bytes, size_t count, const char *what, cv::Mat &out, ft_error *error) {
    Reader reader{bytes, count, 0, {0}};
    ft_limits limits = ft_limits_get();
    int width = 0, height = 0;
    uint8_t *pixels = nullptr;
    size_t stride = 0;
    int result = decode(reader, limits, &width, &height, &pixels, &stride);
    if (result == 2) {
        set_error(error, "%s: the image is %dx%d pixels, larger than the limit (%lld megapixels, %d pixels a side); "
                         "it was not decoded", what, width, height, (long long)(limits.max_frame_pixels / 1000000),
                  limits.max_frame_side);
        return FT_ERR_LIMIT;
    }
    if (result != 0) {
        if (std::strstr(reader.message, "exceeds user limit") || std::strstr(reader.message, "too large"))
            return set_error(error, "%s: the image is larger than the limit (%d pixels a side); it was not decoded", what,
                             limits.max_frame_side), FT_ERR_LIMIT;
        set_error(error, "%s: not a PNG that can be decoded (%s)", what, reader.message[0] ? reader.message : "corrupt");
        return FT_ERR_DECODE;
    }
    cv::Mat wrapped(height, width, CV_8UC3, pixels, stride);
    out = wrapped.clone();
    std::free(pixels);
    return FT_OK;
}

}  // namespace ft
