/*
 * CSodium: Debian's libsodium (libsodium-dev) for the LivenessEvidence module, the only module
 * that imports it. Ed25519 signatures, SHA-256 and constant-time comparison all come from
 * libsodium; the engine implements no cryptography of its own.
 */
#ifndef LIVENESS_CSODIUM_SHIM_H
#define LIVENESS_CSODIUM_SHIM_H

#include <sodium.h>

#endif
