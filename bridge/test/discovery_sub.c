/* The bridge tests' ROS graph reader: what an rmw's graph cache reads to
 * name nodes and endpoints. It reads ros_discovery_info (its own type, from
 * ros_discovery_test.idl, built once per GID size) and CycloneDDS's
 * DCPSPublication built-in topic (durability: 0 volatile, 1 transient-local;
 * keep_last: the depth, -1 for keep-all), and prints each sample as one JSON line.
 * With --raw it prints ros_discovery_info samples as CDR bytes in hex.
 *
 * usage: discovery_sub_<GID_SIZE> SECONDS [--raw]   (ROS_DOMAIN_ID and CYCLONEDDS_URI from the environment) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dds/dds.h"
#include "sub_common.h"
#include "ros_discovery_test.h"

static void hex(const unsigned char *p, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    putchar('"');
}

static void gids(const char *key, const dds_sequence_rmw_dds_common_msg_dds__Gid_ *s)
{
    printf(",\"%s\":[", key);
    for (uint32_t i = 0; i < s->_length; i++) {
        printf("%s", i ? "," : "");
        hex(s->_buffer[i].data, sizeof s->_buffer[i].data);
    }
    putchar(']');
}

/* Names here are ROS names (letters, digits, '_' and '/'), so they need no escaping. */
static void print_info(const rmw_dds_common_msg_dds__ParticipantEntitiesInfo_ *m)
{
    printf("{\"topic\":\"ros_discovery_info\",\"gid\":");
    hex(m->gid.data, sizeof m->gid.data);
    printf(",\"nodes\":[");
    for (uint32_t i = 0; i < m->node_entities_info_seq._length; i++) {
        const rmw_dds_common_msg_dds__NodeEntitiesInfo_ *n = &m->node_entities_info_seq._buffer[i];
        printf("%s{\"namespace\":\"%s\",\"name\":\"%s\"", i ? "," : "", n->node_namespace, n->node_name);
        gids("readers", &n->reader_gid_seq);
        gids("writers", &n->writer_gid_seq);
        putchar('}');
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    double seconds;
    int raw;
    if (sub_args("discovery_sub", argc, argv, &seconds, &raw) != 0)
        return 2;
    dds_domainid_t domain;
    dds_entity_t pp = sub_participant("discovery_sub", &domain);
    if (pp < 0)
        return 1;
    /* What rmw_cyclonedds' own ros_discovery_info reader asks for:
     * reliable, transient-local, so it gets what was published before it came. */
    dds_qos_t *qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
    dds_qset_durability(qos, DDS_DURABILITY_TRANSIENT_LOCAL);
    dds_qset_history(qos, DDS_HISTORY_KEEP_ALL, 0);
    dds_entity_t t = dds_create_topic(pp, &rmw_dds_common_msg_dds__ParticipantEntitiesInfo__desc, "ros_discovery_info", NULL, NULL);
    dds_entity_t r = dds_create_reader(pp, t, qos, NULL);
    dds_delete_qos(qos);
    dds_entity_t rp = dds_create_reader(pp, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, NULL, NULL);
    if (r < 0 || rp < 0) {
        fprintf(stderr, "discovery_sub: readers: %s\n", dds_strretcode(r < 0 ? r : rp));
        return 1;
    }
    fprintf(stderr, "discovery_sub: listening on domain %u, %d-byte GIDs\n", (unsigned)domain, GID_SIZE);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        void *samples[16] = {0};
        dds_sample_info_t info[16];
        int n;
        if (raw) {
            sub_print_raw("ros_discovery_info", r);
        } else {
            n = dds_take(r, samples, info, 16, 16);
            for (int i = 0; i < n; i++)
                if (info[i].valid_data)
                    print_info(samples[i]);
            if (n > 0)
                dds_return_loan(r, samples, n);
        }
        memset(samples, 0, sizeof samples);
        n = dds_take(rp, samples, info, 16, 16);
        for (int i = 0; i < n; i++) {
            const dds_builtintopic_endpoint_t *e = samples[i];
            if (!info[i].valid_data)
                continue;
            printf("{\"topic\":\"DCPSPublication\",\"key\":");
            hex(e->key.v, sizeof e->key.v);
            printf(",\"participant\":");
            hex(e->participant_key.v, sizeof e->participant_key.v);
            dds_reliability_kind_t rel = DDS_RELIABILITY_BEST_EFFORT;
            dds_durability_kind_t dur = DDS_DURABILITY_VOLATILE;
            dds_history_kind_t hist = DDS_HISTORY_KEEP_LAST;
            int32_t depth = 0;
            dds_qget_reliability(e->qos, &rel, NULL);
            dds_qget_durability(e->qos, &dur);
            dds_qget_history(e->qos, &hist, &depth);
            printf(",\"topic_name\":\"%s\",\"type_name\":\"%s\",\"reliable\":%s,\"durability\":%d,\"keep_last\":%d}\n",
                   e->topic_name, e->type_name, rel == DDS_RELIABILITY_RELIABLE ? "true" : "false", (int)dur,
                   hist == DDS_HISTORY_KEEP_LAST ? (int)depth : -1);
        }
        if (n > 0)
            dds_return_loan(rp, samples, n);
        fflush(stdout);
        dds_sleepfor(DDS_MSECS(20));
    } while (sub_elapsed(&t0) < seconds);
    dds_delete(pp);
    return 0;
}
