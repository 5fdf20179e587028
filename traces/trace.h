/* trace: the expert-selection trace data model shared by the reader, writer, generator and
 * importers: the header (experts, MoE layers, ranks, top_k), its documented limits, the record
 * kinds and the error domain of everything a trace can be wrong about. Counts are tokens (guint32);
 * it knows nothing of bytes, time or placement: the simulator maps experts to ranks.
 * Format specification: docs/trace-format.md. */
#pragma once

#include <glib.h>

#include "sim/base/ranges.h"

G_BEGIN_DECLS

/* The one error domain of the trace format: the header, MsRouting, the reader and the writer all
 * report in it, so a caller handles one domain for whatever a trace file can be wrong about. */
#define MS_TRACE_ERROR (ms_trace_error_quark())
GQuark ms_trace_error_quark(void);
typedef enum {
    MS_TRACE_ERROR_IO,           /* cannot open, read or write */
    MS_TRACE_ERROR_FORMAT,       /* not a trace: bad magic, bad first line, bad record tag */
    MS_TRACE_ERROR_VERSION,      /* a format version this moesim does not read */
    MS_TRACE_ERROR_HEADER,       /* missing, duplicate or unknown header key */
    MS_TRACE_ERROR_LIMIT,        /* a header value (or size) outside the documented limits */
    MS_TRACE_ERROR_SYNTAX,       /* a field that is not a number, a wrong number of fields */
    MS_TRACE_ERROR_OVERFLOW,     /* a number too large for its field */
    MS_TRACE_ERROR_RANGE,        /* layer, rank or expert id not below the header's count */
    MS_TRACE_ERROR_PATH,         /* wrong number of expert ids, an expert twice in one top_k */
    MS_TRACE_ERROR_DUPLICATE,    /* a count cell or a token id given twice in one iteration */
    MS_TRACE_ERROR_ORDER,        /* iterations going backwards */
    MS_TRACE_ERROR_TRUNCATED,    /* a binary trace that ends inside a record or lacks its end */
    MS_TRACE_ERROR_MIXED,        /* count and token records in one iteration */
    MS_TRACE_ERROR_INCONSISTENT, /* per-rank sums that do not make whole tokens */
    MS_TRACE_ERROR_UNKNOWN,      /* no shipped sample of that name */
} MsTraceError;

/* The format version this code reads and writes (both text and binary forms). */
#define MS_TRACE_VERSION 1

/* Documented limits (docs/trace-format.md). A header beyond them is refused before anything is
 * allocated. MS_TRACE_MAX_CELLS bounds layers x ranks x experts, the size of one iteration's count
 * matrix (4 bytes a cell, so at most 1 GiB: DeepSeek-V3 on 16,384 GPUs is 58 x 16384 x 256 = 243
 * million cells, 928 MiB). */
#define MS_TRACE_MAX_EXPERTS 65536u
#define MS_TRACE_MAX_LAYERS 4096u
#define MS_TRACE_MAX_RANKS 65536u
#define MS_TRACE_MAX_TOP_K 64u
#define MS_TRACE_MAX_CELLS (G_GUINT64_CONSTANT(1) << 28)
#define MS_TRACE_MAX_TOKENS_PER_RANK (1u << 26)
#define MS_TRACE_MAX_ITERATION G_MAXUINT32
#define MS_TRACE_GENERATOR_MAX 512u
#define MS_TRACE_MAX_GROUPS 64u /* layer groups (an encoder and a decoder are two) */

typedef enum {
    MS_TRACE_FORMAT_TEXT,
    MS_TRACE_FORMAT_BINARY,
    MS_TRACE_FORMAT_GENERATED, /* only reported by a reader of a gen:SPEC source */
} MsTraceFormat;

const char *ms_trace_format_name(MsTraceFormat format);

/* Every number a trace header carries, with its range (sim/base/ranges.h). */
const MsRangeTable *ms_trace_ranges(void);

/* A plain value record (copy it freely). tokens_per_rank 0 means "not fixed": when non-zero every
 * rank routes exactly that many tokens in every iteration. A node limit (DeepSeek-V3's
 * node-limited routing) is declared by expert_nodes and max_nodes together, 0 when absent:
 * experts sit on expert_nodes nodes in contiguous blocks (expert e on node
 * e / (experts / expert_nodes)) and each token's top_k experts at each layer span at most
 * max_nodes of them. Layer groups (a model's encoder and decoder, docs/models.md) split the MoE
 * layers into n_groups runs, group g starting at MoE layer group_first[g] (group_first[0] = 0,
 * increasing); the layers of a group route the same tokens, different groups may route different
 * numbers; n_groups 0 is one group of every layer. generator is provenance (the command that
 * produced the trace), empty when unknown; it never holds a newline. */
