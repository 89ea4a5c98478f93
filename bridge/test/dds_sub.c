/* A real CycloneDDS subscriber for the bridge's tests: it reads rt/statistics
 * and rt/diagnostics by their ROS topic and type names, as a ROS tool over
 * rmw_cyclonedds would, and prints every sample as one JSON line. With --raw
 * it prints each sample's serialized bytes (CDR, encapsulation header
 * included) in hex instead, for the golden encoding test.
 *
 * usage: dds_sub SECONDS [--raw]   (ROS_DOMAIN_ID and CYCLONEDDS_URI from the environment) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dds/dds.h"
#include "sub_common.h"
#include "ros2_msgs.h"

static void json_string(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void json_double(double d)
{
    if (d != d)
        printf("null"); /* NaN: "no data" */
    else
        printf("%.9g", d);
}

static void print_metrics(const statistics_msgs_msg_dds__MetricsMessage_ *m)
{
    printf("{\"topic\":\"statistics\",\"source\":");
    json_string(m->measurement_source_name);
    printf(",\"metric\":");
    json_string(m->metrics_source);
    printf(",\"unit\":");
    json_string(m->unit);
    printf(",\"start\":[%d,%u],\"stop\":[%d,%u],\"points\":[", m->window_start.sec, m->window_start.nanosec,
           m->window_stop.sec, m->window_stop.nanosec);
    for (uint32_t i = 0; i < m->statistics._length; i++) {
        printf("%s[%u,", i ? "," : "", m->statistics._buffer[i].data_type);
        json_double(m->statistics._buffer[i].data);
        putchar(']');
    }
    printf("]}\n");
}

static void print_diagnostics(const diagnostic_msgs_msg_dds__DiagnosticArray_ *a)
{
    printf("{\"topic\":\"diagnostics\",\"stamp\":[%d,%u],\"frame_id\":", a->header.stamp.sec, a->header.stamp.nanosec);
    json_string(a->header.frame_id);
    printf(",\"status\":[");
    for (uint32_t i = 0; i < a->status._length; i++) {
        const diagnostic_msgs_msg_dds__DiagnosticStatus_ *s = &a->status._buffer[i];
        printf("%s{\"level\":%u,\"name\":", i ? "," : "", s->level);
        json_string(s->name);
        printf(",\"message\":");
        json_string(s->message);
        printf(",\"hardware_id\":");
        json_string(s->hardware_id);
        printf(",\"values\":{");
        for (uint32_t j = 0; j < s->values._length; j++) {
            printf("%s", j ? "," : "");
            json_string(s->values._buffer[j].key);
            putchar(':');
            json_string(s->values._buffer[j].value);
        }
        printf("}}");
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    double seconds;
    int raw;
    if (sub_args("dds_sub", argc, argv, &seconds, &raw) != 0)
        return 2;
    dds_domainid_t domain;
    dds_entity_t pp = sub_participant("dds_sub", &domain);
    if (pp < 0)
        return 1;
    dds_qos_t *qos = dds_create_qos();
    dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_INFINITY);
    dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 100);
    dds_entity_t ts = dds_create_topic(pp, &statistics_msgs_msg_dds__MetricsMessage__desc, "rt/statistics", NULL, NULL);
    dds_entity_t td = dds_create_topic(pp, &diagnostic_msgs_msg_dds__DiagnosticArray__desc, "rt/diagnostics", NULL, NULL);
    dds_entity_t rs = dds_create_reader(pp, ts, qos, NULL);
    dds_entity_t rd = dds_create_reader(pp, td, qos, NULL);
    dds_delete_qos(qos);
    if (rs < 0 || rd < 0) {
        fprintf(stderr, "dds_sub: readers: %s\n", dds_strretcode(rs < 0 ? rs : rd));
        return 1;
    }
    fprintf(stderr, "dds_sub: listening on domain %u\n", (unsigned)domain);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (raw) {
            sub_print_raw("statistics", rs);
            sub_print_raw("diagnostics", rd);
        } else {
            void *samples[16] = {0};
            dds_sample_info_t info[16];
            int n = dds_take(rs, samples, info, 16, 16);
            for (int i = 0; i < n; i++)
                if (info[i].valid_data)
                    print_metrics(samples[i]);
            if (n > 0)
                dds_return_loan(rs, samples, n);
            memset(samples, 0, sizeof samples);
            n = dds_take(rd, samples, info, 16, 16);
            for (int i = 0; i < n; i++)
                if (info[i].valid_data)
                    print_diagnostics(samples[i]);
            if (n > 0)
                dds_return_loan(rd, samples, n);
        }
        fflush(stdout);
        dds_sleepfor(DDS_MSECS(20));
    } while (sub_elapsed(&t0) < seconds);
    dds_delete(pp);
    return 0;
}
