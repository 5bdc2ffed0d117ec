/*
 * COpenCV: where Debian's OpenCV 4.6 (libopencv-dev) keeps its headers, for the CFaceTracking
 * shim, the only code that includes them. OpenCV's headers are C++ and live under
 * /usr/include/opencv4, which the compiler does not search by itself; this system-library
 * target takes that search path from pkg-config ("opencv4"), where SwiftPM accepts it from a
 * package depended on by version (a `-I` flag in the shim's own settings would be an unsafe
 * flag). No Swift module imports this one: the header is empty on purpose.
 */
#ifndef LIVENESS_COPENCV_SHIM_H
#define LIVENESS_COPENCV_SHIM_H
#endif
