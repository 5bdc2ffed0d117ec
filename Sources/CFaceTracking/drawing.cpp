// Drawing for annotated videos and plots (OpenCV imgproc). Failures are ignored: drawing
// never stops an analysis.
#include "internal.hpp"

#include <opencv2/imgproc.hpp>

#include <vector>

static cv::Scalar color(int blue, int green, int red) { return cv::Scalar(blue, green, red); }

static std::vector<cv::Point> points(const float *xy, int count) {
    std::vector<cv::Point> result;
    result.reserve(count > 0 ? count : 0);
    for (int i = 0; i < count; ++i) result.emplace_back(cvRound(xy[2 * i]), cvRound(xy[2 * i + 1]));
    return result;
}

extern "C" {

void ft_draw_circle(ft_image *image, double cx, double cy, double radius, int blue, int green, int red, int thickness) {
    if (!image || image->empty()) return;
    ft::quietly([&] {
        cv::circle(image->edit(), cv::Point(cvRound(cx), cvRound(cy)), cvRound(radius), color(blue, green, red),
                   thickness, cv::LINE_AA);
    });
}

void ft_draw_line(ft_image *image, double x0, double y0, double x1, double y1, int blue, int green, int red, int thickness) {
    if (!image || image->empty()) return;
    ft::quietly([&] {
        cv::line(image->edit(), cv::Point(cvRound(x0), cvRound(y0)), cv::Point(cvRound(x1), cvRound(y1)),
                 color(blue, green, red), thickness, cv::LINE_AA);
    });
}

void ft_draw_rect(ft_image *image, double x, double y, double w, double h, int blue, int green, int red, int thickness) {
    if (!image || image->empty()) return;
    ft::quietly([&] {
        cv::rectangle(image->edit(), cv::Rect(cvRound(x), cvRound(y), cvRound(w), cvRound(h)), color(blue, green, red),
                      thickness, cv::LINE_8);
    });
}

void ft_draw_points(ft_image *image, const float *xy, int count, double radius, int blue, int green, int red) {
    if (!image || image->empty() || !xy) return;
    ft::quietly([&] {
        for (const auto &p : points(xy, count))
            cv::circle(image->edit(), p, std::max(1, cvRound(radius)), color(blue, green, red), -1, cv::LINE_AA);
    });
}

void ft_draw_polyline(ft_image *image, const float *xy, int count, int blue, int green, int red, int thickness) {
    if (!image || image->empty() || !xy || count < 2) return;
    ft::quietly([&] {
        std::vector<std::vector<cv::Point>> lines{points(xy, count)};
        cv::polylines(image->edit(), lines, false, color(blue, green, red), thickness, cv::LINE_AA);
    });
}

void ft_draw_text(ft_image *image, const char *text, double x, double y, double scale, int blue, int green, int red,
                  int thickness) {
    if (!image || image->empty() || !text) return;
    ft::quietly([&] {
        cv::putText(image->edit(), text, cv::Point(cvRound(x), cvRound(y)), cv::FONT_HERSHEY_SIMPLEX, scale * 0.75,
                    color(blue, green, red), thickness, cv::LINE_AA);
    });
}

}  // extern "C"
