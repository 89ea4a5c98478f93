/*
 * Stand-in libtracetools.so: the real tracetools functions with their real
 * signatures and empty bodies, as stock Humble debs ship them (tracetools
 * built without lttng-ust). Build with -DSIM_DISTRO=2 for the Jazzy
 * function set (enabled_/do_ variants, rclcpp_intra_publish, ring buffers,
 * three-argument rmw_publish) and -DSIM_DISTRO=3 for Kilted.
 *
 * Test hook (not part of real tracetools): when SIM_TRACETOOLS_REPORT names a
 * file, every call is counted and the counts are written there at exit, so a
 * test can prove that the probe forwarded each call to the real function.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ros2_pulse/tracetools_api.h"

#ifndef SIM_DISTRO
#define SIM_DISTRO 1
#endif

#define EXPORT __attribute__((visibility("default")))

enum {
#define RP_TP(name, params, args) SIM_IDX_##name,
    RP_TRACEPOINTS_COMMON(RP_TP) RP_TRACEPOINTS_JAZZY(RP_TP) RP_TRACEPOINTS_KILTED(RP_TP)
#undef RP_TP
        SIM_IDX_rmw_publish,
    SIM_IDX_COUNT
};

static const char *const sim_names[SIM_IDX_COUNT] = {
#define RP_TP(name, params, args) #name,
    RP_TRACEPOINTS_COMMON(RP_TP) RP_TRACEPOINTS_JAZZY(RP_TP) RP_TRACEPOINTS_KILTED(RP_TP)
#undef RP_TP
        "rmw_publish",
};

static bool sim_counting;
static _Atomic unsigned long sim_counts[SIM_IDX_COUNT];

#define SIM_HIT(name)                                                                              \
    do {                                                                                           \
        if (sim_counting)                                                                          \
            atomic_fetch_add_explicit(&sim_counts[SIM_IDX_##name], 1, memory_order_relaxed);       \
    } while (0)

static void sim_report(void)
{
    const char *path = getenv("SIM_TRACETOOLS_REPORT");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "a");
    if (f == NULL)
        return;
    for (int i = 0; i < SIM_IDX_COUNT; i++) {
        unsigned long n = atomic_load(&sim_counts[i]);
        if (n != 0)
            fprintf(f, "%s %lu\n", sim_names[i], n);
    }
    fclose(f);
}

__attribute__((constructor)) static void sim_init(void)
{
    const char *path = getenv("SIM_TRACETOOLS_REPORT");
    if (path != NULL && *path != '\0') {
        sim_counting = true;
        atexit(sim_report);
    }
}

/* Every distro: one function per tracepoint. */
#define RP_TP(name, params, args)                                                                  \
    EXPORT void ros_trace_##name params { SIM_HIT(name); }
RP_TRACEPOINTS_COMMON(RP_TP)
#if SIM_DISTRO >= 2
RP_TRACEPOINTS_JAZZY(RP_TP)
#endif
#if SIM_DISTRO >= 3
RP_TRACEPOINTS_KILTED(RP_TP)
#endif
#undef RP_TP

#if SIM_DISTRO >= 2
/* Iron+: guarded call sites; no LTTng session is ever active here. */
#define RP_TP(name, params, args)                                                                  \
    EXPORT bool ros_trace_enabled_##name(void) { return false; }                                   \
    EXPORT void ros_trace_do_##name params { SIM_HIT(name); }
RP_TRACEPOINTS_COMMON(RP_TP)
RP_TRACEPOINTS_JAZZY(RP_TP)
#if SIM_DISTRO >= 3
RP_TRACEPOINTS_KILTED(RP_TP)
#endif
#undef RP_TP
EXPORT bool ros_trace_enabled_rmw_publish(void) { return false; }
EXPORT void ros_trace_do_rmw_publish(const void *rmw_publisher_handle, const void *message,
                                     int64_t timestamp)
{
    (void)rmw_publisher_handle, (void)message, (void)timestamp;
    SIM_HIT(rmw_publish);
}
EXPORT void ros_trace_rmw_publish(const void *rmw_publisher_handle, const void *message,
                                  int64_t timestamp)
{
    (void)rmw_publisher_handle, (void)message, (void)timestamp;
    SIM_HIT(rmw_publish);
}
/* Stock Jazzy/Kilted debs link lttng-ust. */
EXPORT bool ros_trace_compile_status(void) { return true; }
#else
EXPORT void ros_trace_rmw_publish(const void *message)
{
    (void)message;
    SIM_HIT(rmw_publish);
}
/* Stock Humble debs: no lttng-ust, so tracing is compiled out of the bodies. */
EXPORT bool ros_trace_compile_status(void) { return false; }
/*
 * tracetools::detail::demangle_symbol and get_symbol_funcptr, which rclcpp's
 * tracetools::get_symbol() calls to name a callback: built without
 * lttng-ust, Humble's answer only placeholders (ros2_tracing humble,
 * tracetools/src/utils.cpp). Jazzy's demangle for real and return malloc'd
 * names; the stand-in's readable names need no demangling, so its Jazzy
 * variant has none and simgraph passes them directly there.
 */
EXPORT const char *sim_demangle_symbol(const char *mangled) __asm__("_ZN10tracetools6detail15demangle_symbolEPKc");
EXPORT const char *sim_demangle_symbol(const char *mangled)
{
    (void)mangled;
    return "DISABLED__demangle_symbol";
}
EXPORT const char *sim_get_symbol_funcptr(void *funcptr) __asm__("_ZN10tracetools6detail18get_symbol_funcptrEPv");
EXPORT const char *sim_get_symbol_funcptr(void *funcptr)
{
    (void)funcptr;
    return "DISABLED__get_symbol_funcptr";
}
#endif
