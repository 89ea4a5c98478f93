//go:build cyclonedds

/* See pulse_dds.h. */
#include "pulse_dds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *what, dds_return_t rc)
{
    snprintf(err, errlen, "%s: %s", what, dds_strretcode(rc));
    return rc < 0 ? (int)rc : -1;
}

int pd_open(pd_bridge *b, uint32_t domain_id, const char *config, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    if (config != NULL) {
        b->domain = dds_create_domain(domain_id, config);
        if (b->domain < 0)
            return fail(err, errlen, "cannot create the DDS domain", b->domain);
    }
    b->participant = dds_create_participant(domain_id, NULL, NULL);
    if (b->participant < 0) {
        int rc = fail(err, errlen, "cannot create a DDS participant", b->participant);
        pd_close(b);
        return rc;
    }
    /* What rmw_cyclonedds gives /statistics and /diagnostics readers:
     * reliable, volatile, keep-last 10 (shared/reference/peers.md §3.3). */
    dds_qos_t *qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
    dds_qset_durability(qos, DDS_DURABILITY_VOLATILE);
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 10);
    dds_qset_writer_data_lifecycle(qos, false);
    dds_entity_t ts = dds_create_topic(b->participant, &statistics_msgs_msg_dds__MetricsMessage__desc, "rt/statistics", NULL, NULL);
    dds_entity_t td = dds_create_topic(b->participant, &diagnostic_msgs_msg_dds__DiagnosticArray__desc, "rt/diagnostics", NULL, NULL);
    if (ts < 0 || td < 0) {
        dds_delete_qos(qos);
        int rc = fail(err, errlen, "cannot create the topics", ts < 0 ? ts : td);
        pd_close(b);
        return rc;
    }
    b->statistics = dds_create_writer(b->participant, ts, qos, NULL);
    b->diagnostics = dds_create_writer(b->participant, td, qos, NULL);
    dds_delete_qos(qos);
    if (b->statistics < 0 || b->diagnostics < 0) {
        int rc = fail(err, errlen, "cannot create the writers", b->statistics < 0 ? b->statistics : b->diagnostics);
        pd_close(b);
        return rc;
    }
    return 0;
}

void pd_close(pd_bridge *b)
{
    if (b->participant > 0)
        dds_delete(b->participant);
    if (b->domain > 0)
        dds_delete(b->domain);
    memset(b, 0, sizeof *b);
}

int pd_write_metrics(const pd_bridge *b, const char *source, const char *metric, const char *unit,
                     int32_t start_sec, uint32_t start_nsec, int32_t stop_sec, uint32_t stop_nsec,
                     const uint8_t *types, const double *data, uint32_t npoints)
{
    statistics_msgs_msg_dds__StatisticDataPoint_ pts[16];
    if (npoints > 16)
        return DDS_RETCODE_BAD_PARAMETER;
    for (uint32_t i = 0; i < npoints; i++)
        pts[i] = (statistics_msgs_msg_dds__StatisticDataPoint_){types[i], data[i]};
    statistics_msgs_msg_dds__MetricsMessage_ m = {
        .measurement_source_name = (char *)source,
        .metrics_source = (char *)metric,
        .unit = (char *)unit,
        .window_start = {start_sec, start_nsec},
        .window_stop = {stop_sec, stop_nsec},
        .statistics = {._maximum = npoints, ._length = npoints, ._buffer = pts, ._release = false},
    };
    return dds_write(b->statistics, &m);
}

int pd_write_diagnostics(const pd_bridge *b, int32_t sec, uint32_t nsec, const char *frame_id, uint32_t n,
                         const uint8_t *levels, char **names, char **messages, char **hardware_ids,
                         const uint32_t *nvalues, char **keys, char **values)
{
    diagnostic_msgs_msg_dds__DiagnosticStatus_ *st = calloc(n ? n : 1, sizeof *st);
    uint32_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += nvalues[i];
    diagnostic_msgs_msg_dds__KeyValue_ *kv = calloc(total ? total : 1, sizeof *kv);
    if (st == NULL || kv == NULL) {
        free(st), free(kv);
        return DDS_RETCODE_OUT_OF_RESOURCES;
    }
    for (uint32_t i = 0, k = 0; i < n; k += nvalues[i], i++) {
        for (uint32_t j = 0; j < nvalues[i]; j++)
            kv[k + j] = (diagnostic_msgs_msg_dds__KeyValue_){keys[k + j], values[k + j]};
        st[i] = (diagnostic_msgs_msg_dds__DiagnosticStatus_){
            .level = levels[i], .name = names[i], .message = messages[i], .hardware_id = hardware_ids[i],
            .values = {._maximum = nvalues[i], ._length = nvalues[i], ._buffer = nvalues[i] ? &kv[k] : NULL, ._release = false},
        };
    }
    diagnostic_msgs_msg_dds__DiagnosticArray_ a = {
        .header = {.stamp = {sec, nsec}, .frame_id = (char *)frame_id},
        .status = {._maximum = n, ._length = n, ._buffer = n ? st : NULL, ._release = false},
    };
    int rc = dds_write(b->diagnostics, &a);
    free(st);
    free(kv);
    return rc;
}

int pd_matched(const pd_bridge *b, uint32_t *statistics, uint32_t *diagnostics)
{
    dds_publication_matched_status_t s;
    if (dds_get_publication_matched_status(b->statistics, &s) < 0)
        return -1;
    *statistics = s.current_count;
    if (dds_get_publication_matched_status(b->diagnostics, &s) < 0)
        return -1;
    *diagnostics = s.current_count;
    return 0;
}
