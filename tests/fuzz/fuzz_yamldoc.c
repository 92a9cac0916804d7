/* SPDX-License-Identifier: Apache-2.0 */
/* Scenario files of several YAML documents (issue 12: every document after the first was
 * ignored). The input is cut at 0xff bytes into up to four pieces, joined as YAML documents with
 * one of several separators ("---", "...\n---", a bare "---" line, none), and loaded as a YAML
 * scenario file. The oracle is libyaml's event parser, which counts the documents of the stream
 * independently of dpas's loader:
 *   - a stream with a second document is never loaded (an error, whatever that document holds);
 *   - a stream that libyaml cannot parse is never loaded;
 *   - whatever is loaded came from a stream of exactly one document, and resolves, evaluates and
 *     renders as JSON that parses (or fails with a message);
 *   - every failure has a message.
 * The same pieces as one flow mapping ("{...}") that is not JSON must load the same whether the
 * loader is told it is YAML or has to guess from the '{': as YAML, never refused as bad JSON. */
#include "fuzz.h"

#include <jansson.h>
#include <stdbool.h>
#include <yaml.h>

static dpas_registry *reg;

/* Documents in the stream, or -1 when libyaml cannot parse it. */
static int documents(const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int docs = 0, done = 0;
    if (!yaml_parser_initialize(&p))
        abort();
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done) {
        if (!yaml_parser_parse(&p, &ev)) {
            docs = -1;
            break;
        }
        docs += ev.type == YAML_DOCUMENT_START_EVENT;
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return docs;
}

static void load(const char *text, size_t len, const char *origin)
{
    dpas_spec *spec = dpas_spec_new();
    dpas_error e = {0};
    dpas_scenario s;
    dpas_report r;
    int docs = documents(text, len);
    int rc = dpas_spec_load_text(spec, text, len, 0, origin, &e);
    if (rc == 0) {
        PROPERTY(docs == 1, "a stream of %d documents was loaded:\n%.*s", docs, (int)len, text);
        if (dpas_spec_resolve(spec, reg, &s, &e) == 0 && dpas_evaluate(&s, &r, &e) == 0) {
            dpas_render_opts o = {.format = DPAS_FORMAT_JSON, .label = dpas_spec_label(spec)};
            char *out = dpas_render_report(&s, &r, &o, &e);
            PROPERTY(out, "render: %s", e.message);
            json_error_t je;
            json_t *j = json_loads(out, JSON_DECODE_INT_AS_REAL, &je);
            PROPERTY(j, "rendered JSON does not parse: %s\n%s", je.text, out);
            json_decref(j);
            dpas_free(out);
        } else {
            PROPERTY(e.message[0], "a resolution error without a message");
        }
    } else {
        PROPERTY(e.message[0], "an error without a message");
        if (docs > 1)
            PROPERTY(strstr(e.message, "second YAML document") ||
                         strstr(e.message, "after the first document") ||
                         strstr(e.message, "malformed YAML") || strstr(e.message, "NUL"),
                     "%d documents refused for another reason first: %s", docs, e.message);
    }
    dpas_spec_free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    if (!reg && dpas_registry_builtin(&reg, NULL))
        abort();
    static const char *const seps[] = {"\n---\n", "\n...\n---\n", "\n--- ", "\n"};
    const char *sep = seps[size ? data[0] % 4 : 0];
    const uint8_t *p = size ? data + 1 : data, *end = data + size;
    char *text = malloc(size * 10 + 64);
    size_t n = 0;
    int pieces = 0;
    while (p <= end && pieces < 4) {
        const uint8_t *cut = memchr(p, 0xff, (size_t)(end - p));
        if (!cut)
            cut = end;
        if (pieces++) {
            memcpy(text + n, sep, strlen(sep));
            n += strlen(sep);
        }
        memcpy(text + n, p, (size_t)(cut - p));
        n += (size_t)(cut - p);
        p = cut + 1;
    }
    load(text, n, "fuzz.yaml");
    /* the pieces again as the body of one flow mapping, "{piece, piece}": YAML, never JSON */
    char *flow = malloc(n + 3);
    flow[0] = '{';
    size_t m = 1;
    for (size_t i = 0; i < n; i++)
        flow[m++] = text[i] == '\n' ? ' ' : text[i];
    flow[m++] = '}';
    /* named as YAML (is_json 0) or guessed (-1, a name such as .txt): text that is no JSON must
     * come out of both the same, as YAML, not refused as malformed JSON */
    json_error_t je;
    json_t *asjson = json_loadb(flow, m, 0, &je);
    if (!asjson) {
        dpas_spec *a = dpas_spec_new(), *b = dpas_spec_new();
        dpas_error ea = {0}, eb = {0};
        int ra = dpas_spec_load_text(a, flow, m, 0, "flow", &ea);
        int rb = dpas_spec_load_text(b, flow, m, -1, "flow", &eb);
        /* (when it is no YAML either, the guess reports the JSON error: nothing to compare) */
        PROPERTY((ra && strstr(ea.message, "malformed YAML")) ||
                     (ra == rb && !strcmp(ea.message, eb.message)),
                 "a flow mapping as YAML (%d: %s) and guessed (%d: %s)", ra, ea.message, rb,
                 eb.message);
        dpas_spec_free(a);
        dpas_spec_free(b);
    }
    json_decref(asjson);
    free(flow);
    free(text);
    return 0;
}
