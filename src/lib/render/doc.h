/* SPDX-License-Identifier: Apache-2.0 */
/* A JSON document around tables, built by the writer's own primitives: strings escaped as the
 * writer escapes them (valid UTF-8, U+FFFD for invalid bytes), every real printed by the one
 * rule (the shortest text that reads back to the same double; null when not finite), members
 * indented two spaces per level. Not installed. */
#ifndef DPAS_DOC_H
#define DPAS_DOC_H

#include "../internal.h"

typedef struct dpas__doc {
    dpas__buf *b;
    int depth;
    bool first;   /* nothing written yet in the open object or array */
    bool inline_; /* the open array is written on one line */
} dpas__doc;

/* Open an object ('{') or array ('['): a member `key` of the open object, or (key NULL) the
 * next element of the open array or the document itself. An inline array stays on one line. */
void dpas__doc_open(dpas__doc *d, const char *key, char bracket);
void dpas__doc_open_inline(dpas__doc *d, const char *key);
void dpas__doc_close(dpas__doc *d, char bracket);
void dpas__doc_str(dpas__doc *d, const char *key, const char *s); /* NULL: null */
void dpas__doc_real(dpas__doc *d, const char *key, double v);
void dpas__doc_int(dpas__doc *d, const char *key, long long v);
void dpas__doc_u64(dpas__doc *d, const char *key, uint64_t v);
void dpas__doc_bool(dpas__doc *d, const char *key, int v);
void dpas__doc_null(dpas__doc *d, const char *key);

#endif
