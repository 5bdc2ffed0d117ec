/*
 * CSQLite: Debian's SQLite 3 (libsqlite3-dev) for the LivenessStore module, the only module that
 * imports it. SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import;
 * it is restated here as an inline function with the same meaning.
 */
#ifndef LIVENESS_CSQLITE_SHIM_H
#define LIVENESS_CSQLITE_SHIM_H

#include <sqlite3.h>

/** SQLITE_TRANSIENT: SQLite copies a bound text or blob before the bind call returns. */
static inline sqlite3_destructor_type lss_transient(void) { return SQLITE_TRANSIENT; }

#endif
