// The size a JPEG declares in its header (libjpeg), read before OpenCV decodes it: OpenCV 4.6
// fixes its own image-size limit when the library loads, so the engine checks ft_limits itself.
#include "jpeg.hpp"

#include <csetjmp>
#include <cstdio>
#include <jpeglib.h>

namespace ft {

namespace {

struct ErrorManager {
    jpeg_error_mgr base;
    jmp_buf jump;
};

void on_error(j_common_ptr info) {
    auto *manager = reinterpret_cast<ErrorManager *>(info->err);
    longjmp(manager->jump, 1);
}

void on_message(j_common_ptr) {}

}  // namespace

bool is_jpeg(const uint8_t *bytes, size_t count) {
    return count >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF;
}

bool jpeg_size(const uint8_t *bytes, size_t count, int *width, int *height) {
    jpeg_decompress_struct info;
    ErrorManager manager;
    info.err = jpeg_std_error(&manager.base);
    manager.base.error_exit = on_error;
    manager.base.output_message = on_message;
    if (setjmp(manager.jump)) {
        jpeg_destroy_decompress(&info);
        return false;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, bytes, (unsigned long)count);
    jpeg_read_header(&info, TRUE);
    *width = (int)info.image_width;
    *height = (int)info.image_height;
    jpeg_destroy_decompress(&info);
    return true;
}

}  // namespace ft
