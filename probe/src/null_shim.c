/*
 * The null shim: the probe's exact export set with bodies that only forward
 * to the real function. Benchmarks use it to separate the cost of being
 * interposed from the cost of counting.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>

#include "ros2_pulse/tracetools_api.h"

#define EXPORT __attribute__((visibility("default")))

static void *resolve_real(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (fn == NULL) {
        void *h = dlopen("libtracetools.so", RTLD_LAZY | RTLD_NOLOAD);
        if (h != NULL) {
            fn = dlsym(h, name);
            dlclose(h);
        }
    }
    return fn;
}

#define NULL_SHIM(name, params, args)                                                              \
    EXPORT void ros_trace_##name params                                                            \
    {                                                                                              \
        static void *_Atomic real_fn = (void *)1;                                                  \
        void *fn = atomic_load_explicit(&real_fn, memory_order_acquire);                           \
        if (fn == (void *)1) {                                                                     \
            fn = resolve_real("ros_trace_" #name);                                                 \
            atomic_store_explicit(&real_fn, fn, memory_order_release);                             \
        }                                                                                          \
        if (fn != NULL)                                                                            \
            ((void(*) params)fn) args;                                                             \
    }

/* Declared for the whole contract; the version script exports only the probe's set. */
RP_TRACEPOINTS_COMMON(NULL_SHIM)
RP_TRACEPOINTS_JAZZY(NULL_SHIM)
