/*
 * Latency links (ABI 1.9, design note 0032): which input a callback's
 * publishes came from, and how old that input was when its output left.
 * Only with ROS_PULSE_LINKS=1; off, no hook reaches this file (the take
 * slot's opt-in pointer stays NULL and rp_tls_hot.link.armed stays 0).
 *
 * rclcpp: a take stores its subscription and source timestamp in this
 * thread's state; the callback_start right after it, of that subscription
 * and not intra-process, copies them into its frame (callbacks.c) and arms
 * the thread; every publish while armed links that input to its publisher.
 * rclpy, which fires no callback tracepoint: a take opens the input and the
 * thread's next take, rcl_wait, timer call or service take closes it.
 * Intra-process (Jazzy, Kilted): the ring buffer's enqueue, on the publishing
 * thread, stamps (buffer, index) with the publish time; its dequeue, on the
 * executing thread right before callback_start(..., true), is the take.
 *
 * A publish linked costs one clock read (realtime is monotonic plus an
 * offset this thread re-reads once a second: the two clocks are slewed
 * together, only a step moves the offset), the input's hint, and the link's
 * sums and buckets: plain adds, each record having one writing lane.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "ros2_pulse/segment.h"

#define LINK_CACHE 8u     /* message links: the input's hint finds nearly all, this the rest */
#define SAMPLED_CACHE 64u /* sampled links: no hint, and a timer links each input of its node */
#define NO_LINK UINT32_MAX
#define OFFSET_RENEW_NS UINT64_C(1000000000)
#define SAMPLED_INPUTS 4096u /* endpoints (by index) whose latest message a timer may sample */
#define SAMPLER_INPUTS 8u    /* a node's subscriptions one timer samples */

static __thread struct {
    struct rp_link_input py; /* rclpy: the take open on this thread (armed == RP_LINK_ARMED_PY) */
    uint64_t py_take_ns;     /* ... and when it was taken (CLOCK_MONOTONIC) */
    int64_t real_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC, read at offset_read_ns */
    uint32_t lane;                 /* this thread's private lane, or RP_LINK_SHARED_LANE ... */
    _Atomic uint64_t *lane_lanes;  /* ... in the segment at these lanes */
    uint64_t offset_read_ns;
    struct {
        uint32_t in, out;   /* endpoints (index + 1) */
        uint32_t gen;       /* g_hot.gen when resolved: any mapping change (a slot reused) re-resolves */
        uint32_t link;      /* index in g_seg.links, or NO_LINK: never linked (not an output, table full) */
        uint16_t kind;      /* rp_link_kind: a message link and a sampled one of one pair are two records */
        _Atomic uint64_t *lanes; /* the segment it belongs to (a fork child has its own) */
    } cache[LINK_CACHE + SAMPLED_CACHE]; /* message links', then sampled links' */
    /* The open timer callback's sampled inputs (rule 3), read at its start. */
    uint32_t nsampled, sampler; /* ... and the timer (index + 1) */
    struct sampled_input {
        uint32_t ep;         /* the subscription (index + 1) */
        uint8_t slot;        /* its place in the timer's g_samplers entry (its link hint's) */
        bool consumed;       /* its cycle's first message was cleared by a publish of this callback */
        int64_t latest_ns;   /* source timestamp of its latest message taken before the timer started */
        int64_t first_ns;    /* ... and of the first taken since its previous sample (latest_ns: only one) */
    } sampled[SAMPLER_INPUTS];
} tls_links;

void rp_link_take(uint64_t ep, int64_t source_ns, bool rclpy)
{
    if (!rclpy) {
        rp_tls_hot.link.take_ep = (uint32_t)ep;
        rp_tls_hot.link.take_source_ns = source_ns;
        return;
    }
    tls_links.py = (struct rp_link_input){(uint32_t)ep, 0, source_ns};
    tls_links.py_take_ns = rp_clock_ns();
    rp_tls_hot.link.armed = RP_LINK_ARMED_PY;
}

/*
 * Intra-process stamps: (buffer, index) -> realtime of the enqueue, in a
 * small open table. rclcpp enqueues and dequeues one buffer under its mutex,
 * so a dequeue sees its own enqueue's stamp; a slot shared with another
 * buffer is recognised by its key, and the only race left (two buffers
 * writing one slot at once) pairs a key with a stamp taken nanoseconds
 * apart (the writer clears the key before its release store of the
 * stamp, so a reader that sees a new stamp never sees the old key). An
 * entry overwritten before its dequeue (a slot another buffer took) leaves
 * that message's callback without an input: it links nothing, never a
 * wrong one.
 */
