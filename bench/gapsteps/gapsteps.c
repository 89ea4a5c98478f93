/*
 * bench/gapsteps: what gap tracking's steps cost, one by one (issue 28).
 *
 *   gapsteps [--msgs N] [--reps R]
 *
 * The probe's record_gap does, per message (ABI 1.7, rp_record_gap_at in
 * probe_internal.h): one clock read, a load and a compare-exchange moving
 * the endpoint's last arrival forward, the bucket's index and one add to
 * that bucket, on the endpoint's struct rp_gap in the segment (1,568 bytes:
 * its first line and one bucket line are touched). Before 1.7 it exchanged
 * the last arrival and added every gap to a sum too (the xchg and add_sum
 * legs). Each leg below is one step, or all of them, in a loop of N
 * messages; its cost is the loop's thread CPU time per message less the
 * empty loop's. Legs run interleaved, R repetitions in rotated order.
 *
 *   loop        the empty loop (subtracted from the others)
 *   clock       rp_mono_ns, the probe's clock read (clock.h)
 *   bucket      rp_gap_bucket of a gap near 20 ms (the probe's own function)
 *   xchg        the relaxed atomic exchange of last_mono_ns (before 1.7)
 *   cas         a relaxed load and compare-exchange of last_mono_ns (1.7)
 *   add_sum     the relaxed atomic add to sum_ns (before 1.7)
 *   add_bucket  the relaxed atomic add to the gap's bucket
 *   all_noclock rp_record_gap_at with the clock faked
 *   all         the whole record_gap, one endpoint (its lines hot)
 *   all_1024    the whole record_gap cycling over 1,024 endpoints (1.5 MiB
 *               of rp_gap: each message meets its lines cold in L1 and L2)
 *   all_2t      two threads recording on one endpoint (its lines bounce)
 *   plain_noclock the pre-1.7 steps as plain loads and stores (no lock
 *               prefix): what one writer per line would pay
 *
 * Output: CSV "leg,ns_per_msg_mean,sem,reps" after the loop is subtracted.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h" /* rp_mono_ns, rp_gap_bucket: the probe's own */

enum { L_LOOP, L_CLOCK, L_BUCKET, L_XCHG, L_CAS, L_ADD_SUM, L_ADD_BUCKET, L_ALL_NOCLOCK, L_ALL, L_ALL_1024, L_ALL_2T, L_PLAIN, L_COUNT };
static const char *const names[L_COUNT] = {"loop", "clock", "bucket", "xchg", "cas", "add_sum", "add_bucket", "all_noclock", "all", "all_1024", "all_2t", "plain_noclock"};

#define NGAPS 1024
static struct rp_gap *gaps; /* 64-byte aligned, as the segment's section */
static volatile uint64_t sink;

static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void run(int leg, long n, struct rp_gap *g)
{
    uint64_t acc = 0, fake = 1;
    for (long i = 0; i < n; i++) {
        /* a gap near 20 ms that moves between neighbouring buckets, as a real one does */
        uint64_t d = 20000000u + (uint64_t)((i * 2654435761u) & 0x3fffff);
        switch (leg) {
        case L_LOOP:
            acc += d;
            break;
        case L_CLOCK:
            acc += rp_mono_ns();
            break;
        case L_BUCKET:
            acc += rp_gap_bucket(d);
            break;
        case L_XCHG:
            acc += atomic_exchange_explicit(&g->last_mono_ns, d, memory_order_relaxed);
            break;
        case L_CAS: {
            uint64_t prev = atomic_load_explicit(&g->last_mono_ns, memory_order_relaxed);
            atomic_compare_exchange_weak_explicit(&g->last_mono_ns, &prev, prev + d, memory_order_relaxed,
                                                  memory_order_relaxed);
            break;
        }
        case L_ADD_SUM:
            atomic_fetch_add_explicit(&g->sum_ns, d, memory_order_relaxed);
            break;
        case L_ADD_BUCKET:
            atomic_fetch_add_explicit(&g->buckets[(d >> 18) & 31], 1, memory_order_relaxed);
            break;
        case L_ALL_NOCLOCK:
            fake += d;
            rp_record_gap_at(g, fake);
            break;
        case L_ALL:
        case L_ALL_2T:
            rp_record_gap_at(g, rp_mono_ns());
            break;
        case L_ALL_1024:
            rp_record_gap_at(&gaps[i & (NGAPS - 1)], rp_mono_ns());
            break;
        case L_PLAIN: {
            fake += d;
            uint64_t prev = atomic_load_explicit(&g->last_mono_ns, memory_order_relaxed);
            atomic_store_explicit(&g->last_mono_ns, fake, memory_order_relaxed);
            uint64_t dd = fake - prev;
            atomic_store_explicit(&g->sum_ns, atomic_load_explicit(&g->sum_ns, memory_order_relaxed) + dd, memory_order_relaxed);
            uint32_t b = rp_gap_bucket(dd);
            atomic_store_explicit(&g->buckets[b], atomic_load_explicit(&g->buckets[b], memory_order_relaxed) + 1, memory_order_relaxed);
            break;
        }
        }
        __asm__ volatile("" ::: "memory"); /* one message at a time: no loop fusion */
    }
    sink += acc;
}

struct job {
    int leg;
    long n;
    double ns;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    double t0 = thread_cpu_ns();
    run(j->leg, j->n, &gaps[0]);
    j->ns = thread_cpu_ns() - t0;
    return NULL;
}

/* CPU ns per message of one leg (two threads for all_2t: their CPU over their messages). */
static double measure(int leg, long n)
{
    int threads = leg == L_ALL_2T ? 2 : 1;
    struct job jobs[2];
    pthread_t tid[2];
    for (int t = 0; t < threads; t++) {
        jobs[t] = (struct job){leg, n, 0};
        if (pthread_create(&tid[t], NULL, worker, &jobs[t]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    double ns = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        ns += jobs[t].ns;
    }
    return ns / ((double)n * threads);
}

int main(int argc, char **argv)
{
    long msgs = 20000000;
    int reps = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--msgs") == 0)
            msgs = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
    }
    if (msgs <= 0 || reps < 2) {
        fprintf(stderr, "usage: gapsteps [--msgs N] [--reps R>=2]\n");
        return 2;
    }
    gaps = aligned_alloc(64, NGAPS * sizeof *gaps);
    if (gaps == NULL) {
        perror("aligned_alloc");
        return 1;
    }
    memset(gaps, 0, NGAPS * sizeof *gaps);
    (void)rp_mono_ns(); /* the vDSO resolved before anything is timed */
    double sum[L_COUNT] = {0}, sq[L_COUNT] = {0};
    for (int r = 0; r < reps; r++) {
        double loop = 0, got[L_COUNT];
        for (int k = 0; k < L_COUNT; k++) { /* rotated order: no leg always follows another */
            int leg = (k + r) % L_COUNT;
            got[leg] = measure(leg, msgs);
        }
        loop = got[L_LOOP];
        for (int leg = 0; leg < L_COUNT; leg++) {
            double v = leg == L_LOOP ? got[leg] : got[leg] - loop;
            sum[leg] += v;
            sq[leg] += v * v;
        }
    }
    printf("leg,ns_per_msg_mean,sem,reps\n");
    for (int leg = 0; leg < L_COUNT; leg++) {
        double mean = sum[leg] / reps, var = (sq[leg] - reps * mean * mean) / (reps - 1);
        printf("%s,%.2f,%.2f,%d\n", names[leg], mean, sqrt(var > 0 ? var : 0) / sqrt(reps), reps);
    }
    return (int)(sink & 0); /* keeps sink alive */
}
