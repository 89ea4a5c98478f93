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

/* The real function, resolved once into *slot: from libtracetools when
 * tracetools, else from the next object only (librcl). */
static void *real(void *_Atomic *slot, const char *name, bool tracetools)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    if (fn == (void *)1) {
        fn = tracetools ? resolve_real(name) : dlsym(RTLD_NEXT, name);
        atomic_store_explicit(slot, fn, memory_order_release);
    }
    return fn;
}

#define NULL_SHIM(name, params, args)                                                              \
    EXPORT void ros_trace_##name params                                                            \
    {                                                                                              \
        static void *_Atomic real_fn = (void *)1;                                                  \
        void *fn = real(&real_fn, "ros_trace_" #name, true);                                       \
        if (fn != NULL)                                                                            \
            ((void(*) params)fn) args;                                                             \
    }

/* Declared for the whole contract; the version script exports only the probe's set. */
RP_TRACEPOINTS_COMMON(NULL_SHIM)
RP_TRACEPOINTS_JAZZY(NULL_SHIM)

/* The two rcl publish functions the probe wraps, forwarded to librcl. */
static rp_rcl_ret_t forward_rcl(void *_Atomic *slot, const char *name, const void *publisher, const void *message,
                                void *allocation)
{
    void *fn = real(slot, name, false);
    return fn != NULL ? ((rp_rcl_publish_fn)fn)(publisher, message, allocation) : RP_RCL_RET_ERROR;
}

EXPORT rp_rcl_ret_t rcl_publish_loaned_message(const void *publisher, void *ros_message, void *allocation)
{
    static void *_Atomic real_fn = (void *)1;
    return forward_rcl(&real_fn, "rcl_publish_loaned_message", publisher, ros_message, allocation);
}

EXPORT rp_rcl_ret_t rcl_publish_serialized_message(const void *publisher, const void *serialized_message,
                                                   void *allocation)
{
    static void *_Atomic real_fn = (void *)1;
    return forward_rcl(&real_fn, "rcl_publish_serialized_message", publisher, serialized_message, allocation);
}

/* The two rcl timer calls the probe wraps. */
EXPORT rp_rcl_ret_t rcl_timer_call(void *timer)
{
    static void *_Atomic real_fn = (void *)1;
    void *fn = real(&real_fn, "rcl_timer_call", false);
    return fn != NULL ? ((rp_rcl_timer_call_fn)fn)(timer) : RP_RCL_RET_ERROR;
}

EXPORT rp_rcl_ret_t rcl_timer_call_with_info(void *timer, rp_rcl_timer_call_info_t *info)
{
    static void *_Atomic real_fn = (void *)1;
    void *fn = real(&real_fn, "rcl_timer_call_with_info", false);
    return fn != NULL ? ((rp_rcl_timer_call_with_info_fn)fn)(timer, info) : RP_RCL_RET_ERROR;
}

/* The guarded callback-name pair the probe answers (Iron+), forwarded as they are. */
EXPORT bool ros_trace_enabled_rclcpp_callback_register(void)
{
    static void *_Atomic real_fn = (void *)1;
    void *fn = real(&real_fn, "ros_trace_enabled_rclcpp_callback_register", true);
    return fn != NULL && ((bool (*)(void))fn)();
}

EXPORT void ros_trace_do_rclcpp_callback_register(const void *callback, const char *function_symbol)
{
    static void *_Atomic real_fn = (void *)1;
    void *fn = real(&real_fn, "ros_trace_do_rclcpp_callback_register", true);
    if (fn != NULL)
        ((void (*)(const void *, const char *))fn)(callback, function_symbol);
}

EXPORT rp_rcl_ret_t rcl_wait(void *wait_set, int64_t timeout)
{
    static void *_Atomic real_fn = (void *)1;
    void *fn = real(&real_fn, "rcl_wait", false);
    return fn != NULL ? ((rp_rcl_wait_fn)fn)(wait_set, timeout) : RP_RCL_RET_ERROR;
}
