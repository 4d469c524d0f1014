#ifndef CPOSTGRESQL_SHIM_H
#define CPOSTGRESQL_SHIM_H
#include <libpq-fe.h>

// The PG_DIAG_* field codes are character macros, which Swift does not import.
static inline int CPostgreSQL_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int CPostgreSQL_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int CPostgreSQL_diag_message_detail(void) { return PG_DIAG_MESSAGE_DETAIL; }
static inline int CPostgreSQL_diag_constraint_name(void) { return PG_DIAG_CONSTRAINT_NAME; }

// Notices ("relation already exists, skipping", …) would go to stderr: the wrapper drops them.
static void CPostgreSQL_ignore_notice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void CPostgreSQL_silence_notices(PGconn *conn) {
    PQsetNoticeProcessor(conn, CPostgreSQL_ignore_notice, NULL);
}
#endif