#define INTRA_STAMPS 4096u
static struct {
    _Atomic uint64_t key;
    _Atomic int64_t stamp;
} g_intra_stamps[INTRA_STAMPS];

static uint64_t intra_key(const void *buffer, uint64_t index)
{
    uint64_t k = ((uint64_t)(uintptr_t)buffer ^ (index * UINT64_C(0x9e3779b97f4a7c15))) * UINT64_C(0xff51afd7ed558ccd);
    return k | 1u; /* never 0, the empty slot's key */
}

static inline int64_t realtime_at(uint64_t now);

EXPORT void ros_trace_rclcpp_ring_buffer_enqueue(const void *buffer, const uint64_t index, const uint64_t size,
                                                 const bool overwritten)
{
    if (g_seg.links != NULL && buffer != NULL) {
        uint64_t key = intra_key(buffer, index);
        __typeof__(g_intra_stamps[0]) *e = &g_intra_stamps[(key >> 20) % INTRA_STAMPS];
        atomic_store_explicit(&e->key, 0, memory_order_relaxed);
        atomic_store_explicit(&e->stamp, realtime_at(rp_clock_ns()), memory_order_release);
        atomic_store_explicit(&e->key, key, memory_order_release);
    }
    RP_FORWARD(rclcpp_ring_buffer_enqueue, (const void *, const uint64_t, const uint64_t, const bool),
               (buffer, index, size, overwritten));
}

EXPORT void ros_trace_rclcpp_ring_buffer_dequeue(const void *buffer, const uint64_t index, const uint64_t size)
{
    if (g_seg.links != NULL && buffer != NULL) {
        uint64_t key = intra_key(buffer, index);
        __typeof__(g_intra_stamps[0]) *e = &g_intra_stamps[(key >> 20) % INTRA_STAMPS];
        int64_t stamp = atomic_load_explicit(&e->stamp, memory_order_acquire);
        if (atomic_load_explicit(&e->key, memory_order_acquire) == key) {
            atomic_store_explicit(&e->key, 0, memory_order_relaxed); /* one dequeue per enqueue */
            rp_tls_hot.link.take_ep = RP_LINK_INTRA_TAKE;
            rp_tls_hot.link.take_source_ns = stamp;
        }
    }
    RP_FORWARD(rclcpp_ring_buffer_dequeue, (const void *, const uint64_t, const uint64_t), (buffer, index, size));
}

/* /rosout and /parameter_events are every node's own: never a pipeline's input or output. */
static bool never_linked(const char *name)
{
    size_t n = strnlen(name, RP_NAME_MAX);
    static const char events[] = "/parameter_events";
    return strcmp(name, "/rosout") == 0 ||
           (n >= sizeof events - 1 && strcmp(name + n - (sizeof events - 1), events) == 0);
}

/* The link record of (in, out) written by lane, claimed when new; NO_LINK when the table is full or out never links. */
RP_COLD static uint32_t resolve_link(uint32_t in, uint32_t out, uint16_t kind, uint16_t flags, uint32_t lane)
{
    const struct rp_endpoint *pe = &g_seg.endpoints[out - 1];
    if (atomic_load_explicit(&pe->state, memory_order_acquire) != RP_RECORD_READY || never_linked(pe->name))
        return NO_LINK;
    if (kind == RP_LINK_SAMPLED && strncmp(pe->name, g_seg.endpoints[in - 1].name, RP_NAME_MAX) == 0)
        return NO_LINK; /* a timer publishing what its node also takes: its own echo, not a pipeline */
    uint32_t in_gen = atomic_load_explicit(&g_seg.endpoints[in - 1].generation, memory_order_relaxed);
    uint32_t out_gen = atomic_load_explicit(&pe->generation, memory_order_relaxed);
    for (uint32_t i = 0; i < g_seg.link_capacity; i++) {
        struct rp_link *l = &g_seg.links[i];
        uint32_t state = atomic_load_explicit(&l->state, memory_order_acquire);
        if (state == RP_RECORD_EMPTY) {
            if (!atomic_compare_exchange_strong_explicit(&l->state, &state, RP_LINK_CLAIMED, memory_order_acq_rel,
                                                         memory_order_acquire))
                continue; /* another thread claimed it first: it is not ours, whatever it links */
            l->kind = kind;
            l->flags = flags;
            l->input = in - 1;
            l->output = out - 1;
            l->input_generation = in_gen;
            l->output_generation = out_gen;
            l->lane = lane;
            atomic_store_explicit(&l->state, RP_RECORD_READY, memory_order_release);
            return i;
        }
        if (state == RP_RECORD_READY && l->input == in - 1 && l->output == out - 1 && l->kind == kind && l->flags == flags &&
            l->lane == lane && l->input_generation == in_gen && l->output_generation == out_gen)
            return i;
    }
    return NO_LINK;
}

