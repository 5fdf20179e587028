/* plot: figures as self-contained gnuplot scripts. A figure is written as PATH.gp (settings plus
 * the data as inline blocks) and rendered to PATH (.png with pngcairo, .svg with svg) by running
 * gnuplot on it, so the data and the script stay beside the picture for anyone to re-plot. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define MS_PLOT_ERROR (ms_plot_error_quark())
GQuark ms_plot_error_quark(void);
typedef enum {
    MS_PLOT_ERROR_IO,      /* the script could not be written */
    MS_PLOT_ERROR_FORMAT,  /* the output is neither .png nor .svg */
    MS_PLOT_ERROR_GNUPLOT, /* gnuplot is missing or failed (its stderr is quoted) */
} MsPlotError;

typedef struct _MsPlot MsPlot;

/* path ends in .png or .svg; width x height in pixels; a title may have several lines. */
MsPlot *ms_plot_new(const char *path, const char *title, guint width, guint height);
void ms_plot_free(MsPlot *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsPlot, ms_plot_free)

/* Any gnuplot setting line ("set xlabel 'size'", "set logscale x" ...). */
void ms_plot_set(MsPlot *p, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* Starts a data series drawn with `using ... with style title name`; rows follow. */
guint ms_plot_series(MsPlot *p, const char *name, const char *using_cols, const char *style);
/* A row of numbers; label (may be NULL) is appended as a quoted text column. */
void ms_plot_row(MsPlot *p, guint series, const double *values, guint n, const char *label);

/* Writes PATH.gp and runs gnuplot. When gnuplot is not installed the script is still written and
 * MS_PLOT_ERROR_GNUPLOT is returned, so callers can say how to render it later. */
gboolean ms_plot_render(MsPlot *p, GError **error);

/* Whether gnuplot can be run. */
gboolean ms_plot_available(void);

G_END_DECLS
