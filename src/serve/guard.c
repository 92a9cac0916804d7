/* SPDX-License-Identifier: Apache-2.0 */
/* Who may ask: the Host a request names and the Origin it comes from, checked before anything
 * else is done with it.
 *
 * Host. A web page cannot choose the Host header its browser sends: it is the name in the URL.
 * DNS rebinding points a name the attacker owns at 127.0.0.1, so a page from that name reaches a
 * loopback server with `Host: evil.example:8080`. Answering only the names the server is known
 * by closes that door: its --bind address (an IP literal, which no rebinding can forge; any IP
 * literal for a wildcard bind such as 0.0.0.0), `localhost` when it listens on loopback, and the
 * names the operator gives with --allow-host. The port is not compared: rebinding forges a
 * name, not a port, and a forwarded port (docker -p 9000:8080) legitimately changes it.
 *
 * Origin. Browsers send it on cross-origin requests (and on same-origin POSTs). A request whose
 * Origin is neither the server's own (http or https and the Host it was sent to) nor one of the
 * --allow-origin list is refused; an allowed one gets Access-Control-Allow-Origin, so that
 * cross-origin reads stay off unless the operator asks for them. */
#include "serve.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GUARD_MAX_NAMES 32
#define GUARD_NAME_MAX 253 /* a DNS name's longest text form */

struct srv_guard {
    char bind[64]; /* the --bind address as given, for messages */
    int family;    /* AF_INET or AF_INET6: the --bind address */
    unsigned char addr[16];
    int wildcard, loopback;
    size_t nhosts, norigins;
    char *hosts[GUARD_MAX_NAMES];   /* lower case, no trailing dot */
    char *origins[GUARD_MAX_NAMES]; /* as given, scheme and host in lower case */
};

/* A host name as --allow-host takes it: letters, digits, '-' and '.', labels of 1 to 63. */
static int name_ok(const char *s, size_t n)
{
    if (!n || n > GUARD_NAME_MAX)
        return 0;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            if (!label)
                return 0;
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '-') {
            if (++label > 63)
                return 0;
        } else {
            return 0;
        }
    }
    return label > 0;
}

static char *lower_dup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        for (size_t i = 0; i < n; i++)
            d[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] - 'A' + 'a') : s[i];
        d[n] = '\0';
    }
    return d;
}

/* The parts of a Host value: host (without brackets) and whether it was an IP literal in
 * brackets; the port's digits are checked and dropped. 0, or -1 when malformed. */
static int split_host(const char *v, const char **host, size_t *hlen, int *bracketed)
{
    const char *port = NULL;
    *bracketed = 0;
    if (v[0] == '[') {
        const char *end = strchr(v, ']');
        if (!end)
            return -1;
        *host = v + 1;
        *hlen = (size_t)(end - v - 1);
        *bracketed = 1;
        if (end[1] == ':')
            port = end + 2;
        else if (end[1])
            return -1;
    } else {
        const char *colon = strchr(v, ':');
        if (colon && strchr(colon + 1, ':'))
            return -1; /* an IPv6 literal must be in brackets */
        *host = v;
        *hlen = colon ? (size_t)(colon - v) : strlen(v);
        if (colon)
            port = colon + 1;
    }
    if (port) {
        size_t n = strspn(port, "0123456789");
        if (!n || n > 5 || port[n] || atol(port) > 65535)
            return -1;
    }
    return *hlen ? 0 : -1;
}

/* Is this Host one the server answers to? 1 yes, 0 no, -1 malformed. */
static int host_served(const srv_guard *g, const char *v)
{
    const char *h;
    size_t n;
    int br;
    char text[GUARD_NAME_MAX + 2];
    if (split_host(v, &h, &n, &br) || n >= sizeof text)
        return -1;
    memcpy(text, h, n);
    text[n] = '\0';
    unsigned char a[16];
    if (br || inet_pton(AF_INET, text, a) == 1) {
        int fam = br ? AF_INET6 : AF_INET;
        if (br && inet_pton(AF_INET6, text, a) != 1)
            return -1;
        if (g->wildcard)
            return 1;
        return fam == g->family && !memcmp(a, g->addr, fam == AF_INET ? 4 : 16);
    }
    if (n > 1 && text[n - 1] == '.')
        text[--n] = '\0'; /* "localhost." is "localhost" */
    if (!name_ok(text, n))
        return -1;
    if (g->loopback && !strcasecmp(text, "localhost"))
        return 1;
    for (size_t i = 0; i < g->nhosts; i++)
        if (!strcasecmp(text, g->hosts[i]))
            return 1;
    return 0;
}

