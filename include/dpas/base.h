/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/base.h — API macro, errors, formats, memory and version
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_BASE_H
#define DPAS_BASE_H

#include "dpas/version.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DPAS_BUILDING) && defined(__GNUC__)
#define DPAS_API __attribute__((visibility("default")))
#else
#define DPAS_API
#endif

/* ---- errors ------------------------------------------------------------------------------- */

/* One table for every error: code, name, text, and the title of the error object that front ends
 * print (an RFC 9457 problem: {"type", "title", "status", "detail", "code", ...}); the model is libuv's UV_ERRNO_MAP. The C
 * library, the CLI, `dpas serve` and the Python exception classes all read it.
 *   EINVAL   a value breaks a rule (dp_degree < 1, width <= 0, ...)
 *   EPARSE   malformed text: not a number, unknown unit, bad YAML/JSON
 *   ERANGE   a value or a product exceeds what the exact arithmetic holds
 *   ENOENT   unknown registry, rule, schedule or convention name
 *   EUNDEF   the attribute is undefined for these inputs
 *   ENOMEM   out of memory
 *   EIO      a file could not be read, or the output or a file could not be written
 *   EPHYSICS the inputs are valid but physically infeasible */
#define DPAS_ERRNO_MAP(X)                                                                          \
    X(EINVAL, -1, "invalid value", "invalid input")                                                \
    X(EPARSE, -2, "malformed input", "invalid input")                                              \
    X(ERANGE, -3, "value out of range", "invalid input")                                           \
    X(ENOENT, -4, "unknown name", "unknown name")                                                  \
    X(EUNDEF, -5, "undefined attribute", "undefined attribute")                                    \
    X(ENOMEM, -6, "out of memory", "out of memory")                                                \
    X(EIO, -7, "input/output error", "input/output error")                                         \
    X(EPHYSICS, -8, "physics violation", "physics violation")

enum {
    DPAS_OK = 0,
#define DPAS__ERRNO_ENUM(name, code, text, title) DPAS_##name = code,
    DPAS_ERRNO_MAP(DPAS__ERRNO_ENUM)
#undef DPAS__ERRNO_ENUM
};

/* The field and the message have fixed sizes (the struct is the caller's, on its stack): text
 * that does not fit ends in "..." on a whole UTF-8 character, never silently cut. */
typedef struct dpas_error {
    int code;          /* one of DPAS_E*, 0 when no error */
    int line, column;  /* 1-based position in a file; 0 when not from a file */
    char field[64];    /* the input or attribute at fault, "" when none */
    char message[512]; /* the whole sentence, field included */
} dpas_error;

/* Fill err (when not NULL) with code, field and a printf-style message, marking a cut as above;
 * returns code. For front ends that report their own errors the library's way. */
DPAS_API int dpas_error_set(dpas_error *err, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A short sentence for a DPAS_E* code ("invalid value", ...). Never NULL. */
DPAS_API const char *dpas_strerror(int code);
/* The code's name without its prefix ("EINVAL"); "OK" for 0, "EUNKNOWN" for other codes. */
DPAS_API const char *dpas_err_name(int code);
/* The title of the code's error object ("invalid input", "physics violation"). Never NULL. */
DPAS_API const char *dpas_err_title(int code);
/* The HTTP status of the code's problem: 422 for EPHYSICS (the CLI's exit 2), 500 for ENOMEM and
 * EIO, 400 for every other refusal (the CLI's exit 1). */
DPAS_API int dpas_err_status(int code);

/* User text quoted for a message: "\"GPT3\"", with control characters and invalid UTF-8
 * escaped. Text that does not fit cap is cut on a whole character and the cut says so and how
 * many bytes of the text it left out: "\"GPT3GPT3...\" [cut: 1234 bytes]" (a cap under 32 bytes,
 * too small for any count, gets "..." alone; cap must be at least 8). Returns buf. */
DPAS_API const char *dpas_quote(const char *text, char *buf, size_t cap);

/* ---- output formats -------------------------------------------------------------------------- */

/* The formats, by name: the one name table every front end reads (-o, Python's render(format),
 * the help). */
#define DPAS_FORMAT_MAP(X)                                                                         \
    X(TEXT, "text")                                                                                \
    X(JSON, "json")                                                                                \
    X(CSV, "csv")                                                                                  \
    X(MARKDOWN, "markdown")

typedef enum dpas_format {
#define DPAS__FORMAT_ENUM(id, name) DPAS_FORMAT_##id,
    DPAS_FORMAT_MAP(DPAS__FORMAT_ENUM)
#undef DPAS__FORMAT_ENUM
} dpas_format;
#define DPAS_FORMAT_COUNT 4

/* "text", "json", ...; NULL out of range. The format of a name, or -1. */
DPAS_API const char *dpas_format_name(dpas_format f);
DPAS_API int dpas_format_from_name(const char *name);

DPAS_API void dpas_free(void *p);

/* Write len bytes of data to the file at path, a front end's output file (a --plot, an --svg):
 * a new file (mode 0666 less the umask), or a regular file replaced whole (keeping its mode). The
 * data is written to a temporary file in the same folder (".NAME.dpas-XXXXXX", created with
 * O_EXCL), flushed to disk and renamed over path, so a write that fails part way (a full disk, a
 * file-size limit) leaves an existing file byte for byte as it was and removes the temporary
 * file; a reader never sees half a file. A symbolic link is followed: the file it names is
 * replaced, the link kept. The folder must be writable (the temporary file is made there); a
 * hard link to the old file keeps the old content. Anything that is not a regular file is refused
 * without blocking and without writing: a FIFO (with or without a reader), a device (/dev/null
 * included), a socket, a directory. Errors: DPAS_EIO naming field and the path and why
 * ("--plot: cannot write \"x.svg\": not a regular file (a FIFO)"). The one way every output path
 * of dpas is opened: the CLI's --plot, the PNG writers, the Python demo's --svg. */
DPAS_API int dpas_write_output(const char *path, const char *field, const void *data, size_t len,
                               dpas_error *err);

/* Several outputs of one command replaced together (sweep's --plot and --data): every content is
 * written whole to its temporary file first, as dpas_write_output does, and only when all of
 * them are written are they renamed over their paths, so that a failure on any (a full disk, a
 * file-size limit, a FIFO) leaves every old file byte for byte as it was and no temporary file.
 * (Only a rename itself failing after another succeeded could leave them apart: a rename in the
 * folder where the temporary file was just made does not fail for want of space.) At most
 * DPAS_MAX_OUTPUTS; errors as dpas_write_output's, naming the output's field. */
typedef struct dpas_output {
    const char *path, *field;
    const void *data;
    size_t len;
} dpas_output;
#define DPAS_MAX_OUTPUTS 8
DPAS_API int dpas_write_outputs(const dpas_output *outs, size_t n, dpas_error *err);

/* sizeof of a public struct by name ("dpas_scenario", "dpas_report", ...), 0 when unknown: lets
 * a binding (the Python ctypes one) check its mirrors of the structs at load time. */
DPAS_API size_t dpas_sizeof(const char *type_name);

/* The library's version, DPAS_VERSION. */
DPAS_API const char *dpas_version(void);
/* The schema of every JSON document dpas writes (its "schema_version"): raised when a field
 * changes meaning or goes away, not when one is added. */
DPAS_API int dpas_json_schema_version(void);

#ifdef __cplusplus
}
#endif
#endif
