/*
 * CPostgres: Debian's libpq (libpq-dev), the PostgreSQL client library, for the LivenessStore
 * module, the only module that imports it (the PostgreSQL backend of the session store).
 */
#ifndef LIVENESS_CPOSTGRES_SHIM_H
#define LIVENESS_CPOSTGRES_SHIM_H

#include <postgresql/libpq-fe.h>

#endif
