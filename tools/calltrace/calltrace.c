/*
 * calltrace: a call-trace recorder for real ROS 2 Humble (issue 44). A dev
 * tool, not part of the probe: never installed or packaged.
 *
 * LD_PRELOAD=build/lib/libcalltrace.so CALLTRACE_FILE=/tmp/run/trace <ros program>
 *
 * It interposes every ros_trace_* function of Humble's libtracetools (the
 * X-macro list in probe/include/ros2_pulse/tracetools_api.h, Humble's
 * rmw_publish and compile_status), the rcl functions the probe wraps, and
 * tracetools::detail::demangle_symbol / get_symbol_funcptr; each forwards to
 * the next definition (dlsym RTLD_NEXT) and appends one line per call to
 * CALLTRACE_FILE.<pid> (one file per process; a forked child opens its own).
 * Without CALLTRACE_FILE it only forwards.
 *
 * A line: CLOCK_MONOTONIC ns at entry, thread id, function, arguments
 * (name=value: pointers as 0x..., strings quoted, integers), and for the
 * functions that return, ret= and dur_ns=. A tracepoint's line is written
 * before it forwards; a returning function's line when it returns, stamped
 * with its entry time, so calls made inside it (rcl_publisher_init's two
 * tracepoints, rcl_take_request's rcl_take_request_with_info) come first in
 * the file: sort -s -n -k1,1 gives the order of entry. The file opens with a
 * '#' header: pid, command line and a CLOCK_REALTIME/CLOCK_MONOTONIC pair.
 *
 * One mutex around one fully buffered FILE, flushed at exit (a process
 * killed by a signal it does not handle loses its buffer: stop ROS programs
 * with SIGINT).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ros2_pulse/tracetools_api.h"

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------ the file */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static int state; /* 0: not opened yet, 1: open, -1: off (no CALLTRACE_FILE, or it could not be opened) */

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void open_file(void) /* under mu */
{
    const char *base = getenv("CALLTRACE_FILE");
    state = -1;
    if (base == NULL || *base == '\0')
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", base, (int)getpid());
    out = fopen(path, "a");
    if (out == NULL)
        return;
    setvbuf(out, NULL, _IOFBF, 1 << 16);
    state = 1;
    char cmd[1024] = "";
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f != NULL) {
        size_t n = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        for (size_t i = 0; i + 1 < n; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        cmd[n] = '\0';
    }
    fprintf(out, "# calltrace pid=%d realtime_ns=%" PRIu64 " monotonic_ns=%" PRIu64 " cmdline=%s\n", (int)getpid(),
            clock_ns(CLOCK_REALTIME), clock_ns(CLOCK_MONOTONIC), cmd);
}

/* A forked child keeps the parent's FILE and its unwritten buffer: abandoned (never flushed), a file of its own. */
static void after_fork_child(void)
{
    pthread_mutex_init(&mu, NULL);
    out = NULL;
    state = 0;
}

