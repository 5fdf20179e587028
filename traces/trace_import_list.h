/* trace_import_list: the lists that framework logs hold in one column or field: a list of numbers
 * (tokens per expert) or a list of such lists (per token: its expert ids, a router's logits, a
 * 0/1 routing map), written as JSON or as Python prints them (tuples, True/False, numpy and torch
 * wrappers such as tensor([...], device='cuda:0') or np.int64(3)). The grammar is
 * docs/trace-format.md's ("List columns"). Numbers are kept as doubles: every count and id a
 * trace holds is an integer below 2^53, so none is rounded. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Nesting a list may have: a list of numbers, or a list of lists of numbers. */
#define MS_IMPORT_LIST_MAX_DEPTH 2

/* A parsed list: depth 1 holds n_outer numbers; depth 2 holds n_outer lists of n_inner numbers
 * each (rectangular), row-major. values is owned. */
typedef struct {
    guint depth;
    guint n_outer, n_inner;
    GArray *values; /* double */
} MsImportList;

void ms_import_list_init(MsImportList *list);
void ms_import_list_clear(MsImportList *list);

/* Parses text (len bytes, no NUL needed). FALSE with a message in *why (g_free it) naming the
 * character offset and what was expected: not a list, a third level of nesting, lists of
 * different lengths, a number that does not parse or is not finite, text after the list. */
gboolean ms_import_list_parse(const char *text, gsize len, MsImportList *out, char **why);
/* The same from a JSON value (an array of numbers or booleans, or of such arrays). */
gboolean ms_import_list_from_json(JsonNode *node, MsImportList *out, char **why);

G_END_DECLS