/*
 * The link of (in, out, kind): first its hint (a message link's: the link its callback last
 * published on, shared by every thread and tagged with the low bits of the
 * mapping generation, so a reused slot's old link is never taken), then
 * this thread's small cache, then the table. A pipeline node publishes on
 * one or two outputs: the hint is right nearly always, and it is on the
 * line rmw_take's early fetch already brought in.
 */
static struct rp_link *link_for(uint32_t in, uint32_t out, uint16_t kind, uint16_t flags, _Atomic uint32_t *hint)
{
    _Atomic uint64_t *lanes = rp_lanes();
    if (lanes == NULL || g_seg.links == NULL)
        return NULL;
    uint32_t gen = atomic_load_explicit(&g_hot.gen, memory_order_acquire);
    if (__builtin_expect(tls_links.lane_lanes != lanes, 0)) { /* first link in this segment: which lane writes */
        int32_t lane = rp_private_lane();
        tls_links.lane = lane >= 0 ? (uint32_t)lane : RP_LINK_SHARED_LANE;
        tls_links.lane_lanes = lanes;
    }
    if (hint != NULL) {
        uint32_t v = atomic_load_explicit(hint, memory_order_acquire); /* its record's fields were written before */
        uint32_t i = (v & 0xffffu) - 1;
        if (v >> 16 == (gen & 0xffffu) && i < g_seg.link_capacity) {
            struct rp_link *l = &g_seg.links[i];
            if (l->output == out - 1 && l->input == in - 1 && l->kind == kind && l->flags == flags && l->lane == tls_links.lane)
                return l;
        }
    }
    uint32_t hash = in * 31u + out;
    __typeof__(tls_links.cache[0]) *c =
        &tls_links.cache[kind == RP_LINK_MESSAGE ? hash % LINK_CACHE : LINK_CACHE + hash % SAMPLED_CACHE];
    if (c->in != in || c->out != out || c->gen != gen || c->kind != kind || c->lanes != lanes)
        *c = (__typeof__(*c)){in, out, gen, resolve_link(in, out, kind, flags, tls_links.lane), kind, lanes};
    if (c->link == NO_LINK)
        return NULL;
    if (hint != NULL && c->link < 0xffffu)
        atomic_store_explicit(hint, (c->link + 1) | (gen << 16), memory_order_release);
    return &g_seg.links[c->link];
}

/* This thread's CLOCK_REALTIME - CLOCK_MONOTONIC, read again once a second. */
RP_COLD static void renew_offset(uint64_t now)
{
    struct timespec r, m;
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &m);
    tls_links.real_minus_mono = ((int64_t)r.tv_sec - (int64_t)m.tv_sec) * 1000000000 + (r.tv_nsec - m.tv_nsec);
    tls_links.offset_read_ns = now;
}

/* CLOCK_REALTIME at monotonic now, through this thread's offset. */
static inline int64_t realtime_at(uint64_t now)
{
    if (__builtin_expect(now - tls_links.offset_read_ns >= OFFSET_RENEW_NS || tls_links.offset_read_ns == 0, 0))
        renew_offset(now);
    return (int64_t)now + tls_links.real_minus_mono;
}

/*
 * Sampled links (rule 3, CARET's use_latest_message). Each subscription's
 * latest message (its source timestamp) and the first since a timer last
 * sampled it, by endpoint index, in process memory: a subscription callback
 * that starts with an input writes them (plain stores: its racing sample
 * can only lose one cycle's first message, and worst then reads as the
 * latest's age). A timer's callback_start reads them for its node's
 * subscriptions into its thread's state; its first publish that links an
 * input ends that input's cycle.
 */
static struct {
    _Atomic int64_t latest_ns, first_ns;
} g_inputs[SAMPLED_INPUTS];

/* A callback's sampled inputs, by endpoint: a timer's node's subscriptions (index + 1), none for
 * any other callback; resolved once per mapping generation. */
static struct {
    _Atomic uint32_t gen; /* g_hot.gen + 1 when resolved; 0: not yet */
    _Atomic uint32_t n;
    _Atomic uint32_t eps[SAMPLER_INPUTS];
    _Atomic uint32_t link[SAMPLER_INPUTS]; /* the link each input's last sampled publish used, as rp_ep_hint.link */
} g_samplers[SAMPLED_INPUTS];

