/* SPDX-License-Identifier: Apache-2.0 */
/* Loading libmicrohttpd at run time (see mhd.h for why). */
#include "mhd.h"

#include <dlfcn.h>
#include <stdio.h>

int srv_mhd_open(srv_mhd *api, char *why, size_t cap)
{
    static const char *const names[] = {"libmicrohttpd.so.12", "libmicrohttpd.so"};
    api->handle = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !api->handle; i++)
        api->handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!api->handle) {
        const char *e = dlerror();
        snprintf(why, cap,
                 "dpas serve needs libmicrohttpd (Debian: apt-get install libmicrohttpd12): %s",
                 e ? e : "not found");
        return -1;
    }
#define SRV_MHD_LOAD(f)                                                                            \
    *(void **)(&api->f) = dlsym(api->handle, #f);                                                  \
    if (!api->f) {                                                                                 \
        snprintf(why, cap, "libmicrohttpd lacks %s (dpas serve needs version 0.9.71 or later)",    \
                 #f);                                                                              \
        return -1;                                                                                 \
    }
    SRV_MHD_FUNCS(SRV_MHD_LOAD)
#undef SRV_MHD_LOAD
    return 0;
}
