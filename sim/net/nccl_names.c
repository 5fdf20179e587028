/* nccl_names: the small facts of NCCL's model: names of its algorithms and protocols, release
 * numbers, the GPU architecture a model name implies, and the link bandwidths its topology
 * detection counts (GB/s per direction). Every figure cites the file and line at the tag read. */
#include "nccl_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(ms_nccl_error, ms_nccl_error)

static const char *const algo_names[MS_NCCL_N_ALGOS] = {"tree", "ring", "nvls", "nvlstree"};
static const char *const proto_names[MS_NCCL_N_PROTOS] = {"LL", "LL128", "Simple"};

const char *
ms_nccl_algo_name(MsNcclAlgo algo)
{
    g_return_val_if_fail(algo < MS_NCCL_N_ALGOS, "?");
    return algo_names[algo];
}

const char *
ms_nccl_proto_name(MsNcclProto proto)
{
    g_return_val_if_fail(proto < MS_NCCL_N_PROTOS, "?");
    return proto_names[proto];
}

gboolean
ms_nccl_algo_from_name(const char *name, MsNcclAlgo *out)
{
    for (guint i = 0; name != NULL && i < MS_NCCL_N_ALGOS; i++) {
        if (g_ascii_strcasecmp(name, algo_names[i]) == 0) {
            *out = i;
            return TRUE;
        }
    }
    return FALSE;
}

gboolean
ms_nccl_proto_from_name(const char *name, MsNcclProto *out)
{
    for (guint i = 0; name != NULL && i < MS_NCCL_N_PROTOS; i++) {
        if (g_ascii_strcasecmp(name, proto_names[i]) == 0) {
            *out = i;
            return TRUE;
        }
    }
    return FALSE;
}

/* A run of decimal digits of at most `max` characters; FALSE for none or too many. */
static gboolean
digits(const char **p, guint max, guint *out)
{
    guint n = 0, v = 0;
    while (g_ascii_isdigit(**p) && n < max) {
        v = v * 10 + (guint)(**p - '0');
        (*p)++;
        n++;
    }
    *out = v;
    return n > 0 && !g_ascii_isdigit(**p);
}

gboolean
ms_nccl_parse_version(const char *text, guint *version)
{
    if (text == NULL) {
        return FALSE;
    }
    const char *p = text;
    guint major = 0, minor = 0, patch = 99, code = 0;
    if (strchr(text, '.') == NULL) {
        if (!digits(&p, 5, &code) || *p != '\0') {
            return FALSE;
        }
    } else {
        if (!digits(&p, 1, &major) || *p++ != '.' || !digits(&p, 2, &minor)) {
            return FALSE;
        }
        /* "2.18" alone stands for the newest patch release of 2.18 (patch 99 in the code), so
         * that every rule introduced by a patch of that minor applies. */
        if (*p == '.' && (p++, !digits(&p, 2, &patch))) {
            return FALSE;
        }
        if (*p != '\0') {
            return FALSE;
        }
        code = MS_NCCL_VERSION(major, minor, patch);
    }
    if (code < MS_NCCL_VERSION_MIN || code > MS_NCCL_VERSION_MAX) {
        return FALSE;
    }
    *version = code;
    return TRUE;
}

/* GPU model names by their leading product number, after dropping case, punctuation and the
 * vendor words; the longer names come first where one is a prefix of another. SM versions as
 * NVIDIA's CUDA GPU table gives them. */
static const struct {
    const char *prefix;
    guint arch;
} models[] = {
    {"GB200", 100},     {"B200", 100},   {"B100", 100},   {"GH200", 90}, {"H100", 90},
    {"H200", 90},       {"H800", 90},    {"H20", 90},     {"A100", 80},  {"A800", 80},
    {"A30", 80},        {"A10", 86},     {"A40", 86},     {"A16", 86},   {"RTXA", 86},
    {"RTX30", 86},      {"L40", 89},     {"L20", 89},     {"L4", 89},    {"RTX40", 89},
    {"RTX6000ADA", 89}, {"V100", 70},    {"TITANV", 70},  {"RTX20", 75}, {"T4", 75},
    {"TITANRTX", 75},   {"RTX6000", 75}, {"RTX8000", 75},
};

