/*
 * CWebSockets: libwebsockets 4.1 (Debian's libwebsockets-dev) for the LivenessService module,
 * the only module that imports it. The few things Swift cannot import from libwebsockets.h
 * (function-like macros, shifted option constants) are restated here as inline functions and
 * constants with the same meaning.
 */
#ifndef LIVENESS_CWEBSOCKETS_SHIM_H
#define LIVENESS_CWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

/** Bytes lws needs in front of every buffer given to lws_write (LWS_PRE). */
static const size_t lws_shim_pre = LWS_PRE;

/* Context and vhost options used by the engine (lws-context-vhost.h). */
static const uint64_t lws_shim_option_ssl_global_init = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
static const uint64_t lws_shim_option_disable_ipv6 = LWS_SERVER_OPTION_DISABLE_IPV6;
static const uint64_t lws_shim_option_validate_utf8 = LWS_SERVER_OPTION_VALIDATE_UTF8;
static const uint64_t lws_shim_option_explicit_vhosts = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;

/* Client connection flags (lws-client.h). */
static const int lws_shim_client_ssl = LCCSCF_USE_SSL;
static const int lws_shim_client_allow_selfsigned = LCCSCF_ALLOW_SELFSIGNED;
static const int lws_shim_client_skip_hostname_check = LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK;

/* Log levels (lws-logs.h). */
static const int lws_shim_log_errors = LLL_ERR;

#endif
