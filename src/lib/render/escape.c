/* SPDX-License-Identifier: Apache-2.0 */
/* Escaping of user text for each output format: the one place that decides how a tab, a quote,
 * a `|`, a newline or an invalid UTF-8 byte comes out. */
#include "../internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */

/* The code point of a character that breaks a line (NEL U+0085, LS U+2028, PS U+2029) or changes
 * the direction of text (U+061C, U+200E/F, U+202A-E, U+2066-9), or 0: a viewer would show a label
 * holding one as two lines or backwards. */
static unsigned long breaking(const unsigned char *p, size_t n)
{
    unsigned long cp = 0;
    if (n == 2)
        cp = ((p[0] & 0x1fUL) << 6) | (p[1] & 0x3fUL);
    else if (n == 3)
        cp = ((p[0] & 0x0fUL) << 12) | ((p[1] & 0x3fUL) << 6) | (p[2] & 0x3fUL);
    if (cp == 0x85 || cp == 0x2028 || cp == 0x2029 || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
        (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
        return cp;
    return 0;
}

/* Append s to b, escaped for format. */
void dpas__escape(dpas__buf *b, int format, const char *s)
{
    if (format == DPAS_FORMAT_JSON) {
        dpas__buf_json_str(b, s);
        return;
    }
    if (format == DPAS_FORMAT_CSV) {
        size_t l = strlen(s);
        bool quote = strpbrk(s, ",\"\r\n") || (l && (s[0] == ' ' || s[l - 1] == ' '));
        if (quote)
            dpas__buf_append(b, "\"", 1);
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
            size_t n = dpas__utf8_len(p);
            if (!n) {
                dpas__buf_puts(b, REPLACEMENT);
                p++;
                continue;
            }
            if (*p == '"')
                dpas__buf_append(b, "\"", 1);
            dpas__buf_append(b, (const char *)p, n);
            p += n;
        }
        if (quote)
            dpas__buf_append(b, "\"", 1);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = dpas__utf8_len(p);
        if (!n) {
            dpas__buf_puts(b, REPLACEMENT);
            p++;
            continue;
        }
        unsigned c = *p;
        unsigned long cp = breaking(p, n);
        if (cp) { /* a character that breaks a line or turns text around */
            if (format == DPAS_FORMAT_MARKDOWN)
                dpas__buf_puts(b, REPLACEMENT);
            else
                dpas__buf_printf(b, "\\u%04lx", cp);
        } else if (format == DPAS_FORMAT_MARKDOWN) {
            bool edge =
                c == '_' && (p == (const unsigned char *)s || !isalnum(p[-1]) || !isalnum(p[1]));
            if (c == '\\' || c == '|' || c == '`' || c == '*' || c == '[' || c == ']' || edge)
                dpas__buf_append(b, "\\", 1), dpas__buf_append(b, (const char *)p, 1);
            else if (c == '<')
                dpas__buf_puts(b, "&lt;");
            else if (c == '&')
                dpas__buf_puts(b, "&amp;");
            else if (c == '\n')
                dpas__buf_puts(b, "<br>");
            else if (c < 0x20 || c == 0x7f)
                dpas__buf_puts(b, REPLACEMENT);
            else
                dpas__buf_append(b, (const char *)p, n);
        } else { /* text: one line per row, whatever the label holds */
            if (c == '\\')
                dpas__buf_puts(b, "\\\\");
            else if (c == '\t')
                dpas__buf_puts(b, "\\t");
            else if (c == '\n')
                dpas__buf_puts(b, "\\n");
            else if (c == '\r')
                dpas__buf_puts(b, "\\r");
            else if (c < 0x20 || c == 0x7f)
                dpas__buf_printf(b, "\\x%02x", c);
            else
                dpas__buf_append(b, (const char *)p, n);
        }
        p += n;
    }
}

void dpas__escape_xml(dpas__buf *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = dpas__utf8_len(p);
        if (!n) {
            dpas__buf_puts(b, REPLACEMENT);
            p++;
            continue;
        }
        switch (*p) {
        case '&': dpas__buf_puts(b, "&amp;"); break;
        case '<': dpas__buf_puts(b, "&lt;"); break;
        case '>': dpas__buf_puts(b, "&gt;"); break;
        case '"': dpas__buf_puts(b, "&quot;"); break;
        case '\'': dpas__buf_puts(b, "&apos;"); break;
        default:
            /* XML 1.0 allows no C0 control but tab, LF and CR; U+FFFE and U+FFFF neither */
            if ((*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') ||
                (n == 3 && p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf)))
                dpas__buf_puts(b, REPLACEMENT);
            else
                dpas__buf_append(b, (const char *)p, n);
        }
        p += n;
    }
}

static int sink_buf(dpas_sink_fn sink, void *ctx, dpas__buf *b)
{
    int rc = b->oom ? DPAS_ENOMEM : sink(ctx, b->data ? b->data : "", b->len);
    free(b->data);
    return rc;
}

int dpas_write_escaped(dpas_format format, const char *text, dpas_sink_fn sink, void *ctx)
{
    dpas__buf b = {0};
    dpas__escape(&b, format, text ? text : "");
    return sink_buf(sink, ctx, &b);
}

int dpas_write_json_string(const char *text, dpas_sink_fn sink, void *ctx)
{
    return dpas_write_escaped(DPAS_FORMAT_JSON, text, sink, ctx);
}

int dpas_write_json_real(double v, dpas_sink_fn sink, void *ctx)
{
    char t[64];
    if (!isfinite(v))
        return sink(ctx, "null", 4);
    size_t n = dpas__fmt_double(v, false, t, sizeof t);
    return sink(ctx, t, n);
}

int dpas_write_xml_text(const char *text, dpas_sink_fn sink, void *ctx)
{
    dpas__buf b = {0};
    dpas__escape_xml(&b, text ? text : "");
    return sink_buf(sink, ctx, &b);
}

int dpas__sink_buf(void *ctx, const char *data, size_t len)
{
    dpas__buf *b = ctx;
    dpas__buf_append(b, data, len);
    return b->oom ? DPAS_ENOMEM : 0;
}