/* An origin as --allow-origin takes it: http:// or https://, a host, an optional port; no path.
 * Stored with scheme and host in lower case, as browsers serialise it. */
static char *origin_parse(const char *s, size_t n)
{
    size_t skip = n > 7 && !strncasecmp(s, "http://", 7)    ? 7
                  : n > 8 && !strncasecmp(s, "https://", 8) ? 8
                                                            : 0;
    if (!skip)
        return NULL;
    char *o = lower_dup(s, n);
    if (!o)
        return NULL;
    const char *h;
    size_t hl;
    int br;
    int ok = !split_host(o + skip, &h, &hl, &br);
    if (ok && !br) {
        ok = name_ok(h, hl);
    } else if (ok) {
        char lit[64];
        unsigned char a[16];
        ok = hl < sizeof lit;
        if (ok) {
            memcpy(lit, h, hl);
            lit[hl] = '\0';
            ok = inet_pton(AF_INET6, lit, a) == 1;
        }
    }
    if (!ok) {
        free(o);
        return NULL;
    }
    return o;
}

/* Split a comma-separated option into out[], each through keep (NULL when refused). */
static int list_parse(const char *flag, const char *text, char **out, size_t *n,
                      char *(*keep)(const char *, size_t), const char *rule, dpas_error *err)
{
    *n = 0;
    for (const char *p = text; p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *item = NULL, q[120], part[GUARD_NAME_MAX + 16];
        if (*n == GUARD_MAX_NAMES)
            return dpas_error_set(err, DPAS_EINVAL, flag, "%s takes at most %d values", flag,
                                  GUARD_MAX_NAMES);
        if (len && len < sizeof part) {
            item = keep(p, len);
        }
        if (!item) {
            snprintf(part, sizeof part, "%.*s",
                     (int)(len < sizeof part - 1 ? len : sizeof part - 1), p);
            return dpas_error_set(err, DPAS_EINVAL, flag, "%s: %s is not %s", flag,
                                  dpas_quote(part, q, sizeof q), rule);
        }
        /* a name given twice, in any case (hosts and origins are read in any case), is refused
         * as every list of names is (issue 29) */
        for (size_t j = 0; j < *n; j++)
            if (!strcasecmp(out[j], item)) {
                char r[120];
                snprintf(part, sizeof part, "%.*s",
                         (int)(len < sizeof part - 1 ? len : sizeof part - 1), p);
                int rc =
                    dpas_error_set(err, DPAS_EINVAL, flag, "%s: %s is given twice (as %s)", flag,
                                   dpas_quote(part, q, sizeof q), dpas_quote(out[j], r, sizeof r));
                free(item);
                return rc;
            }
        out[(*n)++] = item;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static char *host_keep(const char *s, size_t n)
{
    if (n > 1 && s[n - 1] == '.')
        n--;
    return name_ok(s, n) ? lower_dup(s, n) : NULL;
}

srv_guard *srv_guard_new(const char *bind, const char *allow_hosts, const char *allow_origins,
                         dpas_error *err)
{
    srv_guard *g = calloc(1, sizeof *g);
    if (!g) {
        dpas_error_set(err, DPAS_ENOMEM, "", "out of memory");
        return NULL;
    }
    dpas_quote(bind, g->bind, sizeof g->bind);
    if (inet_pton(AF_INET, bind, g->addr) == 1) {
        g->family = AF_INET;
        g->wildcard = !memcmp(g->addr, "\0\0\0\0", 4);
        g->loopback = g->addr[0] == 127;
    } else if (inet_pton(AF_INET6, bind, g->addr) == 1) {
        static const unsigned char any[16], one[16] = {[15] = 1};
        g->family = AF_INET6;
        g->wildcard = !memcmp(g->addr, any, 16);
        g->loopback = !memcmp(g->addr, one, 16);
    }
    if ((allow_hosts && list_parse("--allow-host", allow_hosts, g->hosts, &g->nhosts, host_keep,
                                   "a host name (letters, digits, '-' and '.'; no port)", err)) ||
        (allow_origins &&
         list_parse("--allow-origin", allow_origins, g->origins, &g->norigins, origin_parse,
                    "an origin (http:// or https://, a host name or a bracketed IPv6 address, "
                    "an optional port, no path)",
                    err))) {
        srv_guard_free(g);
        return NULL;
    }
    return g;
}

void srv_guard_free(srv_guard *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->nhosts; i++)
        free(g->hosts[i]);
    for (size_t i = 0; i < g->norigins; i++)
        free(g->origins[i]);
    free(g);
}

/* The origin of the page this server itself serves at host: http://HOST or https://HOST. */
static int same_origin(const char *origin, const char *host)
{
    const char *a = !strncasecmp(origin, "http://", 7)    ? origin + 7
                    : !strncasecmp(origin, "https://", 8) ? origin + 8
                                                          : NULL;
    return a && !strcasecmp(a, host);
}

int srv_guard_check(const srv_guard *g, const char *method, const char *host, const char *origin,
                    const char *acrm, srv_response *r)
{
    char q[120];
    if (!host || !*host) {
        srv_fail(r, 400, DPAS_EINVAL, "host",
                 "the request has no Host header; this server answers only the hosts it serves");
        return -1;
    }
    int served = host_served(g, host);
    if (served < 0) {
        srv_fail(r, 400, DPAS_EINVAL, "host",
                 "Host %s is not a host and an optional port (a name, an IPv4 address or an IPv6 "
                 "address in brackets)",
                 dpas_quote(host, q, sizeof q));
        return -1;
    }
    if (!served) {
        srv_fail(r, 421, DPAS_EINVAL, "host",
                 "Host %s is not served here: this server answers to %s%s%s%s (give --allow-host "
                 "NAME to serve another name)",
                 dpas_quote(host, q, sizeof q), g->wildcard ? "any IP address of its own" : g->bind,
                 g->wildcard ? "" : " (its --bind address)", g->loopback ? ", localhost" : "",
                 g->nhosts ? " and its --allow-host names" : "");
        return -1;
    }
    if (!origin)
        return 0;
    const char *allowed = NULL;
    for (size_t i = 0; i < g->norigins && !allowed; i++)
        if (!strcasecmp(origin, g->origins[i]))
            allowed = g->origins[i];
    if (!allowed && !same_origin(origin, host)) {
        srv_fail(r, 403, DPAS_EINVAL, "origin",
                 "a request from origin %s is not allowed: cross-origin requests are off (give "
                 "--allow-origin ORIGIN to allow one)",
                 dpas_quote(origin, q, sizeof q));
        return -1;
    }
    r->allow_origin = allowed;
    if (allowed && acrm && !strcmp(method, "OPTIONS")) { /* a CORS preflight */
        r->status = 204;
        r->type = NULL;
        r->body = NULL;
        r->len = 0;
        r->free_body = NULL;
        r->preflight = 1;
        return -1;
    }
    return 0;
}

/* Fetch Metadata (https://www.w3.org/TR/fetch-metadata/): a browser names, in Sec-Fetch-Site,
 * how the page that made a request relates to the server: same-origin, same-site (another port
 * or subdomain), cross-site, or none (typed into the address bar, a bookmark). A request a page
 * makes without CORS (an <img src>, a link, a form's GET) carries no Origin header, so
 * srv_guard_check lets it through, and nothing but this header tells it from curl's. Such a
 * request cannot read the answer, but it can make the server compute: a heavy one is refused
 * before it reaches the lane. A request with an Origin was judged by srv_guard_check (its own
 * origin, or an --allow-origin). Clients that send no Sec-Fetch-Site (curl, scripts, older
 * browsers) are not browsers' cross-site requests, or cannot be told from them. */
int srv_guard_heavy(const srv_incoming *in, srv_response *r)
{
    const char *s = in->sec_fetch_site;
    if (in->origin || !s || !strcasecmp(s, "same-origin") || !strcasecmp(s, "none"))
        return 0;
    char q[72];
    srv_fail(r, 403, DPAS_EINVAL, "origin",
             "a heavy request (calibrate, sweep, plot.svg, or a calibration part) sent by a page "
             "of another origin without CORS (Sec-Fetch-Site %s, no Origin header) is refused: "
             "another site's page may not make this server compute; send it from the server's "
             "own page, or with CORS from an origin given by --allow-origin",
             dpas_quote(s, q, sizeof q));
    return -1;
}
