/*
 * Stand-in librcl.so: publisher and subscription creation as rcl does it
 * (the rmw creates its endpoint and resolves the QoS, then rcl fires its
 * tracepoint; the actual QoS, the rmw handle and the node's domain are asked
 * for afterwards), the two publish functions whose tracepoints differ by
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
 * SIM_RCL_AFTER_US=N: each loaned or serialized call spends N µs after its
 * tracepoints fired, as a real one does in the DDS write that follows
 * rmw_publish, or in rcl after the rmw take; the probe must not leave a
 * message counted there and not yet sized.
 *
 * Test hook: with SIM_TRACETOOLS_REPORT set, the successful calls are
 * appended to that file at exit ("rcl_publish_loaned_message_ok N",
 * "rcl_timer_calls_ok N": timer calls through either function, each once).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

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
static long after_us; /* SIM_RCL_AFTER_US */

/* The rest of a real call after its tracepoints (SIM_RCL_AFTER_US). */
static void rest_of_call(void)
{
    if (after_us <= 0)
        return;
    struct timespec d = {after_us / 1000000, (after_us % 1000000) * 1000};
    while (nanosleep(&d, &d) != 0 && errno == EINTR) {
    }
}

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
    const char *after = getenv("SIM_RCL_AFTER_US");
    if (after != NULL && *after != '\0') {
        char *end;
        errno = 0;
        after_us = strtol(after, &end, 10);
        if (errno != 0 || *end != '\0' || after_us < 0 || after_us > 1000000) {
            fprintf(stderr, "SIM_RCL_AFTER_US=%s: want microseconds, 0 to 1000000\n", after);
            exit(2);
        }
    }
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
    rest_of_call();
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
    /* A write the DDS refuses (the stand-in's: a length past its buffer): an
     * error after rcl's own checks (publish's), nothing published, no tracepoint. */
    const rp_serialized_message_t *m = serialized_message;
    const struct rcl_publisher *p = publisher;
    if (m != NULL && p != NULL && p->impl != NULL && m->buffer_length > m->buffer_capacity)
        return RP_RCL_RET_ERROR;
    return publish(publisher, serialized_message, &ok_serialized);
}

/*
 * rcl_take_serialized_message: the stand-in's transport (simgraph's socket)
 * already delivered the message; this is rcl's take of it. From Jazzy on
 * both RMWs fire rmw_take inside with the serialized message (design note
 * 0033); Humble's fire nothing. message_info starts with the source
 * timestamp, as rmw_message_info_t does.
 */