void rp_link_input_seen(uint32_t ep, int64_t source_ns)
{
    if (ep - 1 >= SAMPLED_INPUTS || source_ns <= 0)
        return;
    atomic_store_explicit(&g_inputs[ep - 1].latest_ns, source_ns, memory_order_relaxed);
    if (atomic_load_explicit(&g_inputs[ep - 1].first_ns, memory_order_relaxed) == 0)
        atomic_store_explicit(&g_inputs[ep - 1].first_ns, source_ns, memory_order_relaxed);
}

/* A sample ends the input's cycle, unless a newer cycle began meanwhile. */
static void sampled_consume(uint32_t ep, int64_t first_ns)
{
    if (atomic_load_explicit(&g_inputs[ep - 1].first_ns, memory_order_relaxed) == first_ns)
        atomic_store_explicit(&g_inputs[ep - 1].first_ns, 0, memory_order_relaxed);
}

/* Callback ep's sampled inputs: its node's subscriptions if it is a timer's, else none. */
RP_COLD static void resolve_sampler(uint32_t ep, uint32_t gen)
{
    __typeof__(g_samplers[0]) *s = &g_samplers[ep - 1];
    if (g_seg.endpoints[ep - 1].kind != RP_KIND_TIMER) { /* a callback started without its input: it samples nothing */
        atomic_store_explicit(&s->n, 0, memory_order_relaxed);
        atomic_store_explicit(&s->gen, gen + 1, memory_order_release);
        return;
    }
    uint32_t node = atomic_load_explicit(&g_seg.endpoints[ep - 1].node_index, memory_order_relaxed);
    uint32_t n = 0;
    uint32_t count = atomic_load_explicit(&g_seg.header->endpoint_count, memory_order_acquire);
    for (uint32_t i = 0; i < count && i < g_seg.header->endpoint_capacity && n < SAMPLER_INPUTS; i++) {
        const struct rp_endpoint *e = &g_seg.endpoints[i];
        if (atomic_load_explicit(&e->state, memory_order_acquire) == RP_RECORD_READY && e->kind == RP_KIND_SUBSCRIPTION &&
            atomic_load_explicit(&e->node_index, memory_order_relaxed) == node && !never_linked(e->name))
            atomic_store_explicit(&s->eps[n++], i + 1, memory_order_relaxed);
    }
    atomic_store_explicit(&s->n, n, memory_order_relaxed);
    if (node != RP_NO_NODE) /* a timer not yet given its node is resolved again next time */
        atomic_store_explicit(&s->gen, gen + 1, memory_order_release);
}

struct rp_link_input rp_link_sampled_start(uint64_t ep)
{
    struct rp_link_input none = {0, 0, 0};
    if (ep - 1 >= SAMPLED_INPUTS)
        return none;
    uint32_t gen = atomic_load_explicit(&g_hot.gen, memory_order_acquire);
    __typeof__(g_samplers[0]) *s = &g_samplers[ep - 1];
    if (atomic_load_explicit(&s->gen, memory_order_acquire) != gen + 1)
        resolve_sampler((uint32_t)ep, gen);
    uint32_t n = atomic_load_explicit(&s->n, memory_order_relaxed), k = 0;
    for (uint32_t i = 0; i < n && i < SAMPLER_INPUTS; i++) {
        uint32_t in = atomic_load_explicit(&s->eps[i], memory_order_relaxed);
        if (in - 1 >= SAMPLED_INPUTS)
            continue;
        int64_t latest = atomic_load_explicit(&g_inputs[in - 1].latest_ns, memory_order_relaxed);
        int64_t first = atomic_load_explicit(&g_inputs[in - 1].first_ns, memory_order_relaxed);
        if (latest > 0)
            tls_links.sampled[k++] = (struct sampled_input){in, (uint8_t)i, false, latest, first > 0 && first < latest ? first : latest};
    }
    tls_links.nsampled = k;
    tls_links.sampler = (uint32_t)ep;
    return k > 0 ? (struct rp_link_input){RP_LINK_SAMPLED_FRAME, 0, 0} : none;
}

