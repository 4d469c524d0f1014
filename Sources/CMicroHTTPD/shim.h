#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
// microhttpd.h needs these before it on Linux.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <sys/eventfd.h>

// MHD_start_daemon is variadic, which Swift cannot call. Every option goes through one
// MHD_OPTION_ARRAY (terminated by {MHD_OPTION_END, 0, NULL}) so the Swift side builds a plain array.
// `accept_policy` (may be NULL) is asked about each accepted connection before it is served;
// it shares `handler_cls`.
static inline struct MHD_Daemon *
CMicroHTTPD_start_daemon(unsigned int flags, uint16_t port,
                         MHD_AcceptPolicyCallback accept_policy,
                         MHD_AccessHandlerCallback handler, void *handler_cls,
                         const struct MHD_OptionItem *options) {
  return MHD_start_daemon(flags, port, accept_policy, handler_cls, handler, handler_cls,
                          MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

// MHD_get_daemon_info is variadic. Returns the port the listening socket is really bound to
// (the configured port may be 0), or 0 if libmicrohttpd cannot say.
static inline uint16_t
CMicroHTTPD_bind_port(struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  return info == NULL ? 0 : info->port;
}

// A descriptor that never becomes readable or writable (an eventfd at 0), to stand in the
// listening socket's place while the daemon stops (HTTPServer.stop). Glibc's Swift module does
// not export eventfd.
static inline int
CMicroHTTPD_placeholder_fd(void) {
  return eventfd(0, EFD_CLOEXEC);
}

// MHD_get_daemon_info is variadic. The daemon's listening socket, or -1.
static inline int
CMicroHTTPD_listen_fd(struct MHD_Daemon *daemon) {
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
  return info == NULL ? -1 : info->listen_fd;
}

// MHD_get_connection_info is variadic. Returns the peer's address (owned by libmicrohttpd,
// valid while the connection lives), or NULL.
static inline const struct sockaddr *
CMicroHTTPD_client_address(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return info == NULL ? NULL : info->client_addr;
}

// MHD_get_connection_info is variadic. The connection's socket, or -1.
static inline int
CMicroHTTPD_connection_fd(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info == NULL ? -1 : info->connect_fd;
}

// MHD_get_connection_info is variadic. What the connection-notify callback stored for this
// connection when it started, or NULL.
static inline void *
CMicroHTTPD_socket_context(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info == NULL ? NULL : info->socket_context;
}

// MHD_get_connection_info is variadic. The size in bytes of the request's head as received
// (request line, header fields, blank line), or 0 before the head is in.
static inline size_t
CMicroHTTPD_request_header_size(struct MHD_Connection *connection) {
  const union MHD_ConnectionInfo *info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  return info == NULL ? 0 : info->header_size;
}

// MHD_get_connection_info is variadic. Whether a response is queued on the connection for the
// current request (libmicrohttpd reports its status only then).
static inline int
CMicroHTTPD_has_response(struct MHD_Connection *connection) {
  return MHD_get_connection_info(connection, MHD_CONNECTION_INFO_HTTP_STATUS) != NULL;
}

// MHD_get_connection_values with a bit mask of kinds: Swift imports MHD_ValueKind as a closed
// enum, which cannot hold the mask. One walk over the request's header fields, query arguments
// and cookies, in the order libmicrohttpd holds them; returns how many there are.
static inline int
CMicroHTTPD_request_values(struct MHD_Connection *connection, MHD_KeyValueIterator iterator, void *iterator_cls) {
  return MHD_get_connection_values(connection, MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND | MHD_COOKIE_KIND,
                                   iterator, iterator_cls);
}

#endif