gboolean
ms_nccl_arch_of_model(const char *model, guint *arch)
{
    if (model == NULL) {
        return FALSE;
    }
    GString *norm = g_string_new(NULL);
    for (const char *c = model; *c; c++) {
        if (g_ascii_isalnum(*c)) {
            g_string_append_c(norm, g_ascii_toupper(*c));
        }
    }
    const char *s = norm->str;
    static const char *const vendor[] = {"NVIDIA", "TESLA", "GEFORCE", "QUADRO"};
    for (guint i = 0; i < G_N_ELEMENTS(vendor); i++) {
        if (g_str_has_prefix(s, vendor[i])) {
            s += strlen(vendor[i]);
        }
    }
    gboolean found = FALSE;
    for (guint i = 0; i < G_N_ELEMENTS(models) && !found; i++) {
        if (g_str_has_prefix(s, models[i].prefix)) {
            *arch = models[i].arch;
            found = TRUE;
        }
    }
    g_string_free(norm, TRUE);
    return found;
}

double
ms_nccl_nvlink_bw(guint arch, guint version)
{
    /* ncclTopoNVLinkBw: SM60 18, SM70 and SM80 21 in 2.8 and 2.9 (SM70_NVLINK_WIDTH and
     * SM80_NVLINK_WIDTH, v2.8.4 and v2.9.9 src/graph/topo.h:16-17), 22 from 2.10 through 2.17
     * (v2.10 src/graph/topo.h:14-16, 168-173), 20 from 2.18.1 (v2.18 src/graph/topo.h:15-16); SM86
     * 12 (v2.10 topo.h:17). SM90 had no figure of its own before 2.18: ">= 80" gave it the SM80 one
     * (v2.10 topo.h:170); 20 from 2.18.1 (v2.18 topo.h:17), 20.6 from 2.20.3 (v2.20.3 topo.h:17).
     * SM100 takes the SM90 figure until 2.25.1 gives it 40.0 (v2.25.1 topo.h:19), 40.1 from 2.27.5
     * (v2.27.5 topo.h:21; 2.27.3 still 40.0, 2.27.4 has no tag). */
    if (arch >= 100 && version >= V(2, 25, 0)) {
        return version >= V(2, 27, 5) ? 40.1 : 40.0;
    }
    if (arch >= 90 && version >= V(2, 18, 0)) {
        return version >= V(2, 20, 0) ? 20.6 : 20.0;
    }
    if (arch == 86) {
        return 12.0;
    }
    if (arch >= 70) {
        return version >= V(2, 18, 0) ? 20.0 : version >= V(2, 10, 0) ? 22.0 : 21.0;
    }
    return 18.0;
}

guint
ms_nccl_default_version(guint arch)
{
    return arch >= 100 ? MS_NCCL_VERSION_DEFAULT_SM100 : MS_NCCL_VERSION_DEFAULT;
}

double
ms_nccl_pci_bw(double nominal_gbps)
{
    /* NCCL counts a PCIe link as width x speed / 80 GB/s, the speed in units of 100 Mb/s per
     * lane: 15, 30, 60, 120, 240, 480 for 2.5 to 64 GT/s (v2.18 src/graph/topo.cc:373-376,
     * 438); x16 Gen3 = 12 (PCI_BW, v2.18 topo.h:19), Gen4 24, Gen5 48. A datasheet gives the
     * payload rate, 15.754 GB/s for x16 Gen3 (8 GT/s x 16 x 128/130 / 8), so NCCL's figure is
     * the nominal one x 12 / 15.754. The result snaps to the nearest width x speed / 80 within
     * 2%, as NCCL only ever sees those values. */
    if (!(nominal_gbps > 0) || isinf(nominal_gbps)) {
        return nominal_gbps;
    }
    double raw = nominal_gbps * 12.0 / 15.754;
    static const int width[] = {1, 2, 4, 8, 16, 32};
    static const int speed[] = {15, 30, 60, 120, 240, 480};
    double best = raw, best_d = 0.02 * raw;
    for (guint w = 0; w < G_N_ELEMENTS(width); w++) {
        for (guint s = 0; s < G_N_ELEMENTS(speed); s++) {
            double c = width[w] * speed[s] / 80.0;
            if (fabs(c - raw) <= best_d) {
                best = c;
                best_d = fabs(c - raw);
            }
        }
    }
    return best;
}

const double *
nccl_band(const NcclBand *bands, guint n, guint version)
{
    guint pick = 0;
    for (guint i = 0; i < n; i++) {
        if (bands[i].from <= version) {
            pick = i;
        }
    }
    return bands[pick].v;
}

guint
nccl_max_channels(guint version)
{
    /* MAXCHANNELS 32 (v2.10 src/include/devcomm.h:49), 64 from 2.25.1 (v2.30 include/device.h:91;
     * 2.24.3 still 32). */
    return version >= V(2, 25, 0) ? 64 : 32;
}
