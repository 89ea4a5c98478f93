/*
 * Quick hot-path microbenchmark: CPU nanoseconds per message through the
 * probe's real, interposed ros_trace_rcl_publish, against the same call
 * straight into libtracetools (what the host pays without the probe).
 *
 *   hotpath THREADS ENDPOINTS_PER_THREAD MESSAGES_PER_THREAD
 *
 * Each thread publishes on its own endpoints, cycling through them (1 =
 * fixed endpoint). Metric: total thread CPU time / total messages
 * (CLOCK_THREAD_CPUTIME_ID), never wall time over all threads.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void ros_trace_rcl_node_init(const void *, const void *, const char *, const char *);
void ros_trace_rcl_publisher_init(const void *, const void *, const void *, const char *, size_t);
void ros_trace_rcl_publish(const void *, const void *);

typedef void (*publish_fn)(const void *, const void *);

struct leg {
    publish_fn fn;
    int endpoints;
    long msgs;
    void **handles;
    double cpu_ns;
};

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *worker(void *arg)
{
    struct leg *l = arg;
    char msg[8];
    double t0 = thread_cpu_ns();
    for (long i = 0; i < l->msgs;) {
        for (int e = 0; e < l->endpoints; e++, i++)
            l->fn(l->handles[e], msg);
    }
    l->cpu_ns = thread_cpu_ns() - t0;
    return NULL;
}

static double run(publish_fn fn, int threads, int endpoints, long msgs, void ***handles)
{
    pthread_t th[64];
    struct leg legs[64];
    for (int t = 0; t < threads; t++) {
        legs[t] = (struct leg){fn, endpoints, msgs, handles[t], 0};
        pthread_create(&th[t], NULL, worker, &legs[t]);
    }
    double total = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        total += legs[t].cpu_ns;
    }
    return total / ((double)threads * (double)msgs);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    int endpoints = argc > 2 ? atoi(argv[2]) : 1;
    long msgs = argc > 3 ? atol(argv[3]) : 20000000;
    if (threads < 1 || threads > 64 || endpoints < 1 || msgs < 1) {
        fprintf(stderr, "usage: hotpath THREADS ENDPOINTS MESSAGES\n");
        return 2;
    }
    static char node[64];
    ros_trace_rcl_node_init(node, NULL, "bench", "/");
    void ***handles = calloc((size_t)threads, sizeof *handles);
    for (int t = 0; t < threads; t++) {
        handles[t] = calloc((size_t)endpoints, sizeof(void *));
        for (int e = 0; e < endpoints; e++) {
            void **pub = malloc(sizeof(void *)); /* rcl_publisher_t { impl } */
            *pub = malloc(48);
            char topic[64];
            snprintf(topic, sizeof topic, "/bench_%d_%d", t, e);
            ros_trace_rcl_publisher_init(pub, node, NULL, topic, 10);
            handles[t][e] = pub;
        }
    }
    void *tt = dlopen("libtracetools.so", RTLD_LAZY | RTLD_NOLOAD);
    publish_fn direct = tt ? (publish_fn)dlsym(tt, "ros_trace_rcl_publish") : NULL;
    if (direct == NULL) {
        fprintf(stderr, "hotpath: libtracetools.so not loaded\n");
        return 1;
    }
    /* Paired and alternated: direct, probe, probe, direct, ... ; report the mean of 6 each. */
    double sum_d = 0, sum_p = 0;
    const int reps = 6;
    run(ros_trace_rcl_publish, threads, endpoints, msgs / 10, handles); /* warm-up */
    for (int r = 0; r < reps; r++) {
        if (r % 2 == 0) {
            sum_d += run(direct, threads, endpoints, msgs, handles);
            sum_p += run(ros_trace_rcl_publish, threads, endpoints, msgs, handles);
        } else {
            sum_p += run(ros_trace_rcl_publish, threads, endpoints, msgs, handles);
            sum_d += run(direct, threads, endpoints, msgs, handles);
        }
    }
    printf("threads=%d endpoints=%d  no probe %.2f ns/msg  probe %.2f ns/msg  added %.2f ns/msg (CPU, mean of %d)\n",
           threads, endpoints, sum_d / reps, sum_p / reps, (sum_p - sum_d) / reps, reps);
    return 0;
}
