/*
 * Service calls, server and client, for every client library (issue 26).
 *
 * rclcpp and rclpy both take requests, send responses, send requests and take
 * responses through librcl (rcl_take_request[_with_info], rcl_send_response,
 * rcl_send_request, rcl_take_response[_with_info]); the probe wraps those
 * exports, so one mechanism times rclcpp and rclpy alike on Humble, Jazzy and
 * Kilted. Kilted's rmw_* service tracepoints are not interposed: they fire
 * inside these calls (where the rmw fires them at all), and counting there
 * too would count each call twice.
 *
 * A server's handling time runs from the take of a request to the send of
 * its response, matched by request id (writer GUID and sequence number: a
 * deferred response or a response from another thread matches too); a
 * client's round trip from the send of a request to the take of its
 * response, matched by sequence number. Open calls wait in a 32-entry ring
 * in the segment, where readers see how many are outstanding and since when.
 *
 * Only these calls pay (one clock read, one lock-free map lookup, a few
 * atomics); the topic hot path is untouched. Without timing
 * (ROS_PULSE_TIMING=0) the wrappers only forward.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "core.h"
#include "ros2_pulse/segment.h"
#include "ros2_pulse/tracetools_api.h"

/* rcl_take_request calls rcl_take_request_with_info (and so for responses): only the outermost call counts. */
static __thread bool tls_in_call;

/* The calls record of handle's endpoint, or NULL (not ours, no segment, timing off). */
static struct rp_calls *calls_of(const void *handle, bool client)
{
    if (handle == NULL || rp_lanes() == NULL || g_seg.calls == NULL) /* rp_lanes() publishes g_seg */
        return NULL;
    uint64_t ep = rp_call_endpoint(handle, client);
    return ep != 0 ? &g_seg.calls[ep - 1] : NULL;
}

/* A server's key for a request: its sequence number mixed with its client's GUID, never 0, never RP_CALL_ANSWERED. */
static uint64_t request_key(const rp_rmw_request_id_t *id)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a over the GUID, then the sequence number */
    for (size_t i = 0; i < sizeof id->writer_guid; i++)
        h = (h ^ id->writer_guid[i]) * UINT64_C(0x100000001b3);
    h ^= (uint64_t)id->sequence_number * UINT64_C(0x9E3779B97F4A7C15);
    h &= ~RP_CALL_ANSWERED;
    return h != 0 ? h : 1;
}

