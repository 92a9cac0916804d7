/* SPDX-License-Identifier: Apache-2.0 */
/* The page: one document and its script, style sheet and icon, embedded at build time from
 * src/serve/page/ (cmake/embed.cmake, as the registry). Nothing is ever read from disk. The
 * script and style are separate same-origin resources so that the Content-Security-Policy
 * default-src 'self' holds without inline code. */
#include "serve.h"

#include <string.h>

extern const char srv_page_index_html[], srv_page_app_js[], srv_page_app_css[],
    srv_page_favicon_svg[];
extern const size_t srv_page_index_html_len, srv_page_app_js_len, srv_page_app_css_len,
    srv_page_favicon_svg_len;

int srv_page(const char *path, srv_response *r)
{
    static const struct {
        const char *path, *type;
        const char *data;
        const size_t *len;
    } files[] = {
        {"/", "text/html; charset=utf-8", srv_page_index_html, &srv_page_index_html_len},
        {"/app.js", "text/javascript; charset=utf-8", srv_page_app_js, &srv_page_app_js_len},
        {"/app.css", "text/css; charset=utf-8", srv_page_app_css, &srv_page_app_css_len},
        {"/favicon.svg", "image/svg+xml", srv_page_favicon_svg, &srv_page_favicon_svg_len},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (!strcmp(path, files[i].path)) {
            r->status = 200;
            r->type = files[i].type;
            r->body = (char *)files[i].data; /* static: never freed, never written */
            r->len = *files[i].len;
            r->free_body = NULL;
            r->cache = "no-cache";
            return 1;
        }
    return 0;
}
