/* SPDX-License-Identifier: Apache-2.0 */
/* libmicrohttpd, opened when `dpas serve` starts rather than linked: linked, it and its chain
 * (GnuTLS, nettle, gmp, p11-kit, ...) would add about 2 ms to the start of every dpas command
 * (measured: 0.8 ms -> 2.6 ms for an empty program). Only server.c calls through the table. */
#ifndef DPAS_SERVE_MHD_H
#define DPAS_SERVE_MHD_H

#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

#define SRV_MHD_FUNCS(X)                                                                           \
    X(MHD_start_daemon)                                                                            \
    X(MHD_stop_daemon)                                                                             \
    X(MHD_get_daemon_info)                                                                         \
    X(MHD_create_response_from_buffer)                                                             \
    X(MHD_create_response_from_buffer_with_free_callback)                                          \
    X(MHD_add_response_header)                                                                     \
    X(MHD_queue_response)                                                                          \
    X(MHD_destroy_response)                                                                        \
    X(MHD_lookup_connection_value)                                                                 \
    X(MHD_get_connection_values)                                                                   \
    X(MHD_get_connection_info)                                                                     \
    X(MHD_suspend_connection)                                                                      \
    X(MHD_resume_connection)                                                                       \
    X(MHD_add_connection)                                                                          \
    X(MHD_run)                                                                                     \
    X(MHD_get_version)

typedef struct srv_mhd {
#define SRV_MHD_FIELD(f) __typeof__(&f) f;
    SRV_MHD_FUNCS(SRV_MHD_FIELD)
#undef SRV_MHD_FIELD
    void *handle;
} srv_mhd;

/* Open libmicrohttpd.so.12 and look up every function; 0, or -1 with why filled. The library
 * stays loaded for the life of the process (GnuTLS keeps global state that unloading would
 * strand). */
int srv_mhd_open(srv_mhd *api, char *why, size_t cap);

#endif
