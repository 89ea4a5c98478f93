/* What the bridge tests' C subscribers share: their command line
 * (SECONDS [--raw]), the participant on ROS_DOMAIN_ID, samples as CDR hex,
 * and their time. Header-only: each subscriber is one program. */
#ifndef PULSE_SUB_COMMON_H
#define PULSE_SUB_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dds/dds.h"
#include "dds/ddsi/ddsi_serdata.h"

/* Parses SECONDS [--raw]; 0 on success, else prints the usage of prog. */
static int sub_args(const char *prog, int argc, char **argv, double *seconds, int *raw)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SECONDS [--raw]\n", prog);
        return -1;
    }
    *seconds = atof(argv[1]);
    *raw = argc > 2 && strcmp(argv[2], "--raw") == 0;
    return 0;
}

/* A participant on ROS_DOMAIN_ID (default 0); < 0 after saying why. */
static dds_entity_t sub_participant(const char *prog, dds_domainid_t *domain)
{
    const char *d = getenv("ROS_DOMAIN_ID");
    *domain = d && *d ? (dds_domainid_t)atoi(d) : 0;
    dds_entity_t pp = dds_create_participant(*domain, NULL, NULL);
    if (pp < 0)
        fprintf(stderr, "%s: participant: %s\n", prog, dds_strretcode(pp));
    return pp;
}

static void sub_print_guid(const char *key, const unsigned char *v, size_t n)
{
    printf(",\"%s\":\"", key);
    for (size_t k = 0; k < n; k++)
        printf("%02x", v[k]);
    putchar('"');
}

/* Takes every sample of reader as serialized bytes (encapsulation header
 * included) and prints each as {"topic":TOPIC,"raw":"<hex>","writer":GUID,
 * "writer_participant":GUID}: the GUIDs of the writer that sent it, so a test
 * can keep to the traffic it made. */
static void sub_print_raw(const char *topic, dds_entity_t reader)
{
    struct ddsi_serdata *sd[8];
    dds_sample_info_t si[8];
    int n = dds_takecdr(reader, sd, 8, si, DDS_ANY_STATE);
    for (int i = 0; i < n; i++) {
        uint32_t size = ddsi_serdata_size(sd[i]);
        unsigned char *buf = malloc(size);
        ddsi_serdata_to_ser(sd[i], 0, size, buf);
        printf("{\"topic\":\"%s\",\"raw\":\"", topic);
        for (uint32_t k = 0; k < size; k++)
            printf("%02x", buf[k]);
        putchar('"');
        dds_builtintopic_endpoint_t *w = dds_get_matched_publication_data(reader, si[i].publication_handle);
        if (w != NULL) {
            sub_print_guid("writer", w->key.v, sizeof w->key.v);
            sub_print_guid("writer_participant", w->participant_key.v, sizeof w->participant_key.v);
            dds_builtintopic_free_endpoint(w);
        }
        printf("}\n");
        free(buf);
        ddsi_serdata_unref(sd[i]);
    }
}

/* Seconds since t0 (CLOCK_MONOTONIC). */
static double sub_elapsed(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

#endif