__attribute__((constructor)) static void calltrace_init(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

__attribute__((destructor)) static void calltrace_fini(void)
{
    pthread_mutex_lock(&mu);
    if (out != NULL)
        fflush(out); /* lines written after this are flushed by exit's own stdio cleanup */
    pthread_mutex_unlock(&mu);
}

/* ------------------------------------------------------------ a line */

struct line {
    char buf[1536];
    size_t n;
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct line *l, const char *fmt, ...)
{
    if (l->n >= sizeof l->buf)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->buf + l->n, sizeof l->buf - l->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        l->n += (size_t)k < sizeof l->buf - l->n ? (size_t)k : sizeof l->buf - l->n - 1;
}

static void begin(struct line *l, uint64_t t, const char *fn)
{
    l->n = 0;
    add(l, "%" PRIu64 " %ld %s", t, (long)syscall(SYS_gettid), fn);
}

static void end(struct line *l)
{
    pthread_mutex_lock(&mu);
    if (state == 0)
        open_file();
    if (state > 0) {
        fputs(l->buf, out);
        fputc('\n', out);
    }
    pthread_mutex_unlock(&mu);
}

static bool tracing(void)
{
    return __atomic_load_n(&state, __ATOMIC_RELAXED) >= 0;
}

static void put_ptr(struct line *l, const char *name, const void *p)
{
    add(l, " %s=%p", name, p);
}

static void put_str(struct line *l, const char *name, const char *s)
{
    if (s == NULL) {
        add(l, " %s=NULL", name);
        return;
    }
    add(l, " %s=\"", name);
    for (const char *c = s; *c != '\0' && l->n < sizeof l->buf - 8; c++) {
        if (*c == '"' || *c == '\\')
            add(l, "\\%c", *c);
        else if ((unsigned char)*c < 0x20)
            add(l, "\\x%02x", (unsigned char)*c);
        else
            add(l, "%c", *c);
    }
    add(l, "\"");
}

static void put_int(struct line *l, const char *name, long long v)
{
    add(l, " %s=%lld", name, v);
}

static void put_uint(struct line *l, const char *name, unsigned long long v)
{
    add(l, " %s=%llu", name, v);
}

static void put_bool(struct line *l, const char *name, bool v)
{
    add(l, " %s=%d", name, v ? 1 : 0);
}

static void put_cstr(struct line *l, const char *name, char *s)
{
    put_str(l, name, s);
}

static void put_gid(struct line *l, const char *name, const uint8_t *gid)
{
    put_ptr(l, name, gid);
}

#define PUT(l, a)                                                                                                \
    _Generic((a),                                                                                               \
        const void *: put_ptr,                                                                                  \
        void *: put_ptr,                                                                                        \
        const char *: put_str,                                                                                  \
        char *: put_cstr,                                                                                       \
        const uint8_t *: put_gid,                                                                               \
        bool: put_bool,                                                                                         \
        int: put_int,                                                                                           \
        long: put_int,                                                                                          \
        long long: put_int,                                                                                     \
        unsigned long: put_uint,                                                                                \
        unsigned long long: put_uint,                                                                           \
        default: put_ptr)(l, #a, a)

/* FOR_EACH(F, l, a, b, ...): F(l, a) F(l, b) ..., up to 5 arguments, none too. */
#define NARG(...) NARG_(__VA_ARGS__ __VA_OPT__(, ) 5, 4, 3, 2, 1, 0)
#define NARG_(_1, _2, _3, _4, _5, N, ...) N
#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b
#define FOR_EACH(F, l, ...) CAT(FE_, NARG(__VA_ARGS__))(F, l, __VA_ARGS__)
#define FE_0(F, l, ...)
#define FE_1(F, l, a) F(l, a);
#define FE_2(F, l, a, ...) F(l, a); FE_1(F, l, __VA_ARGS__)
#define FE_3(F, l, a, ...) F(l, a); FE_2(F, l, __VA_ARGS__)
#define FE_4(F, l, a, ...) F(l, a); FE_3(F, l, __VA_ARGS__)
#define FE_5(F, l, a, ...) F(l, a); FE_4(F, l, __VA_ARGS__)
#define UNPAREN(...) __VA_ARGS__

/* ------------------------------------------------------------ the next definition */

/*
 * name's next definition: RTLD_NEXT, or else in lib found by its soname (a
 * library loaded RTLD_LOCAL, as rclpy's extension loads librcl and
 * libtracetools, is not in the global scope RTLD_NEXT searches).
 */
static void *next(void *_Atomic *cache, const char *name, const char *lib)
{
    void *fn = atomic_load_explicit(cache, memory_order_acquire);
    if (fn == NULL) {
        fn = dlsym(RTLD_NEXT, name);
        if (fn == NULL) {
            void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
            if (h != NULL) {
                fn = dlsym(h, name);
                dlclose(h);
            }
        }
        atomic_store_explicit(cache, fn, memory_order_release);
    }
    return fn;
}
#define TT "libtracetools.so"
#define RCL "librcl.so"

/* ------------------------------------------------------------ tracetools (Humble) */

#define RP_TP(name, params, args)                                                                              \
    EXPORT void ros_trace_##name params;                                                                       \
    EXPORT void ros_trace_##name params                                                                        \
    {                                                                                                          \
        static void *_Atomic real;                                                                             \
        if (tracing()) {                                                                                       \
            struct line l;                                                                                     \
            begin(&l, clock_ns(CLOCK_MONOTONIC), #name);                                                       \
            FOR_EACH(PUT, &l, UNPAREN args)                                                                    \
            end(&l);                                                                                           \
        }                                                                                                      \
        void(*fn) params = (void(*) params)next(&real, "ros_trace_" #name, TT);                                   \
        if (fn != NULL)                                                                                        \
            fn args;                                                                                           \
    }
RP_TRACEPOINTS_COMMON(RP_TP)
#undef RP_TP

/* Humble's rmw_publish takes the message only (Jazzy's takes three arguments: not recorded right here). */
EXPORT void ros_trace_rmw_publish(const void *message);
EXPORT void ros_trace_rmw_publish(const void *message)
{
    static void *_Atomic real;
    if (tracing()) {
        struct line l;
        begin(&l, clock_ns(CLOCK_MONOTONIC), "rmw_publish");
        PUT(&l, message);
        end(&l);
    }
    rp_rmw_publish_humble_fn fn = (rp_rmw_publish_humble_fn)next(&real, "ros_trace_rmw_publish", TT);
    if (fn != NULL)
        fn(message);
}

EXPORT bool ros_trace_compile_status(void);
EXPORT bool ros_trace_compile_status(void)
{
    static void *_Atomic real;
    uint64_t t = clock_ns(CLOCK_MONOTONIC);
    bool (*fn)(void) = (bool (*)(void))next(&real, "ros_trace_compile_status", TT);
    bool ret = fn != NULL && fn();
    if (tracing()) {
        struct line l;
        begin(&l, t, "compile_status");
        add(&l, " ret=%d", ret ? 1 : 0);
        end(&l);
    }
    return ret;
}

/* tracetools::detail::demangle_symbol and get_symbol_funcptr, by their C++ names. */
#define DEMANGLE_SYMBOL "_ZN10tracetools6detail15demangle_symbolEPKc"
#define GET_SYMBOL_FUNCPTR "_ZN10tracetools6detail18get_symbol_funcptrEPv"
EXPORT const char *ct_demangle_symbol(const char *mangled) __asm__(DEMANGLE_SYMBOL);
EXPORT const char *ct_get_symbol_funcptr(void *funcptr) __asm__(GET_SYMBOL_FUNCPTR);

EXPORT const char *ct_demangle_symbol(const char *mangled)
{
    static void *_Atomic real;
    uint64_t t = clock_ns(CLOCK_MONOTONIC);
    const char *(*fn)(const char *) = (const char *(*)(const char *))next(&real, DEMANGLE_SYMBOL, TT);
    const char *ret = fn != NULL ? fn(mangled) : NULL;
    if (tracing()) {
        struct line l;
        begin(&l, t, "demangle_symbol");
        PUT(&l, mangled);
        put_str(&l, "ret", ret);
        end(&l);
    }
    return ret;
}

EXPORT const char *ct_get_symbol_funcptr(void *funcptr)
{
    static void *_Atomic real;
    uint64_t t = clock_ns(CLOCK_MONOTONIC);
    const char *(*fn)(void *) = (const char *(*)(void *))next(&real, GET_SYMBOL_FUNCPTR, TT);
    const char *ret = fn != NULL ? fn(funcptr) : NULL;
    if (tracing()) {
        struct line l;
        begin(&l, t, "get_symbol_funcptr");
        PUT(&l, funcptr);
        put_str(&l, "ret", ret);
        end(&l);
    }
    return ret;
}

/* ------------------------------------------------------------ rcl */

/* A returning rcl function: its line, stamped t, after the call; extra puts what it wants between. */
#define RCL_BEGIN(name, fn_t, ...)                                                                             \
    static void *_Atomic real;                                                                                 \
    uint64_t t = clock_ns(CLOCK_MONOTONIC);                                                                    \
    fn_t fn = (fn_t)next(&real, #name, RCL);                                                                        \
    rp_rcl_ret_t ret = fn != NULL ? fn(__VA_ARGS__) : RP_RCL_RET_ERROR;                                        \
    uint64_t dur = clock_ns(CLOCK_MONOTONIC) - t;                                                              \
    struct line l;                                                                                             \
    bool on = tracing();                                                                                       \
    if (on) {                                                                                                  \
        begin(&l, t, #name);                                                                                   \
        FOR_EACH(PUT, &l, __VA_ARGS__)                                                                         \
    }
#define RCL_END()                                                                                              \
    if (on) {                                                                                                  \
        add(&l, " ret=%d dur_ns=%" PRIu64, (int)ret, dur);                                                     \
        end(&l);                                                                                               \
    }                                                                                                          \
    return ret

typedef rp_rcl_ret_t (*loaned_fn)(const void *, void *, void *);
typedef rp_rcl_ret_t (*serialized_fn)(const void *, const void *, void *);

EXPORT rp_rcl_ret_t rcl_publish_loaned_message(const void *publisher, void *ros_message, void *allocation)
{
    RCL_BEGIN(rcl_publish_loaned_message, loaned_fn, publisher, ros_message,
              allocation);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_publish_serialized_message(const void *publisher, const void *serialized_message,
                                                   void *allocation)
{
    RCL_BEGIN(rcl_publish_serialized_message, serialized_fn, publisher,
              serialized_message, allocation);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_timer_call(void *timer)
{
    RCL_BEGIN(rcl_timer_call, rp_rcl_timer_call_fn, timer);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_wait(void *wait_set, int64_t timeout)
{
    RCL_BEGIN(rcl_wait, rp_rcl_wait_fn, wait_set, timeout);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_publisher_init(void *publisher, const void *node, const void *type_support,
                                       const char *topic_name, const void *options)
{
    RCL_BEGIN(rcl_publisher_init, rp_rcl_endpoint_init_fn, publisher, node, type_support, topic_name, options);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_subscription_init(void *subscription, const void *node, const void *type_support,
                                          const char *topic_name, const void *options)
{
    RCL_BEGIN(rcl_subscription_init, rp_rcl_endpoint_init_fn, subscription, node, type_support, topic_name,
              options);
    RCL_END();
}

/* A request id: its sequence number and its writer GUID (the client), 16 bytes in hex. */
static void put_request_id(struct line *l, const char *prefix, const rp_rmw_request_id_t *id)
{
    if (id == NULL)
        return;
    add(l, " %sseq=%" PRId64 " %sguid=", prefix, id->sequence_number, prefix);
    for (size_t i = 0; i < sizeof id->writer_guid; i++)
        add(l, "%02x", (unsigned)(uint8_t)id->writer_guid[i]);
}

EXPORT rp_rcl_ret_t rcl_take_request(const void *service, rp_rmw_request_id_t *header, void *request)
{
    RCL_BEGIN(rcl_take_request, rp_rcl_take_request_fn, service, header, request);
    if (on && ret == RP_RCL_RET_OK)
        put_request_id(&l, "", header);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_take_request_with_info(const void *service, rp_rmw_service_info_t *header, void *request)
{
    RCL_BEGIN(rcl_take_request_with_info, rp_rcl_take_request_with_info_fn, service, header, request);
    if (on && ret == RP_RCL_RET_OK && header != NULL)
        put_request_id(&l, "", &header->request_id);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_send_response(const void *service, rp_rmw_request_id_t *header, void *response)
{
    rp_rmw_request_id_t id = {0}; /* as it was given: rcl does not change it, but could */
    if (header != NULL)
        id = *header;
    RCL_BEGIN(rcl_send_response, rp_rcl_send_response_fn, service, header, response);
    if (on && header != NULL)
        put_request_id(&l, "", &id);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_send_request(const void *client, const void *request, int64_t *sequence_number)
{
    RCL_BEGIN(rcl_send_request, rp_rcl_send_request_fn, client, request, sequence_number);
    if (on && ret == RP_RCL_RET_OK && sequence_number != NULL)
        add(&l, " seq=%" PRId64, *sequence_number);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_take_response(const void *client, rp_rmw_request_id_t *header, void *response)
{
    RCL_BEGIN(rcl_take_response, rp_rcl_take_response_fn, client, header, response);
    if (on && ret == RP_RCL_RET_OK)
        put_request_id(&l, "", header);
    RCL_END();
}

EXPORT rp_rcl_ret_t rcl_take_response_with_info(const void *client, rp_rmw_service_info_t *header, void *response)
{
    RCL_BEGIN(rcl_take_response_with_info, rp_rcl_take_response_with_info_fn, client, header, response);
    if (on && ret == RP_RCL_RET_OK && header != NULL)
        put_request_id(&l, "", &header->request_id);
    RCL_END();
}