void ros_trace_rmw_take(const void *rmw_subscription_handle, const void *message, int64_t source_timestamp, const bool taken);
EXPORT rp_rcl_ret_t rcl_take_serialized_message(const void *subscription, void *serialized_message, void *message_info,
                                                void *allocation)
{
    (void)allocation;
    const struct rcl_publisher *s = subscription;
    if (s == NULL || s->impl == NULL)
        return 400; /* RCL_RET_SUBSCRIPTION_INVALID */
    if (serialized_message == NULL || message_info == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
#if SIM_DISTRO >= 2
    ros_trace_rmw_take(*(void *const *)s->impl, serialized_message, *(const int64_t *)message_info, true);
#endif
    rest_of_call();
    return RP_RCL_RET_OK;
}

/* ---- publishers and subscriptions */

void ros_trace_rmw_publisher_init(const void *rmw_publisher_handle, const uint8_t *gid);
void ros_trace_rcl_publisher_init(const void *publisher_handle, const void *node_handle,
                                  const void *rmw_publisher_handle, const char *topic_name, const size_t queue_depth);
void ros_trace_rmw_subscription_init(const void *rmw_subscription_handle, const uint8_t *gid);
void ros_trace_rcl_subscription_init(const void *subscription_handle, const void *node_handle,
                                     const void *rmw_subscription_handle, const char *topic_name,
                                     const size_t queue_depth);

/* The rmw this process loaded: RMW_IMPLEMENTATION, or the distros' default (rmw_implementation's rule). */
static const char *rmw_identifier(void)
{
    static char id[64];
    if (id[0] == '\0') {
        const char *env = getenv("RMW_IMPLEMENTATION");
        snprintf(id, sizeof id, "%s", env != NULL && *env != '\0' ? env : "rmw_fastrtps_cpp");
    }
    return id;
}

/* The rmw's actual QoS: what the caller left to the system default becomes the middleware's default. */
static rp_rmw_qos_profile_t resolve_qos(rp_rmw_qos_profile_t q)
{
    static const rp_rmw_time_t infinite = {9223372036u, 854775807u}; /* RMW_DURATION_INFINITE */
    if (q.history == 0)
        q.history = 1; /* KEEP_LAST */
    if (q.history == 1 && q.depth == 0)
        q.depth = 1;
    if (q.reliability == 0)
        q.reliability = 1; /* RELIABLE */
    if (q.durability == 0)
        q.durability = 2; /* VOLATILE */
    if (q.liveliness == 0)
        q.liveliness = 1; /* AUTOMATIC */
    if (q.deadline.sec == 0 && q.deadline.nsec == 0)
        q.deadline = infinite;
    if (q.lifespan.sec == 0 && q.lifespan.nsec == 0)
        q.lifespan = infinite;
    if (q.liveliness_lease_duration.sec == 0 && q.liveliness_lease_duration.nsec == 0)
        q.liveliness_lease_duration = infinite;
    return q;
}

static uint8_t sim_gid[24];

/* rcl_publisher_init and rcl_subscription_init: the handle must be zero-initialised, as rcl requires. */
static rp_rcl_ret_t endpoint_init(bool publisher, void *endpoint, const void *node, const void *type_support,
                                  const char *topic_name, const void *options)
{
    struct rcl_publisher *e = endpoint;
    const struct sim_endpoint_options *o = options;
    if (e == NULL || node == NULL || type_support == NULL || topic_name == NULL || o == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    if (e->impl != NULL)
        return SIM_RCL_RET_ALREADY_INIT;
    struct sim_endpoint_impl *impl = calloc(1, sizeof *impl);
    struct sim_rmw_endpoint *rmw = calloc(1, 48);
    if (impl == NULL || rmw == NULL) {
        free(impl);
        free(rmw);
        return 10; /* RCL_RET_BAD_ALLOC */
    }
    rmw->implementation_identifier = rmw_identifier();
    rmw->topic_name = topic_name;
    impl->rmw_handle = rmw;
    impl->actual_qos = resolve_qos(o->qos);
    e->impl = impl;
    if (publisher) {
        ros_trace_rmw_publisher_init(rmw, sim_gid);
        ros_trace_rcl_publisher_init(endpoint, node, rmw, topic_name, o->qos.depth);
    } else {
        ros_trace_rmw_subscription_init(rmw, sim_gid);
        ros_trace_rcl_subscription_init(endpoint, node, rmw, topic_name, o->qos.depth);
    }
    return RP_RCL_RET_OK;
}

EXPORT rp_rcl_ret_t rcl_publisher_init(void *publisher, const void *node, const void *type_support,
                                       const char *topic_name, const void *options)
{
    return endpoint_init(true, publisher, node, type_support, topic_name, options);
}

EXPORT rp_rcl_ret_t rcl_subscription_init(void *subscription, const void *node, const void *type_support,
                                          const char *topic_name, const void *options)
{
    return endpoint_init(false, subscription, node, type_support, topic_name, options);
}

static const rp_rmw_qos_profile_t *actual_qos(const void *endpoint)
{
    const struct rcl_publisher *e = endpoint;
    return e != NULL && e->impl != NULL ? &((const struct sim_endpoint_impl *)e->impl)->actual_qos : NULL;
}

static void *rmw_handle(const void *endpoint)
{
    const struct rcl_publisher *e = endpoint;
    return e != NULL && e->impl != NULL ? ((const struct sim_endpoint_impl *)e->impl)->rmw_handle : NULL;
}

EXPORT const rp_rmw_qos_profile_t *rcl_publisher_get_actual_qos(const void *publisher) { return actual_qos(publisher); }
EXPORT const rp_rmw_qos_profile_t *rcl_subscription_get_actual_qos(const void *subscription)
{
    return actual_qos(subscription);
}
EXPORT void *rcl_publisher_get_rmw_handle(const void *publisher) { return rmw_handle(publisher); }
EXPORT void *rcl_subscription_get_rmw_handle(const void *subscription) { return rmw_handle(subscription); }

/* The domain of the node's context: ROS_DOMAIN_ID as rcl_init read it (rcl_get_default_domain_id), 0 unset. */
EXPORT rp_rcl_ret_t rcl_node_get_domain_id(const void *node, size_t *domain_id)
{
    if (node == NULL || domain_id == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    const char *env = getenv("ROS_DOMAIN_ID");
    char *end = NULL;
    unsigned long v = env != NULL && *env != '\0' ? strtoul(env, &end, 10) : 0;
    if (end != NULL && *end != '\0')
        return RP_RCL_RET_ERROR; /* rcl refuses a domain id that is not a number */
    *domain_id = v;
    return RP_RCL_RET_OK;
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

/*
 * ---- service calls, as rcl/src/rcl/service.c and client.c make them: the
 * take functions without info call their _with_info twin through the PLT
 * (rcl_take_request -> rcl_take_request_with_info), a take with nothing
 * waiting fails with *_TAKE_FAILED, and on Kilted the rmw fires its service
 * tracepoints inside (rmw_take_request, rmw_send_response, rmw_send_request,
 * rmw_take_response; tracetools-facts.md §3). rcl_send_request returns OK
 * whether or not a server exists, as a DDS write does.
 *
 * A response to a client that has gone (its socket no longer bound: the
 * process exited or was killed) goes as the rmw's rmw_send_response makes
 * it go (rmw_fastrtps_shared_cpp/src/rmw_response.cpp and rmw_request.cpp,
 * rmw_cyclonedds_cpp's rmw_node.cpp, Humble to Kilted). rmw_fastrtps puts a
 * client's reader and writer in its service's map at every take of the
 * client's request, and erases them when either unmatches; at the send it
 * returns RMW_RET_OK without writing when the client is not in the map
 * (GONE), and RMW_RET_TIMEOUT ("client will not receive response") when it
 * is but its response reader stays unmatched for the writer's
 * max_blocking_time (MAYBE): a request taken after its client had gone.
 * rcl_send_response passes that on as RCL_RET_TIMEOUT; rclcpp's
 * Service::send_response (service.hpp) logs "failed to send response to
 * <service> (timeout)" and returns, rclpy's service_send_response warns
 * (RuntimeWarning) and returns. So the real order of such a call is
 * rcl_take_request[_with_info] (OK), the callback, rcl_send_response ->
 * rmw_send_response (blocks 100 ms) -> RCL_RET_TIMEOUT, and nothing more;
 * on Kilted rmw_fastrtps fires its rmw_send_response tracepoint only after
 * that check, so a refused response fires none. rmw_cyclonedds says GONE
 * as soon as the client's request writer unmatched, whenever it was taken:
 * RMW_RET_OK, nothing written. The stand-in keeps the one fact that decides
 * between the two, whether a request of the client was taken after it had
 * gone (sim_call_impl.taken_after_gone), and checks the client's socket
 * where rmw_fastrtps checks its map.
 */
struct rcl_call_entity {
    struct sim_call_impl *impl;
};

#if SIM_DISTRO >= 3
void ros_trace_rmw_take_request(const void *rmw_service_handle, const void *request, const uint8_t *client_gid,
                                int64_t sequence_number, const bool taken);
void ros_trace_rmw_send_response(const void *rmw_service_handle, const void *response, const uint8_t *client_gid,
                                 int64_t sequence_number, int64_t timestamp);
void ros_trace_rmw_send_request(const void *rmw_client_handle, const void *request, int64_t sequence_number);
void ros_trace_rmw_take_response(const void *rmw_client_handle, const void *response, int64_t sequence_number,
                                 int64_t source_timestamp, const bool taken);
#endif

static int64_t real_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct sim_call_impl *call_impl(const void *entity)
{
    const struct rcl_call_entity *e = entity;
    return e != NULL ? e->impl : NULL;
}

/*
 * One datagram from impl's socket into info; false when none is waiting.
 * An impl without a socket (sock -1) is a loopback for the benchmark: a
 * service takes one new request after another, a client the response to
 * its last request, and nothing is ever sent; no system call either way.
 */
static bool take_call(struct sim_call_impl *impl, rp_rmw_service_info_t *info, bool client)
{
    if (impl->sock < 0) {
        memcpy(info->request_id.writer_guid, impl->gid, sizeof impl->gid);
        info->request_id.sequence_number = client ? atomic_load(&impl->seq) : atomic_fetch_add(&impl->seq, 1) + 1;
        return true;
    }
    struct sim_call_msg m;
    if (recv(impl->sock, &m, sizeof m, MSG_DONTWAIT) != (ssize_t)sizeof m)
        return false;
    info->source_timestamp = m.src_real_ns;
    info->received_timestamp = real_now();
    info->request_id = m.id;
    return true;
}

/* false when the peer at path is gone (no socket bound there any more); a full queue is not gone */
static bool send_call(struct sim_call_impl *impl, const char *path, const rp_rmw_request_id_t *id)
{
    if (impl->sock < 0)
        return true; /* the benchmark's loopback */
    struct sim_call_msg m = {*id, real_now()};
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    /* best effort, like a DDS write to a reader that is gone: the call is simply never answered */
    if (sendto(impl->sock, &m, sizeof m, MSG_DONTWAIT, (struct sockaddr *)&a, sizeof a) == (ssize_t)sizeof m)
        return true;
    return errno != ECONNREFUSED && errno != ENOENT;
}

/* The socket of the client a request id names, under the service's directory. */
static void client_path(const struct sim_call_impl *impl, const rp_rmw_request_id_t *id, char *path, size_t len,
                        uint32_t *client)
{
    memcpy(client, id->writer_guid, sizeof *client);
    snprintf(path, len, "%s/c%u.sock", impl->peer_path, *client);
}

/* Whether a client is still there: a socket is bound at its path (connecting a datagram socket sends nothing). */
static bool client_present(const char *path)
{
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return true;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if (n >= sizeof a.sun_path) {
        close(s);
        return true; /* no such socket could be bound either */
    }
    memcpy(a.sun_path, path, n + 1);
    bool present = connect(s, (struct sockaddr *)&a, sizeof a) == 0 || (errno != ECONNREFUSED && errno != ENOENT);
    close(s);
    return present;
}

/* The process's rmw is rmw_fastrtps (rmw_identifier's rule, read without its lazy buffer: any thread asks). */
static bool fastrtps(void)
{
    const char *env = getenv("RMW_IMPLEMENTATION");
    return env == NULL || *env == '\0' || strncmp(env, "rmw_fastrtps", 12) == 0;
}

/* rmw_fastrtps's take of a request: the client enters the service's map, even when it has gone already. */
static void request_taken(struct sim_call_impl *impl, const rp_rmw_request_id_t *id)
{
    char path[160];
    uint32_t client;
    client_path(impl, id, path, sizeof path, &client);
    if (client < 64 && fastrtps() && !client_present(path))
        atomic_fetch_or(&impl->taken_after_gone, UINT64_C(1) << client);
}

EXPORT rp_rcl_ret_t rcl_take_request_with_info(const void *service, rp_rmw_service_info_t *header, void *request)
{
    struct sim_call_impl *impl = call_impl(service);
    if (impl == NULL)
        return 600; /* RCL_RET_SERVICE_INVALID */
    if (header == NULL || request == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    bool taken = take_call(impl, header, false);
    if (taken && impl->sock >= 0)
        request_taken(impl, &header->request_id);
#if SIM_DISTRO >= 3
    ros_trace_rmw_take_request(impl->rmw_handle, request, header->request_id.writer_guid,
                               header->request_id.sequence_number, taken);
#endif
    return taken ? RP_RCL_RET_OK : RP_RCL_RET_SERVICE_TAKE_FAILED;
}

EXPORT rp_rcl_ret_t rcl_take_request(const void *service, rp_rmw_request_id_t *header, void *request)
{
    rp_rmw_service_info_t info = {0};
    if (header != NULL)
        info.request_id = *header;
    rp_rcl_ret_t ret = rcl_take_request_with_info(service, &info, request);
    if (header != NULL)
        *header = info.request_id;
    return ret;
}

EXPORT rp_rcl_ret_t rcl_send_response(const void *service, rp_rmw_request_id_t *header, void *response)
{
    struct sim_call_impl *impl = call_impl(service);
    if (impl == NULL)
        return 600;
    if (header == NULL || response == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    uint32_t client;
    char path[160];
    client_path(impl, header, path, sizeof path, &client);
    if (!send_call(impl, path, header)) { /* the client has gone: what the rmw's check says (above) */
        if (client < 64 && (atomic_load(&impl->taken_after_gone) >> client & 1) != 0) {
            struct timespec wait = {0, (long)SIM_RESPONSE_MAX_BLOCKING_NS}; /* MAYBE: waited for, never matched */
            while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {
            }
            return SIM_RCL_RET_TIMEOUT; /* "client will not receive response" */
        }
        return RP_RCL_RET_OK; /* GONE: nothing written, nothing traced */
    }
#if SIM_DISTRO >= 3
    ros_trace_rmw_send_response(impl->rmw_handle, response, header->writer_guid, header->sequence_number, real_now());
#endif
    return RP_RCL_RET_OK;
}

EXPORT rp_rcl_ret_t rcl_send_request(const void *client, const void *request, int64_t *sequence_number)
{
    struct sim_call_impl *impl = call_impl(client);
    if (impl == NULL)
        return 500; /* RCL_RET_CLIENT_INVALID */
    if (request == NULL || sequence_number == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    rp_rmw_request_id_t id;
    memcpy(id.writer_guid, impl->gid, sizeof id.writer_guid);
    id.sequence_number = atomic_fetch_add(&impl->seq, 1) + 1;
    (void)send_call(impl, impl->peer_path, &id);
#if SIM_DISTRO >= 3
    ros_trace_rmw_send_request(impl->rmw_handle, request, id.sequence_number);
#endif
    if (impl->hold_ns > 0) { /* the request is out: its answer may be taken before this call returns */
        struct timespec hold = {(time_t)(impl->hold_ns / 1000000000u), (long)(impl->hold_ns % 1000000000u)};
        while (nanosleep(&hold, &hold) != 0 && errno == EINTR) {
        }
    }
    *sequence_number = id.sequence_number;
    return RP_RCL_RET_OK;
}

EXPORT rp_rcl_ret_t rcl_take_response_with_info(const void *client, rp_rmw_service_info_t *header, void *response)
{
    struct sim_call_impl *impl = call_impl(client);
    if (impl == NULL)
        return 500;
    if (header == NULL || response == NULL)
        return RP_RCL_RET_INVALID_ARGUMENT;
    bool taken = take_call(impl, header, true);
#if SIM_DISTRO >= 3
    ros_trace_rmw_take_response(impl->rmw_handle, response, header->request_id.sequence_number,
                                header->source_timestamp, taken);
#endif
    return taken ? RP_RCL_RET_OK : RP_RCL_RET_CLIENT_TAKE_FAILED;
}

EXPORT rp_rcl_ret_t rcl_take_response(const void *client, rp_rmw_request_id_t *header, void *response)
{
    rp_rmw_service_info_t info = {0};
    if (header != NULL)
        info.request_id = *header;
    rp_rcl_ret_t ret = rcl_take_response_with_info(client, &info, response);
    if (header != NULL)
        *header = info.request_id;
    return ret;
}
