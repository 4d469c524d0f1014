#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
// microhttpd.h needs these before it on Linux.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>
#endif
