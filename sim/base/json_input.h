/* json_input: JSON text from files and memory with the check json-glib lacks. Its parser (and its
 * node destructor) recurse once per level of nesting, so a few hundred kilobytes of '[' overflow
 * the stack: every JSON input moesim reads goes through a nesting bound here first. Knows nothing
 * of what the JSON means. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "input_file.h"

G_BEGIN_DECLS

#define MS_JSON_INPUT_ERROR (ms_json_input_error_quark())
GQuark ms_json_input_error_quark(void);
typedef enum {
    MS_JSON_INPUT_ERROR_IO,     /* the file could not be read */
    MS_JSON_INPUT_ERROR_DEPTH,  /* arrays and objects nested deeper than MS_JSON_INPUT_MAX_DEPTH */
    MS_JSON_INPUT_ERROR_SYNTAX, /* not JSON (json-glib's message, located), or two documents */
} MsJsonInputError;

/* Far beyond any document moesim writes (results and schedules nest 4 levels), far below what
 * exhausts the stack. */
#define MS_JSON_INPUT_MAX_DEPTH 512u

/* Checks the nesting of data (len bytes; brackets inside strings do not count): FALSE with
 * MS_JSON_INPUT_ERROR_DEPTH as "SOURCE:LINE: JSON nested deeper than 512 levels", or with
 * MS_JSON_INPUT_ERROR_SYNTAX when anything but blanks follows the top-level array or object
 * (json-glib would silently take a second document); without the location when source is NULL.
 * Says nothing about the rest of the syntax. */
gboolean ms_json_input_check(const char *data, gsize len, const char *source, GError **error);

/* Checks, then loads data into parser. Syntax errors read "SOURCE:LINE:COLUMN: Parse error: ...".
 */
gboolean ms_json_input_load_data(JsonParser *parser, const char *data, gsize len,
                                 const char *source, GError **error);
/* The same for the contents of path, read through sim/base/input_file.h as the given kind
 * (MS_JSON_INPUT_ERROR_IO when it is not a regular file within the kind's limit, or unreadable;
 * the message says which and names the limit). */
gboolean ms_json_input_load_file(JsonParser *parser, const char *path, MsInputKind kind,
                                 GError **error);

G_END_DECLS
