/*
 * Stand-in librcl.so: the two publish functions whose tracepoints differ by
 * distro (reference/tracetools-facts.md §5), and the timer calls an executor
 * makes (rcl_timer_call; rcl_timer_call_with_info from Jazzy on), with rcl's
 * own schedule: one period on from the last scheduled call, missed periods
 * skipped, never caught up (rcl/src/rcl/timer.c). A failed call returns
 * before any tracepoint. On Humble a successful one fires nothing at any
 * layer; from Jazzy on it fires rcl_publish and the three-argument
 * rmw_publish inside, as rcl PR #1083 (loaned) and #1136 (serialized) do.
 * Build with -DSIM_DISTRO=1 (Humble), 2 (Jazzy) or 3 (Kilted), against the
 * stand-in libtracetools of the same distro.
 *
 * The rcl publisher is { impl }, and simgraph keeps the rmw publisher in the
 * impl's first word (real rcl keeps it inside impl too).
 *
 * Test hook: with SIM_TRACETOOLS_REPORT set, the successful calls are
 * appended to that file at exit ("rcl_publish_loaned_message_ok N",
 * "rcl_timer_calls_ok N": timer calls through either function, each once).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ros2_pulse/tracetools_api.h"
#include "sim_rcl.h"

#ifndef SIM_DISTRO
#define SIM_DISTRO 1
#endif

#define EXPORT __attribute__((visibility("default")))

struct rcl_publisher {
    void *impl;
};

/* From the stand-in libtracetools (declared here: the contract header keeps them as macros). */
void ros_trace_rcl_publish(const void *publisher_handle, const void *message);
#if SIM_DISTRO >= 2
void ros_trace_rmw_publish(const void *rmw_publisher_handle, const void *message, int64_t timestamp);
#endif

static _Atomic unsigned long ok_loaned, ok_serialized, ok_timer_calls;

static void report(void)
{
    const char *path = getenv("SIM_TRACETOOLS_REPORT");
    FILE *f = path != NULL && *path != '\0' ? fopen(path, "a") : NULL;
    if (f == NULL)
        return;
    fprintf(f, "rcl_publish_loaned_message_ok %lu\nrcl_publish_serialized_message_ok %lu\nrcl_timer_calls_ok %lu\n",
            atomic_load(&ok_loaned), atomic_load(&ok_serialized), atomic_load(&ok_timer_calls));
    fclose(f);
}

__attribute__((constructor)) static void init(void)
{
    const char *path = getenv("SIM_TRACETOOLS_REPORT");
    if (path != NULL && *path != '\0')
        atexit(report);
}

static rp_rcl_ret_t publish(const void *publisher, const void *message, _Atomic unsigned long *ok)
{
    const struct rcl_publisher *p = publisher;
    if (p == NULL || p->impl == NULL)
        return RP_RCL_RET_PUBLISHER_INVALID;
    if (message == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
#if SIM_DISTRO >= 2
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ros_trace_rcl_publish(publisher, message);
    ros_trace_rmw_publish(*(void *const *)p->impl, message, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
#endif
    atomic_fetch_add_explicit(ok, 1, memory_order_relaxed);
    return RP_RCL_RET_OK;
}

EXPORT rp_rcl_ret_t rcl_publish_loaned_message(const void *publisher, void *ros_message, void *allocation)
{
    (void)allocation;
    return publish(publisher, ros_message, &ok_loaned);
}

EXPORT rp_rcl_ret_t rcl_publish_serialized_message(const void *publisher, const void *serialized_message,
                                                   void *allocation)
{
    (void)allocation;
    return publish(publisher, serialized_message, &ok_serialized);
}

/* ---- timers */

struct rcl_timer {
    struct sim_timer_impl *impl;
};

static int64_t steady_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* rcl's rcl_timer_call_with_info: the schedule moves one period on; periods already missed are skipped. */
static rp_rcl_ret_t timer_call(void *timer, rp_rcl_timer_call_info_t *info)
{
    struct rcl_timer *t = timer;
    if (t == NULL || info == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    if (t->impl == NULL)
        return 800; /* RCL_RET_TIMER_INVALID */
    int64_t now = steady_now(), period = t->impl->period_ns;
    int64_t expected = atomic_load(&t->impl->next_call_ns), next = expected + period;
    if (next < now)
        next += period > 0 ? (1 + (now - next - 1) / period) * period : now - next;
    atomic_store(&t->impl->next_call_ns, next);
    t->impl->last_call_ns = now;
    info->expected_call_time = expected;
    info->actual_call_time = now;
    atomic_fetch_add_explicit(&ok_timer_calls, 1, memory_order_relaxed);
    return RP_RCL_RET_OK;
}

#if SIM_DISTRO >= 2
EXPORT rp_rcl_ret_t rcl_timer_call_with_info(void *timer, rp_rcl_timer_call_info_t *info)
{
    return timer_call(timer, info);
}

/* Jazzy's rcl_timer_call is rcl_timer_call_with_info with a throwaway info, called through the PLT as rcl does. */
EXPORT rp_rcl_ret_t rcl_timer_call(void *timer)
{
    rp_rcl_timer_call_info_t info;
    return rcl_timer_call_with_info(timer, &info);
}
#else
EXPORT rp_rcl_ret_t rcl_timer_call(void *timer)
{
    rp_rcl_timer_call_info_t info;
    return timer_call(timer, &info);
}
#endif

EXPORT rp_rcl_ret_t rcl_timer_get_time_until_next_call(const void *timer, int64_t *time_until_next_call)
{
    const struct rcl_timer *t = timer;
    if (t == NULL || time_until_next_call == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    if (t->impl == NULL)
        return 800;
    *time_until_next_call = atomic_load(&t->impl->next_call_ns) - steady_now();
    return RP_RCL_RET_OK;
}

/* ---- waiting: rcl_wait blocks until something in the wait set is ready or the timeout passes (ns; < 0: forever). */
EXPORT rp_rcl_ret_t rcl_wait(void *wait_set, int64_t timeout)
{
    struct sim_wait_set *ws = wait_set;
    if (ws == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    struct timespec ts = {(time_t)(timeout / 1000000000), (long)(timeout % 1000000000)};
    int n = ppoll(ws->fds, (nfds_t)ws->nfds, timeout < 0 ? NULL : &ts, NULL);
    if (n > 0)
        return RP_RCL_RET_OK;
    return n == 0 ? SIM_RCL_RET_TIMEOUT : RP_RCL_RET_ERROR;
}