typedef struct {
    guint32 experts;
    guint32 layers; /* MoE layers only */
    guint32 ranks;
    guint32 top_k;
    guint32 tokens_per_rank;
    guint32 expert_nodes;
    guint32 max_nodes;
    guint32 n_groups;
    guint32 group_first[MS_TRACE_MAX_GROUPS];
    char generator[MS_TRACE_GENERATOR_MAX];
} MsTraceHeader;

/* The layer group of MoE layer `layer` (0 without groups). */
guint32 ms_trace_header_group(const MsTraceHeader *header, guint32 layer);
/* Groups, at least 1. */
guint32 ms_trace_header_n_groups(const MsTraceHeader *header);
/* Whether two headers have the same layer groups (0 and 1 group are the same). */
gboolean ms_trace_header_equal_groups(const MsTraceHeader *a, const MsTraceHeader *b);

/* Sets every count to 0 and the generator to "". */
void ms_trace_header_init(MsTraceHeader *header);
/* The same, then sets the shape (tokens_per_rank 0, no generator); nothing is validated. */
void ms_trace_header_init_shape(MsTraceHeader *header, guint32 experts, guint32 layers,
                                guint32 ranks, guint32 top_k);
/* Checks every field against the limits and each other (top_k <= experts, the cell bound, a
 * node limit that the layout can meet). FALSE with MS_TRACE_ERROR_LIMIT naming the field and the
 * bad value, or MS_TRACE_ERROR_HEADER when only one of expert_nodes and max_nodes is set. */
gboolean ms_trace_header_validate(const MsTraceHeader *header, GError **error);
/* Sets the provenance line; FALSE with MS_TRACE_ERROR_LIMIT when too long or multi-line. */
gboolean ms_trace_header_set_generator(MsTraceHeader *header, const char *text, GError **error);
/* Whether two headers describe the same shape and provenance. */
gboolean ms_trace_header_equal(const MsTraceHeader *a, const MsTraceHeader *b);
/* Bits needed to store an expert id (at least 1). */
guint ms_trace_header_expert_bits(const MsTraceHeader *header);
/* Number of expert ids in a token record: layers * top_k. */
guint ms_trace_header_path_len(const MsTraceHeader *header);
/* The number of distinct nodes among the top_k ids of one layer when experts sit on `nodes`
 * nodes in contiguous blocks (nodes divides experts). */
guint ms_trace_nodes_reached(guint32 experts, guint32 nodes, const guint32 *ids, guint top_k);

/* Checks of one record's fields against a header, shared by MsRouting and the writer:
 * MS_TRACE_ERROR_RANGE for a layer, rank or expert id out of range, MS_TRACE_ERROR_PATH for an
 * expert chosen twice within one layer's top_k or, under a declared node limit, a layer whose
 * experts span more than max_nodes nodes (experts holds layers * top_k ids, layer-major). */
gboolean ms_trace_check_count(const MsTraceHeader *header, guint64 layer, guint64 rank,
                              guint64 expert, GError **error);
gboolean ms_trace_check_token(const MsTraceHeader *header, guint64 rank, const guint32 *experts,
                              GError **error);

/* Record kinds, as the codecs decode them. A token record's experts point into the decoder's
 * buffer and stay valid until the next record is read. */
typedef enum {
    MS_TRACE_RECORD_COUNT,
    MS_TRACE_RECORD_TOKEN,
} MsTraceRecordKind;

typedef struct {
    MsTraceRecordKind kind;
    guint64 iteration;
    guint32 rank;
    guint32 layer;          /* count records */
    guint32 expert;         /* count records */
    guint32 tokens;         /* count records */
    guint64 token_id;       /* token records */
    const guint32 *experts; /* token records: layers * top_k ids, layer-major */
} MsTraceRecord;

/* What a codec's read_record call produced. */
typedef enum {
    MS_TRACE_READ_ERROR,  /* error set */
    MS_TRACE_READ_RECORD, /* *record filled */
    MS_TRACE_READ_END,    /* no more records */
} MsTraceRead;

/* Parses an unsigned decimal of len bytes (digits only, no sign or blank). */
typedef enum {
    MS_TRACE_NUMBER_OK,
    MS_TRACE_NUMBER_SYNTAX,
    MS_TRACE_NUMBER_OVERFLOW, /* a valid number above max */
} MsTraceNumber;
MsTraceNumber ms_trace_parse_number(const char *text, gsize len, guint64 max, guint64 *out);

G_END_DECLS
