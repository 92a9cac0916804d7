/* Errors: the text, name and title of each code (one X-macro table in dpas/base.h) and the
 * filling of a dpas_error. */
#include "../internal.h"

#include <stdio.h>

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

static int vfail(dpas_error *err, int code, const char *field, int line, int col, const char *fmt,
                 va_list ap)
{
    if (err) {
        err->code = code;
        err->line = line;
        err->column = col;
        snprintf(err->field, sizeof err->field, "%s", field ? field : "");
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    }
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
