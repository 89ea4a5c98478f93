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

/* rmw's type name for ParticipantEntitiesInfo; both layouts go out under it. */
static const char entities_info_type[] = "rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_";

/* A topic of type d under another type name: the Iron layout is declared in
 * its own IDL module so that both layouts fit in one binary. The descriptors
 * carry no type information (idlc -t), so the name is all a reader sees. */
static dds_entity_t create_topic_named(dds_entity_t pp, const dds_topic_descriptor_t *d, const char *type_name,
                                       const char *topic)
{
    const dds_topic_descriptor_t renamed = {
        .m_size = d->m_size,
        .m_align = d->m_align,
        .m_flagset = d->m_flagset,
        .m_nkeys = d->m_nkeys,
        .m_typename = type_name,
        .m_keys = d->m_keys,
        .m_nops = d->m_nops,
        .m_ops = d->m_ops,
        .m_meta = d->m_meta,
        .type_information = d->type_information,
        .type_mapping = d->type_mapping,
        .restrict_data_representation = d->restrict_data_representation,
    };
    return dds_create_topic(pp, &renamed, topic, NULL, NULL);
}

/* The ros_discovery_info writer as rmw_cyclonedds makes it (rmw_node.cpp,
 * rmw_context_impl_s::init): rmw_qos_profile_default with keep-last 1,
 * transient-local, reliable, and no "rt/" prefix. */
static dds_entity_t create_discovery_writer(dds_entity_t pp, uint32_t gid_size)
{
    dds_entity_t topic = gid_size == 24
                             ? dds_create_topic(pp, &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc,
                                                "ros_discovery_info", NULL, NULL)
                             : create_topic_named(pp, &rmw_dds_common_gid16_msg_dds__ParticipantEntitiesInfo__desc,
                                                  entities_info_type, "ros_discovery_info");
    if (topic < 0)
        return topic;
    dds_qos_t *qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
    dds_qset_durability(qos, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 1);
    dds_entity_t w = dds_create_writer(pp, topic, qos, NULL);
    dds_delete_qos(qos);
    return w;
}

int pd_open(pd_bridge *b, uint32_t domain_id, const char *config, const pd_node *node, uint32_t gid_size, char *err,
            size_t errlen)
{
    memset(b, 0, sizeof *b);
    if (gid_size != 24 && gid_size != 16) {
        snprintf(err, errlen, "GID size %u: expected 24 (Humble) or 16 (Iron and later)", (unsigned)gid_size);
        return DDS_RETCODE_BAD_PARAMETER;
    }
    b->gid_size = gid_size;
    if (config != NULL) {
        b->domain = dds_create_domain(domain_id, config);
        if (b->domain < 0)
            return fail(err, errlen, "cannot create the DDS domain", b->domain);
    }
    /* rmw_cyclonedds tells the graph its participant's security enclave in
     * USER_DATA; the bridge is in the root enclave. */
    dds_qos_t *pqos = dds_create_qos();
    static const char enclave[] = "enclave=/;";
    dds_qset_userdata(pqos, enclave, sizeof enclave - 1);
    b->participant = dds_create_participant(domain_id, pqos, NULL);
    dds_delete_qos(pqos);
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
    b->discovery = create_discovery_writer(b->participant, gid_size);
    if (b->discovery < 0) {
        int rc = fail(err, errlen, "cannot create the ros_discovery_info writer", b->discovery);
        pd_close(b);
        return rc;
    }
    /* The node and the writers it owns, by the GUIDs the graph sees in
     * DCPSPublication (rmw_cyclonedds: get_entity_gid, dds_get_guid). The
     * ros_discovery_info writer itself is rmw's, not the node's. */
    dds_guid_t pp, ws, wd;
    dds_return_t rc;
    if ((rc = dds_get_guid(b->participant, &pp)) < 0 || (rc = dds_get_guid(b->statistics, &ws)) < 0 ||
        (rc = dds_get_guid(b->diagnostics, &wd)) < 0) {
        fail(err, errlen, "cannot read the entities' GUIDs", rc);
        pd_close(b);
        return rc;
    }
    uint8_t writers[2][16];
    memcpy(writers[0], ws.v, 16);
    memcpy(writers[1], wd.v, 16);
    if ((rc = pd_write_entities_info(b, pp.v, node, 2, writers)) < 0) {
        fail(err, errlen, "cannot write ros_discovery_info", rc);
        pd_close(b);
        return rc;
    }
    return 0;
}

/* Fills one ParticipantEntitiesInfo of the IDL module prefix P (one node, no
 * readers) and writes it; gid is padded with zeros to the layout's size. */
#define WRITE_ENTITIES_INFO(P, rc)                                                                                  \
    do {                                                                                                           \
        P##Gid_ *gids = calloc(nwriters ? nwriters : 1, sizeof *gids);                                             \
        if (gids == NULL) {                                                                                        \
            rc = DDS_RETCODE_OUT_OF_RESOURCES;                                                                     \
            break;                                                                                                 \
        }                                                                                                          \
        for (uint32_t i = 0; i < nwriters; i++)                                                                    \
            memcpy(gids[i].data, writers[i], 16);                                                                  \
        P##NodeEntitiesInfo_ n = {0};                                                                              \
        snprintf(n.node_namespace, sizeof n.node_namespace, "%s", node->name_space);                              \
        snprintf(n.node_name, sizeof n.node_name, "%s", node->name);                                               \
        n.writer_gid_seq = (dds_sequence_##P##Gid_){nwriters, nwriters, nwriters ? gids : NULL, false};            \
        P##ParticipantEntitiesInfo_ m = {0};                                                                       \
        memcpy(m.gid.data, gid, 16);                                                                               \
        m.node_entities_info_seq = (dds_sequence_##P##NodeEntitiesInfo_){1, 1, &n, false};                         \
        rc = dds_write(b->discovery, &m);                                                                          \
        free(gids);                                                                                                \
    } while (0)

int pd_write_entities_info(const pd_bridge *b, const uint8_t gid[16], const pd_node *node, uint32_t nwriters,
                           const uint8_t (*writers)[16])
{
    int rc;
    if (b->gid_size == 24)
        WRITE_ENTITIES_INFO(rmw_dds_common_msg_dds__, rc);
    else
        WRITE_ENTITIES_INFO(rmw_dds_common_gid16_msg_dds__, rc);
    return rc;
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
