/* SPDX-License-Identifier: Apache-2.0 */
/* Errors: the text, name and title of each code (one X-macro table in dpas/base.h) and the
 * filling of a dpas_error. */
#include "../internal.h"

#include <stdio.h>
#include <string.h>

const char *dpas_strerror(int code)
{
    switch (code) {
    case DPAS_OK: return "success";
#define DPAS__ERRNO_TEXT(name, c, text, title)                                                     \
    case DPAS_##name: return text;
        DPAS_ERRNO_MAP(DPAS__ERRNO_TEXT)
#undef DPAS__ERRNO_TEXT
    default: return "unknown error";
    }
}

const char *dpas_err_title(int code)
{
    switch (code) {
#define DPAS__ERRNO_TITLE(name, c, text, title)                                                    \
    case DPAS_##name: return title;
        DPAS_ERRNO_MAP(DPAS__ERRNO_TITLE)
#undef DPAS__ERRNO_TITLE
    default: return "invalid input";
    }
}

int dpas_err_status(int code)
{
    switch (code) {
    case DPAS_EPHYSICS: return 422; /* valid inputs, infeasible */
    case DPAS_ENOMEM:
    case DPAS_EIO: return 500;
    default: return 400;
    }
}

const char *dpas_err_name(int code)
{
    switch (code) {
    case DPAS_OK: return "OK";
#define DPAS__ERRNO_NAME(name, c, text, title)                                                     \
    case DPAS_##name: return #name;
        DPAS_ERRNO_MAP(DPAS__ERRNO_NAME)
#undef DPAS__ERRNO_NAME
    default: return "EUNKNOWN";
    }
}

void dpas__mark_cut(char *buf, size_t cap, int needed)
{
    if (needed < 0 || (size_t)needed < cap || cap < 4)
        return;
    /* the text did not fit: end on a whole UTF-8 character and say it was cut */
    size_t end = cap - 4;
    while (end > 0 && ((unsigned char)buf[end] & 0xc0) == 0x80)
        end--;
    memcpy(buf + end, "...", 4);
}

static int vfail(dpas_error *err, int code, const char *field, int line, int col, const char *fmt,
                 va_list ap)
{
    if (err) {
        err->code = code;
        err->line = line;
        err->column = col;
        dpas__mark_cut(err->field, sizeof err->field,
                       snprintf(err->field, sizeof err->field, "%s", field ? field : ""));
        dpas__mark_cut(err->message, sizeof err->message,
                       vsnprintf(err->message, sizeof err->message, fmt, ap));
    }
    return code;
}

int dpas_error_set(dpas_error *err, int code, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, code, field, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}

int dpas__fail(dpas_error *err, int code, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, code, field, 0, 0, fmt, ap);
    va_end(ap);
    return code;
}

int dpas__fail_at(dpas_error *err, int code, const char *field, int line, int col, const char *fmt,
                  ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, code, field, line, col, fmt, ap);
    va_end(ap);
    return code;
}