/* A linked publish on the shared lane's record (age 0: none; worst 0: a message link's): atomic adds. */
RP_COLD static void add_shared(struct rp_link *l, uint64_t own, uint64_t age, uint64_t worst)
{
    uint32_t age_bucket = rp_time_bucket(age);
    atomic_fetch_add_explicit(&l->own_sum_ns, own, memory_order_relaxed);
    if (age > 0) {
        atomic_fetch_add_explicit(&l->age_sum_ns, age, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->age_buckets[age_bucket], 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&l->unaged, 1, memory_order_relaxed);
    }
    if (worst > 0) {
        atomic_fetch_add_explicit(&l->worst_sum_ns, worst, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->worst_buckets[worst == age ? age_bucket : rp_time_bucket(worst)], 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&l->own_buckets[rp_time_bucket(own)], 1, memory_order_relaxed); /* the count: last */
}

/* One linked publish: own share, age (0: none) and, for a sampled link, the worst case's age. */
static void add_link(struct rp_link *l, uint64_t own, uint64_t age, uint64_t worst)
{
    if (__builtin_expect(l->lane == RP_LINK_SHARED_LANE, 0)) { /* threads beyond the private lanes share it */
        add_shared(l, own, age, worst);
        return;
    }
    /* One writer (this lane's thread): plain adds, published by relaxed stores. */
#define ADD(field, v) atomic_store_explicit(&(field), atomic_load_explicit(&(field), memory_order_relaxed) + (v), memory_order_relaxed)
    uint32_t age_bucket = rp_time_bucket(age);
    ADD(l->own_sum_ns, own);
    if (age > 0) {
        ADD(l->age_sum_ns, age);
        ADD(l->age_buckets[age_bucket], 1u);
    } else {
        ADD(l->unaged, 1u);
    }
    if (worst > 0) { /* a sampled link's worst case is its age when its cycle had one message: one bucket */
        ADD(l->worst_sum_ns, worst);
        ADD(l->worst_buckets[worst == age ? age_bucket : rp_time_bucket(worst)], 1u);
    }
    ADD(l->own_buckets[rp_time_bucket(own)], 1u); /* the count: last */
#undef ADD
}

/* The age at realtime now of a message sent at source_ns; 0: none (unknown, or ahead of this clock). */
static uint64_t age_of(int64_t now_real, int64_t source_ns)
{
    return source_ns > 0 && now_real > source_ns ? (uint64_t)(now_real - source_ns) : 0;
}

/* A publish inside a timer callback (rule 3): every sampled input of its node links to it. */
static void link_sampled(uint32_t out, uint64_t start)
{
    uint64_t now = 0;
    int64_t real = 0;
    for (uint32_t i = 0; i < tls_links.nsampled; i++) {
        struct sampled_input *si = &tls_links.sampled[i];
        struct rp_link *l = link_for(si->ep, out, RP_LINK_SAMPLED, 0, &g_samplers[tls_links.sampler - 1].link[si->slot]);
        if (l == NULL)
            continue;
        if (now == 0) {
            now = rp_clock_ns();
            real = realtime_at(now);
        }
        uint64_t age = age_of(real, si->latest_ns), worst = age_of(real, si->first_ns);
        add_link(l, now > start ? now - start : 0, age, age > 0 ? (worst > age ? worst : age) : 0);
        if (!si->consumed) { /* this sample ends the input's cycle: its next message starts the next one */
            si->consumed = true;
            sampled_consume(si->ep, si->first_ns);
        }
    }
}

void rp_link_publish(uint64_t pub_ep, unsigned counter_slot)
{
    struct rp_link_input *in;
    uint64_t start = 0;
    uint16_t flags = 0;
    if (rp_tls_hot.link.armed == RP_LINK_ARMED_PY) {
        in = &tls_links.py;
        start = tls_links.py_take_ns;
        flags = RP_LINK_FLAG_RCLPY;
    } else {
        in = rp_innermost_input(&start);
    }
    if (in == NULL || in->ep == 0)
        return; /* a callback without an input, nested in one with */
    /* Jazzy's intra-process publish fires rclcpp_intra_publish, then rcl_publish for the same message */
    if (counter_slot == RP_SLOT_INTRA) {
        in->last_intra_out = (uint32_t)pub_ep;
    } else if (in->last_intra_out == pub_ep) {
        in->last_intra_out = 0;
        return;
    }
    if (in->ep == RP_LINK_SAMPLED_FRAME) {
        link_sampled((uint32_t)pub_ep, start);
        return;
    }
    struct rp_ep_hint *h = rp_ep_hint(in->ep);
    struct rp_link *l = link_for(in->ep, (uint32_t)pub_ep, RP_LINK_MESSAGE, flags, h != NULL ? &h->link : NULL);
    if (l == NULL)
        return;
    uint64_t now = rp_clock_ns();
    add_link(l, now > start ? now - start : 0, age_of(realtime_at(now), in->source_ns), 0);
}
