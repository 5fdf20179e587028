/* csv: the one reader of comma-separated values every CSV input goes through (measurement files,
 * Vidur profiles, trace imports), and the writer of a field. A record is one line: fields are
 * separated by commas, blanks around a field are dropped, a field may be quoted as RFC 4180 says
 * ("a, b" keeps its comma, "" inside quotes is one quote) but a quoted field does not span lines;
 * a line may end in CR LF or LF; a UTF-8 byte order mark before a file's first line is not part of
 * it. A header row names the columns; rows may carry more fields than the header only when the
 * extra ones are empty (the trailing commas spreadsheets write). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_CSV_ERROR (ms_csv_error_quark())
GQuark ms_csv_error_quark(void);
typedef enum {
    MS_CSV_ERROR_SYNTAX, /* an unterminated quote, text after a closing quote, a NUL byte */
    MS_CSV_ERROR_WIDTH,  /* a row whose field count is not the header's */
} MsCsvError;

/* The bytes of a UTF-8 byte order mark at the start of data (3), or 0. */
gsize ms_csv_bom_length(const char *data, gsize len);

/* The next line of data from *pos, without its LF or CR LF (free with g_free); NULL at the end. */
char *ms_csv_next_line(const char *data, gsize len, gsize *pos);

/* The fields of one line, reused from line to line. */
typedef struct _MsCsvFields MsCsvFields;

MsCsvFields *ms_csv_fields_new(void);
void ms_csv_fields_free(MsCsvFields *fields);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsCsvFields, ms_csv_fields_free)

/* Splits line (NUL-terminated; a final CR is dropped) into fields, replacing those held. FALSE with
 * MS_CSV_ERROR_SYNTAX saying what and at which column (1-based byte), fields then empty; callers
 * prefix FILE:LINE. */
gboolean ms_csv_fields_split(MsCsvFields *fields, const char *line, GError **error);
guint ms_csv_fields_count(const MsCsvFields *fields);
/* Field i (< count), unquoted and trimmed; valid until the next split. */
const char *ms_csv_fields_get(const MsCsvFields *fields, guint i);
/* The count without the empty fields at the end: the columns a header names (a spreadsheet pads
 * its rows with empty fields to the widest). */
guint ms_csv_fields_width(const MsCsvFields *fields);
/* The fields as a NULL-terminated copy (free with g_strfreev), e.g. a header's names. */
char **ms_csv_fields_dup(const MsCsvFields *fields);
/* Checks a row against a header of n_columns names: TRUE when it has n_columns fields, or more
 * whose extra ones are all empty; else FALSE with MS_CSV_ERROR_WIDTH "N fields, but the header
 * names M". */
gboolean ms_csv_fields_check_width(const MsCsvFields *fields, guint n_columns, GError **error);

/* The index of name among NULL-terminated names, or -1. */
gint ms_csv_column(char *const *names, const char *name);

/* Appends text as one field, quoted when it holds a comma, a quote, a CR or LF, or blanks at an
 * end (what a split would change otherwise): ms_csv_fields_split gives text back. */
void ms_csv_append_field(GString *out, const char *text);

G_END_DECLS
