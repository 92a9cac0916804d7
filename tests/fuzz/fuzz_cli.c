/* SPDX-License-Identifier: Apache-2.0 */
/* The command line, in-process: argv is the input split at newlines (the first word is the
 * command). Never a crash or an exit; exit status 0, 1 or 2; with -o json a failure writes
 * exactly one JSON error object to stdout; in text mode a failure writes nothing to stdout.
 * Inputs that would write files (--plot) or sweep ranges (which can be long) are skipped. */
#include "fuzz.h"

#include <jansson.h>

#include "../../src/cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = fuzz_text(data, size);
    char *argv[64];
    int argc = 0;
    argv[argc++] = "dpas";
    int json = 0;
    size_t commas = 0;
    for (size_t i = 0; i < size; i++)
        commas += s[i] == ',';
    if (strstr(s, "sweep") && commas > 64) { /* a sweep's points grow as the product of its lists */
        free(s);
        return 0;
    }
    char *tok = s;
    for (char *p = s;; p++) {
        if (*p != '\n' && *p != '\0')
            continue;
        int end = *p == '\0';
        *p = '\0';
        if (!strncmp(tok, "--pl", 4) || strstr(tok, "..")) {
            free(s);
            return 0;
        }
        if (strstr(tok, "json")) /* -o json, -ojson, --output=json */
            json = 1;
        if (argc < 63)
            argv[argc++] = tok;
        if (end)
            break;
        tok = p + 1;
    }
    argv[argc] = NULL;
    /* `dpas serve` runs until a signal: not an input the fuzzer can finish */
    if (argc > 1 && !strcmp(argv[1], "serve")) {
        free(s);
        return 0;
    }
    char *out = NULL, *err = NULL;
    size_t outn = 0, errn = 0;
    FILE *fo = open_memstream(&out, &outn), *fe = open_memstream(&err, &errn);
    int rc = dpas_cli_main(argc, argv, NULL, fo, fe);
    fclose(fo);
    fclose(fe);
    PROPERTY(rc == 0 || rc == 1 || rc == 2, "exit status %d", rc);
    if (rc != 0 && outn) {
        /* a failure's stdout is a JSON error object, or empty */
        json_error_t je;
        json_t *j = json_loads(out, 0, &je);
        PROPERTY(j && json_is_object(j) && json_is_integer(json_object_get(j, "status")) &&
                     json_is_string(json_object_get(j, "detail")),
                 "a failure left stdout \"%.200s\"", out);
        PROPERTY(json, "a JSON error without -o json");
        json_decref(j);
    }
    if (rc != 0 && !outn)
        PROPERTY(errn > 0, "a failure said nothing");
    free(out);
    free(err);
    free(s);
    return 0;
}