/* An answered call: its duration counted. */
static void call_done(struct rp_calls *c, uint64_t start, uint64_t end)
{
    uint64_t d = end > start ? end - start : 0;
    atomic_fetch_add_explicit(&c->sum_ns, d, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->buckets[rp_time_bucket(d)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->answered, 1, memory_order_relaxed);
}

/*
 * What was in a ring entry this thread just took (exchanged for 0): a call
 * still outstanding (evicted), or an early answer nobody claimed (unmatched).
 */
static void displaced(struct rp_calls *c, uint64_t old)
{
    if (old & RP_CALL_ANSWERED)
        atomic_fetch_add_explicit(&c->unmatched, 1, memory_order_relaxed);
    else if (old != 0)
        atomic_fetch_add_explicit(&c->evicted, 1, memory_order_relaxed);
}

/*
 * Writes id and its time into entry e, as the ring's writers do (id 0, the
 * time, then the id, release); false when another writer filled the entry
 * between this thread's take and its store: the caller looks again.
 */
static bool fill(struct rp_call *e, uint64_t id, uint64_t ns)
{
    uint64_t free_id = 0;
    atomic_store_explicit(&e->start_ns, ns, memory_order_release);
    return atomic_compare_exchange_strong_explicit(&e->id, &free_id, id, memory_order_acq_rel, memory_order_relaxed);
}

/* Tries before a ring write gives up; each retry means another writer won the same entry. */
#define FILL_TRIES 4

enum meeting { MET, PLACED, GAVE_UP };

/*
 * The two halves of a client's call (its opening and an early answer) meet
 * in entry e: this half, id mine at time ns, takes the entry; if the other
 * half (id partner) waits there, it is freed and its time returned in
 * *partner_ns (MET); else whatever else was there is displaced and this half
 * waits in its place (PLACED), unless other writers kept winning (GAVE_UP).
 * A server's calls open the same way: no early answer is ever left for them.
 */
static enum meeting meet(struct rp_calls *c, struct rp_call *e, uint64_t mine, uint64_t partner, uint64_t ns,
                         uint64_t *partner_ns)
{
    for (int i = 0; i < FILL_TRIES; i++) {
        uint64_t old = atomic_exchange_explicit(&e->id, 0, memory_order_acq_rel);
        if (old == partner) {
            *partner_ns = atomic_load_explicit(&e->start_ns, memory_order_acquire);
            return MET;
        }
        displaced(c, old);
        if (fill(e, mine, ns))
            return PLACED;
    }
    return GAVE_UP;
}

/*
 * A call opens, started at start. It takes the ring entry of its sequence
 * number (client) or of its place in the order of requests (server: two
 * threads taking at once get two entries); an outstanding call there is
 * evicted, its end never timed. A client's answer that was taken first
 * waits there (RP_CALL_ANSWERED): the call is answered at once.
 */
static void call_open(struct rp_calls *c, const int64_t *client_seq, uint64_t key, uint64_t start)
{
    uint64_t nth = atomic_fetch_add_explicit(&c->started, 1, memory_order_relaxed);
    struct rp_call *e = &c->ring[(client_seq != NULL ? (uint64_t)*client_seq : nth) % RP_CALL_RING];
    uint64_t end = 0;
    switch (meet(c, e, key, key | RP_CALL_ANSWERED, start, &end)) {
    case MET:
        call_done(c, start, end > start ? end : rp_mono_ns()); /* end lost to a third writer: now bounds it */
        break;
    case GAVE_UP:
        atomic_fetch_add_explicit(&c->evicted, 1, memory_order_relaxed); /* the entry never settled: not timed */
        break;
    case PLACED:
        break;
    }
}

/*
 * A client's answer whose call is not in the ring yet (its sender is still
 * inside rcl_send_request): it waits in its sequence number's entry, where
 * that call will look when it opens.
 */
static void answer_early(struct rp_calls *c, uint64_t seq, uint64_t key, uint64_t now)
{
    uint64_t start = 0;
    switch (meet(c, &c->ring[seq % RP_CALL_RING], key | RP_CALL_ANSWERED, key, now, &start)) {
    case MET: /* its call opened meanwhile */
        call_done(c, start, now);
        break;
    case GAVE_UP:
        atomic_fetch_add_explicit(&c->unmatched, 1, memory_order_relaxed);
        break;
    case PLACED:
        break;
    }
}

/*
 * Frees the open call key (looked for at hint first); true with its start in
 * *start, false when it is not in the ring (not yet, or no longer).
 */
static bool call_take(struct rp_calls *c, uint32_t hint, uint64_t key, uint64_t *start)
{
    for (uint32_t i = 0; i < RP_CALL_RING; i++) {
        struct rp_call *e = &c->ring[(hint + i) % RP_CALL_RING];
        uint64_t s = atomic_load_explicit(&e->start_ns, memory_order_acquire);
        uint64_t want = key;
        if (atomic_load_explicit(&e->id, memory_order_acquire) != key ||
            !atomic_compare_exchange_strong_explicit(&e->id, &want, 0, memory_order_acq_rel, memory_order_relaxed))
            continue; /* not this call's, or another thread answered it just now */
        *start = s;
        return true;
    }
    return false;
}

/*
 * A call is answered: its entry is freed and its duration counted. A
 * client's answer (client_seq) whose call is not there yet waits for it; a
 * server's is unmatched.
 */
static void call_close(struct rp_calls *c, uint32_t hint, uint64_t key, const int64_t *client_seq)
{
    uint64_t now = rp_mono_ns(), start = 0;
    if (call_take(c, hint, key, &start))
        call_done(c, start, now);
    else if (client_seq != NULL)
        answer_early(c, (uint64_t)*client_seq, key, now);
    else
        atomic_fetch_add_explicit(&c->unmatched, 1, memory_order_relaxed);
}

/* ---------------------------------------------------------------- server */

static void request_taken(const void *service, const rp_rmw_request_id_t *id)
{
    struct rp_calls *c = calls_of(service, false);
    if (c != NULL)
        call_open(c, NULL, request_key(id), rp_mono_ns());
}

/*
 * A take wrapper (rcl_take_request and rcl_take_response, each with and
 * without info): the real function, through the outermost-call guard; a
 * successful outermost take is counted by counted(handle, its request id).
 */
#define TAKE_WRAPPER(name, header_t, fn_t, counted, request_id)                                    \
    EXPORT rp_rcl_ret_t name(const void *handle, header_t *header, void *message)                  \
    {                                                                                              \
        static void *_Atomic real_fn = RP_UNRESOLVED;                                              \
        fn_t real = (fn_t)rp_real(&real_fn, #name, "librcl.so");                                   \
        if (real == NULL)                                                                          \
            return RP_RCL_RET_ERROR; /* no librcl in this process */                               \
        rp_link_handled(); /* another entity's turn on this thread: an rclpy take's handling is over */ \
        if (tls_in_call || header == NULL)                                                         \
            return real(handle, header, message);                                                  \
        tls_in_call = true;                                                                        \
        rp_rcl_ret_t ret = real(handle, header, message);                                          \
        tls_in_call = false;                                                                       \
        if (ret == RP_RCL_RET_OK)                                                                  \
            counted(handle, request_id);                                                           \
        return ret;                                                                                \
    }

TAKE_WRAPPER(rcl_take_request_with_info, rp_rmw_service_info_t, rp_rcl_take_request_with_info_fn, request_taken,
             &header->request_id)
TAKE_WRAPPER(rcl_take_request, rp_rmw_request_id_t, rp_rcl_take_request_fn, request_taken, header)

/*
 * A response is sent, or refused: rmw_fastrtps (and rmw_cyclonedds) return
 * RMW_RET_TIMEOUT, which rcl passes on as RCL_RET_TIMEOUT, when the client's
 * response reader is not matched within the writer's max_blocking_time ("client
 * will not receive response": its client went away before the answer);
 * rclcpp's Service::send_response and rclpy's service_send_response warn and
 * return, so the call ends there. A refused response closes its call (ABI
 * 1.8): its entry is freed, it is counted in send_failed, and its time is
 * not an answer's (design note 0020). Any other error closes it the same
 * way: rclcpp and rclpy throw, and the response is never sent again.
 */
EXPORT rp_rcl_ret_t rcl_send_response(const void *service, rp_rmw_request_id_t *header, void *response)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    void *fn = rp_real(&real_fn, "rcl_send_response", "librcl.so");
    if (fn == NULL)
        return RP_RCL_RET_ERROR;
    uint64_t key = header != NULL ? request_key(header) : 0; /* before the call: rcl may not touch it, but it could */
    rp_rcl_ret_t ret = ((rp_rcl_send_response_fn)fn)(service, header, response);
    struct rp_calls *c = key != 0 ? calls_of(service, false) : NULL;
    if (c == NULL)
        return ret;
    /* most servers answer in the order they took: search from the oldest open entry */
    uint32_t hint = (uint32_t)(atomic_load_explicit(&c->answered, memory_order_relaxed) +
                               atomic_load_explicit(&c->send_failed, memory_order_relaxed));
    if (ret == RP_RCL_RET_OK) {
        call_close(c, hint, key, NULL);
    } else {
        uint64_t start;
        (void)call_take(c, hint, key, &start); /* its call, if still open, ends here: neither answered nor timed */
        atomic_fetch_add_explicit(&c->send_failed, 1, memory_order_relaxed); /* counted either way, as unmatched is */
    }
    return ret;
}

/* ---------------------------------------------------------------- client */

/* A client's key: its sequence number, never 0 (a free entry), never with RP_CALL_ANSWERED (rmw numbers from 1). */
static uint64_t sequence_key(int64_t seq)
{
    uint64_t k = (uint64_t)seq & ~RP_CALL_ANSWERED;
    return k != 0 ? k : ~RP_CALL_ANSWERED;
}

EXPORT rp_rcl_ret_t rcl_send_request(const void *client, const void *request, int64_t *sequence_number)
{
    static void *_Atomic real_fn = RP_UNRESOLVED;
    void *fn = rp_real(&real_fn, "rcl_send_request", "librcl.so");
    if (fn == NULL)
        return RP_RCL_RET_ERROR;
    struct rp_calls *c = sequence_number != NULL ? calls_of(client, true) : NULL;
    uint64_t start = c != NULL ? rp_mono_ns() : 0; /* the round trip includes the send */
    rp_rcl_ret_t ret = ((rp_rcl_send_request_fn)fn)(client, request, sequence_number);
    /* The call opens once rcl returns: its sequence number is known only then. Its answer may have been
     * taken already by another thread (answer_early): call_open finds it. */
    if (ret == RP_RCL_RET_OK && c != NULL)
        call_open(c, sequence_number, sequence_key(*sequence_number), start);
    return ret;
}

static void response_taken(const void *client, const rp_rmw_request_id_t *id)
{
    struct rp_calls *c = calls_of(client, true);
    if (c != NULL)
        call_close(c, (uint32_t)id->sequence_number, sequence_key(id->sequence_number), &id->sequence_number);
}

TAKE_WRAPPER(rcl_take_response_with_info, rp_rmw_service_info_t, rp_rcl_take_response_with_info_fn, response_taken,
             &header->request_id)
TAKE_WRAPPER(rcl_take_response, rp_rmw_request_id_t, rp_rcl_take_response_fn, response_taken, header)
