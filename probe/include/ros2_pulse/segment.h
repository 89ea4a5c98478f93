/*
 * ros2_pulse segment ABI.
 *
 * This header is the single C definition of the per-process shared-memory
 * segment. Its only other definition is the Go package internal/segment;
 * internal/segment/abi_test.go proves the two agree field by field.
 *
 * Layout (all offsets from the start of the file, all little-endian,
 * every section 64-byte aligned):
 *
 *   rp_header                      4096 bytes, fixed
 *   section RP_SECTION_NODES       node_capacity     x rp_node
 *   section RP_SECTION_ENDPOINTS   endpoint_capacity x rp_endpoint
 *   section RP_SECTION_LANES       lane_count x endpoint_capacity x RP_COUNTERS_PER_ENDPOINT x u64
 *   optional sections (gaps, latency, timing, threads, QoS, calls, links), each described in rp_header.sections
 *
 * Rules of the contract:
 *  - The probe is the only writer. Readers map the file read-only.
 *  - Every counter is monotonic: it is never reset or decremented.
 *  - A record (node, endpoint) is filled first and then published by a
 *    release store of its `state`; readers load `state` with acquire and
 *    ignore records whose state is not RP_RECORD_READY.
 *  - An endpoint slot whose entity is gone (its handle was re-initialised)
 *    is retired, and may be reused for a new entity once the table is full
 *    (ABI 1.3): the writer stores state EMPTY, rewrites the record, stores
 *    base[] = the slot's lane sums at that moment, bumps `generation`, and
 *    stores state READY (release). A reader that saw READY and a generation
 *    before reading a record checks both again after: a change means "read
 *    it next time". The slot's counters are never reset: the new entity's
 *    counts are the sums minus base[], and what the old entity counted to
 *    the end is base[] itself.
 *  - Counters live in lanes. Lane i < lane_count-1 has exactly one writing
 *    thread at a time, which increments with a plain load+store. The last
 *    lane is shared by any further threads and uses atomic adds. Readers sum
 *    all lanes.
 *  - New data is added as new section kinds (readers skip unknown kinds) or
 *    in reserved space, with a minor version bump. A change to anything
 *    below is a major version bump.
 */
#ifndef ROS2_PULSE_SEGMENT_H
#define ROS2_PULSE_SEGMENT_H

#include <stdint.h>

#ifdef __cplusplus
#define RP_ATOMIC(t) t
#else
#include <stdatomic.h>
#define RP_ATOMIC(t) _Atomic t
#endif

#define RP_MAGIC UINT64_C(0x45534c5550325352) /* "RS2PULSE" read as little-endian u64 */
#define RP_ABI_MAJOR 1
#define RP_ABI_MINOR 10

#define RP_HEADER_SIZE 4096u
#define RP_MAX_SECTIONS 8u
#define RP_EXE_MAX 256u
#define RP_CMDLINE_MAX 1024u
#define RP_NAME_MAX 256u
#define RP_COUNTERS_PER_ENDPOINT 4u
#define RP_NO_NODE UINT32_C(0xffffffff)

/* rp_header.state */
enum rp_segment_state {
    RP_SEGMENT_INITIALIZING = 0, /* created, liveness lock not yet taken */
    RP_SEGMENT_READY = 1,        /* liveness lock held by the owner */
};

/* rp_header.distro: what the loaded libtracetools offers, detected at runtime */
enum rp_distro {
    RP_DISTRO_UNKNOWN = 0,
    RP_DISTRO_HUMBLE = 1, /* no ros_trace_enabled_*, one-argument rmw_publish */
    RP_DISTRO_JAZZY = 2,  /* Iron/Jazzy: enabled_/do_, rclcpp_intra_publish */
    RP_DISTRO_KILTED = 3, /* Jazzy plus the 8.5.0 client/service tracepoints */
};

/* rp_section.kind */
enum rp_section_kind {
    RP_SECTION_NONE = 0,
    RP_SECTION_NODES = 1,
    RP_SECTION_ENDPOINTS = 2,
    RP_SECTION_LANES = 3,
    RP_SECTION_GAPS = 4,    /* only with ROS_TOPIC_STATS_JITTER=1: endpoint_capacity x rp_gap */
    RP_SECTION_LATENCY = 5, /* only with ROS_TOPIC_STATS_LATENCY=1: endpoint_capacity x rp_gap, see below */
    RP_SECTION_TIMING = 6,  /* ABI 1.4, unless ROS_PULSE_TIMING=0: endpoint_capacity x rp_timing */
    RP_SECTION_THREADS = 7, /* ABI 1.4, with RP_SECTION_TIMING: (lane_count - 1) x rp_thread, one per private lane */
    RP_SECTION_QOS = 8,     /* ABI 1.5: endpoint_capacity x rp_qos */
    RP_SECTION_CALLS = 9,   /* ABI 1.6, with RP_SECTION_TIMING: endpoint_capacity x rp_calls */
    RP_SECTION_LINKS = 10,  /* ABI 1.9, only with ROS_PULSE_LINKS=1 (and timing): link_capacity x rp_link */
    RP_SECTION_BYTES = 11,  /* ABI 1.9, only with ROS_PULSE_BYTES=1: endpoint_capacity x rp_bytes */
};

/* rp_node.state and rp_endpoint.state */
enum rp_record_state {
    RP_RECORD_EMPTY = 0,
    RP_RECORD_READY = 1,
};

/* rp_endpoint.kind */
enum rp_endpoint_kind {
    RP_KIND_PUBLISHER = 1,
    RP_KIND_SUBSCRIPTION = 2,
    RP_KIND_TIMER = 3,   /* name is empty; aux is the period in ns */
    RP_KIND_SERVICE = 4, /* name is the service name */
    RP_KIND_CLIENT = 5,  /* ABI 1.6: a service client; name is the service name */
};

/* rp_endpoint.flags (set before publication, except RP_EP_RETIRED and RP_EP_RCLCPP) */
enum rp_endpoint_flags {
    RP_EP_NAME_TRUNCATED = 1u << 0,
    RP_EP_RETIRED = 1u << 1, /* its handle was re-initialised for another entity; the slot may be reused */
    RP_EP_RCLCPP = 1u << 2,  /* an rclcpp object was linked to it (a subscription's or service's callbacks count) */
};

/*
 * Counter slots per endpoint and lane. Their meaning depends on the kind:
 *   publisher:    0 rcl_publish (inter), 1 rclcpp_intra_publish (intra)
 *   subscription: 0 callback_start inter, 1 callback_start intra, 2 taken (reserved)
 *   timer/service:0 callback_start (fires / requests handled)
 *   slot 3 is reserved (loaned messages).
 */
enum rp_counter_slot {
    RP_SLOT_INTER = 0,
    RP_SLOT_INTRA = 1,
    RP_SLOT_TAKEN = 2,
    RP_SLOT_RESERVED = 3,
};

/*
 * Inter-arrival times ("gaps") of one endpoint, opt-in. Multi-writer: any
 * thread may count a message, so every field is atomic. Multi-reader safe:
 * nothing is ever reset; each reader diffs the monotonic buckets itself.
 *
 * Bucket of a gap of d ns: u = d >> 10 (~microseconds); u < 16 -> bucket u;
 * else e = floor(log2 u), bucket (e - 3) * 16 + ((u >> (e - 4)) & 15), capped
 * at RP_GAP_BUCKETS - 1 (gaps of ~137 s and more). 16 buckets per octave:
 * a bucket spans at most 1/16 of its lower bound (6.25 %).
 */
#define RP_GAP_BUCKETS 384u
#define RP_GAP_SUB_BITS 4u

/*
 * ABI 1.7 (RP_SECTION_GAPS only): last_mono_ns only moves forward (a message
 * whose clock read is older than the last one's, two threads racing, counts
 * no gap), so the gaps in the buckets add up to last_mono_ns - first_mono_ns
 * and the probe keeps no sum: sum_ns stays 0 and readers derive it. Before
 * 1.7 sum_ns summed the gaps and first_mono_ns was not there. Since
 * 2026-12-04 (same ABI) the probe may derive these CLOCK_MONOTONIC values
 * from the CPU's counter (design note 0026): they agree with a reader's
 * clock_gettime to within a few microseconds, not to the nanosecond.
 */
struct rp_gap {
    RP_ATOMIC(uint64_t) last_mono_ns; /* CLOCK_MONOTONIC of the last message; 0 = none yet */
    RP_ATOMIC(uint64_t) sum_ns;       /* latency: sum of all samples; gaps: 0 since ABI 1.7 (see above) */
    RP_ATOMIC(uint32_t) flags;        /* RP_GAP_INTRA_PUBLISHER */
    uint32_t reserved;
    RP_ATOMIC(uint32_t) buckets[RP_GAP_BUCKETS]; /* wrap modulo 2^32: readers diff them */
    RP_ATOMIC(uint64_t) first_mono_ns; /* ABI 1.7, gaps: CLOCK_MONOTONIC of the first message; 0 = none yet */
};

/*
 * rp_gap.flags: a publisher that publishes intra-process fires
 * rclcpp_intra_publish and then, for the same message, rcl_publish; its gaps
 * are taken from the intra-process tracepoint only, so one message is one gap.
 */
#define RP_GAP_INTRA_PUBLISHER 1u

/*
 * RP_SECTION_LATENCY (ABI 1.2) reuses struct rp_gap for a subscription's
 * receive latency: at every rmw_take that took a message with a source
 * timestamp, d = CLOCK_REALTIME now - source timestamp (ns) goes into the
 * same log-linear buckets, sum_ns sums d, and last_mono_ns holds the
 * CLOCK_REALTIME of the last sample (not monotonic: the name is the struct's).
 * Exact on one host; across hosts only as good as their clock sync.
 */

/*
 * RP_SECTION_TIMING (ABI 1.4): how long each callback ran, and how late each
 * timer was called. Record i belongs to endpoint i (subscription, timer,
 * service; a publisher's stays zero). Multi-writer (reentrant callbacks may
 * run on several threads at once), every field atomic, nothing ever reset.
 *
 * A callback is timed from callback_start to the callback_end of the same
 * callback on the same thread: nested callbacks (a spin inside a callback)
 * each get their own duration. A start whose end never comes (the callback
 * threw; a deferred service response on Humble and Jazzy) is counted in
 * unended when the thread's next start or end shows it was abandoned.
 *
 * Histograms are log-linear, 8 buckets per octave (a bucket spans at most
 * 1/8 of its lower bound): u = d >> 10 (~microseconds); u < 8 -> bucket u;
 * else e = floor(log2 u), bucket (e - 2) * 8 + ((u >> (e - 3)) & 7), capped at
 * RP_TIME_BUCKETS - 1 (~69 s and more). The count of a histogram is the sum
 * of its buckets.
 *
 * ABI 1.10 (design note 0037): used and late_used mark the buckets that ever
 * counted, so a reader reads those few instead of all 200 every window. A
 * bucket is marked after its first count: a reader that loads the mark
 * (acquire) and then the bucket sees at least that count; one that loads
 * the mark before it is set reads the bucket as 0 and takes its count at
 * its next read. Marks, like buckets, are never cleared. Readers of a
 * record whose stride ends before late_used, or of an older minor, read
 * every bucket.
 */
#define RP_TIME_BUCKETS 200u
#define RP_TIME_SUB_BITS 3u

#define RP_SYMBOL_MAX 128u
#define RP_TIME_BUCKET_WORDS ((RP_TIME_BUCKETS + 63u) / 64u) /* u64 words of a bucket bitmap */

struct rp_timing {
    RP_ATOMIC(uint64_t) sum_ns;      /* sum of the timed durations */
    RP_ATOMIC(uint64_t) unended;     /* starts abandoned without their end */
    RP_ATOMIC(uint64_t) overruns;    /* timer: callbacks that ran longer than the period */
    RP_ATOMIC(uint64_t) late_sum_ns; /* timer: sum of the lateness of every call */
    uint64_t period_ns;              /* timer: the period, written before the endpoint is published */
    RP_ATOMIC(uint32_t) symbol_len;  /* bytes of symbol, stored (release) after them; 0: none yet */
    uint32_t symbol_truncated;       /* 1: the function's name was longer than symbol */
    RP_ATOMIC(uint32_t) buckets[RP_TIME_BUCKETS];      /* callback durations (wrap modulo 2^32) */
    RP_ATOMIC(uint32_t) late_buckets[RP_TIME_BUCKETS]; /* timer: actual minus scheduled call time */
    char symbol[RP_SYMBOL_MAX]; /* rclcpp_callback_register: the callback's function, demangled; written once */
    /* ABI 1.10: bit b of used (late_used) is set once buckets[b]
     * (late_buckets[b]) has counted, after that first count (release). */
    RP_ATOMIC(uint64_t) used[RP_TIME_BUCKET_WORDS];
    RP_ATOMIC(uint64_t) late_used[RP_TIME_BUCKET_WORDS];
};

/*
 * RP_SECTION_THREADS (ABI 1.4): how busy each thread is, by its callbacks
 * (rclcpp) and by its time outside rcl_wait (any client library's executor).
 * Record i belongs to
 * the thread that holds private lane i (one writer at a time; a thread that
 * exits frees its lane, and the next holder writes its own tid). busy_ns sums
 * the thread's outermost callbacks; open_ns is the start of the one running
 * now (0: none), so a reader adds now - open_ns to see a long callback
 * while it runs. seq is odd while the writer changes the record: a reader
 * that sees it odd, or changed after reading, reads again.
 */
struct rp_thread {
    RP_ATOMIC(uint32_t) seq;
    int32_t tid;
    RP_ATOMIC(uint64_t) busy_ns;   /* CLOCK_MONOTONIC ns inside outermost callbacks, ended ones */
    RP_ATOMIC(uint64_t) open_ns;   /* start of the outermost callback running now; 0 = none */
    RP_ATOMIC(uint64_t) callbacks; /* outermost callbacks ended */
    uint32_t endpoint_index;       /* endpoint slot of the last outermost callback (RP_NO_NODE: none); readers take its node */
    uint32_t reserved;
    char name[24];                 /* the thread's name when it took the lane */
    RP_ATOMIC(uint64_t) wait_ns;      /* ns inside rcl_wait, ended waits: an executor's idle time, any client library */
    RP_ATOMIC(uint64_t) wait_open_ns; /* start of the rcl_wait running now; 0 = none */
    RP_ATOMIC(uint64_t) waits;        /* rcl_wait calls ended */
    uint8_t reserved2[40];
};

/*
 * RP_SECTION_QOS (ABI 1.5): what a publisher or subscription is, learnt once
 * when rcl_publisher_init / rcl_subscription_init returned: the QoS the rmw
 * actually gave it (rcl_*_get_actual_qos), its message type (from the type
 * support it was created with), its rmw implementation (the identifier of
 * its rmw handle) and its node's domain (rcl_node_get_domain_id). Record i
 * belongs to endpoint i while generation equals the endpoint's; seq is odd
 * while the writer fills the record (0: never written), so a reader that
 * sees it odd, or changed after reading, reads it next time. Init-time only.
 */
#define RP_TYPE_MAX 128u
#define RP_RMW_MAX 32u
#define RP_NO_DOMAIN UINT32_C(0xffffffff)
#define RP_DURATION_INFINITE UINT64_MAX /* a QoS duration the rmw reports as infinite */

/* rp_qos.flags */
enum rp_qos_flags {
    RP_QOS_ACTUAL = 1u << 0,         /* history .. lease_ns hold the actual QoS (else unknown) */
    RP_QOS_TYPE_TRUNCATED = 1u << 1, /* the type name was longer than type */
    RP_QOS_AVOID_ROS_NS = 1u << 2,   /* avoid_ros_namespace_conventions: a raw DDS topic name */
};

struct rp_qos {
    RP_ATOMIC(uint32_t) seq;
    uint32_t generation; /* the endpoint generation it describes */
    uint8_t history;     /* rmw_qos_history_policy_e: 1 keep last, 2 keep all */
    uint8_t reliability; /* rmw_qos_reliability_policy_e: 1 reliable, 2 best effort */
    uint8_t durability;  /* rmw_qos_durability_policy_e: 1 transient local, 2 volatile */
    uint8_t liveliness;  /* rmw_qos_liveliness_policy_e: 1 automatic, 3 manual by topic */
    uint32_t depth;      /* history depth (saturated) */
    uint64_t deadline_ns; /* 0: unspecified (none); RP_DURATION_INFINITE */
    uint64_t lifespan_ns;
    uint64_t lease_ns;    /* liveliness lease duration */
    uint32_t domain_id;   /* RP_NO_DOMAIN: unknown */
    uint32_t flags;       /* rp_qos_flags */
    char rmw[RP_RMW_MAX];   /* e.g. "rmw_fastrtps_cpp"; "" unknown */
    char type[RP_TYPE_MAX]; /* "pkg/msg/Type"; "" unknown */
    uint8_t reserved[48];
};

/*
 * RP_SECTION_CALLS (ABI 1.6): the calls of a service server or client, for
 * every client library, from the rcl functions both rclcpp and rclpy call.
 * Record i belongs to endpoint i (a service or a client; others stay zero)
 * and starts afresh when the slot is reused, like the histograms.
 *   server: started = requests taken (rcl_take_request[_with_info]),
 *           answered = responses sent for a request it took, the duration
 *           from take to send (handling time, matched by request id);
 *   client: started = requests sent (rcl_send_request), answered =
 *           responses taken for a call it sent, the duration from send to
 *           take (round trip, matched by sequence number).
 * unmatched counts responses whose call was not (or no longer) in the ring;
 * evicted counts calls still outstanding when a newer call took their ring
 * entry (their end is never timed). Outstanding calls are the ring entries
 * with a non-zero id: a writer stores id 0, then start_ns, then the id
 * (release), and clears the id when the call is answered; a reader loads the
 * id (acquire), start_ns, and the id again, and skips the entry if it changed.
 * Multi-writer (any executor thread), every field atomic, nothing reset.
 * Durations use the rp_timing buckets.
 *
 * ABI 1.7: a client's response can be taken by one thread while the thread
 * that sent its request is still inside rcl_send_request (rclcpp and rclpy
 * take outside their pending-requests lock), before the call is in the ring.
 * Such an answer waits in the entry of its sequence number with
 * RP_CALL_ANSWERED set in its id and its take time in start_ns; the call,
 * opening, finds it there and is answered at once. An id with
 * RP_CALL_ANSWERED is not an open call (a server's ids never have it).
 * Before 1.7 the answer counted as unmatched and its call stayed open.
 *
 * ABI 1.8 (taken from reserved): send_failed counts a server's responses
 * that rcl_send_response refused (any return but RCL_RET_OK; rmw_fastrtps
 * returns RCL_RET_TIMEOUT when the client's response reader is gone or not
 * matched: "client will not receive response"). The call's ring entry, if
 * still open, is freed: a refused response closes its call, which is neither
 * answered nor open, and its duration is not in sum_ns or the buckets
 * (design note 0020). Before 1.8 the field was reserved (zero) and such a
 * call stayed open until evicted; readers of older minors treat it as absent.
 */
#define RP_CALL_RING 32u
#define RP_CALL_ANSWERED (UINT64_C(1) << 63)

struct rp_call {
    RP_ATOMIC(uint64_t) id;       /* client: sequence number; server: request id digest; 0 = free */
    RP_ATOMIC(uint64_t) start_ns; /* CLOCK_MONOTONIC when rcl_send_request was called (client) or the request taken (server);
                                     with RP_CALL_ANSWERED in id: when its response was taken */
};

struct rp_calls {
    RP_ATOMIC(uint64_t) started;
    RP_ATOMIC(uint64_t) answered;
    RP_ATOMIC(uint64_t) unmatched;
    RP_ATOMIC(uint64_t) evicted;
    RP_ATOMIC(uint64_t) sum_ns;      /* sum of the answered calls' durations */
    RP_ATOMIC(uint64_t) send_failed; /* ABI 1.8, server: responses rcl_send_response refused */
    uint8_t reserved[16];
    RP_ATOMIC(uint32_t) buckets[RP_TIME_BUCKETS]; /* answered calls' durations (wrap modulo 2^32) */
    struct rp_call ring[RP_CALL_RING];
    uint8_t reserved2[32];
};

/*
 * RP_SECTION_LINKS (ABI 1.9, design note 0032): which input a callback's
 * publishes came from. A subscription callback whose message was taken just
 * before its callback_start on the same thread (rclcpp), or an rclpy take
 * and the publishes after it on its thread until its next take, wait, timer
 * call or service take (rclpy runs everything one wait made ready), links
 * that subscription (input) to every publisher it publishes on (output), once
 * per publish. Per link two durations, in the rp_timing buckets:
 *   age: CLOCK_REALTIME at the publish minus the input message's source
 *        timestamp (the writer's realtime clock: the input's transport plus
 *        the node's work; across hosts only as good as their clock sync);
 *   own: the publish minus the callback's start (rclpy: the take), on
 *        CLOCK_MONOTONIC: the node's own share.
 * The count of a link is the sum of own_buckets; a publish whose age could
 * not be measured (a source timestamp in the future: another host's clock)
 * counts in own and in unaged only.
 *
 * Records are claimed once per (input, output) pair and writing lane, in
 * table order: a writer moves state EMPTY -> CLAIMED by compare-and-exchange,
 * fills kind, flags, input, output, their generations and its lane, then
 * stores READY (release). A record of a private lane has one writer at a
 * time (the thread holding that lane), which adds with a plain load and
 * store; the shared lane's record (lane RP_LINK_SHARED_LANE) takes atomic
 * adds. Readers skip records that are not READY, and a record whose
 * generations are not the endpoints' current ones belongs to entities that
 * are gone; they add the records of one pair together (one per lane that ran
 * its callback, and two claimed by a race). Nothing is reset.
 */
#define RP_LINK_FLAG_RCLPY 1u /* linked by rclpy's rule (a take to the thread's next take, wait, timer call or service take): an async callback that awaits is not seen */

/*
 * A sampled link (kind RP_LINK_SAMPLED, CARET's use_latest_message): a
 * timer callback of a node published on output while that node's
 * subscription input had taken messages. age is from the latest message
 * taken before the timer's callback started (the best case); worst from
 * the first message taken since the previous sample of that input (the
 * worst case: the longest any input of the cycle waited), equal to age when
 * only one arrived. A message link's worst fields stay zero (worst = age).
 * Readers of a 1.9 segment whose stride is below worst_buckets' end read
 * no worst buckets.
 */
enum rp_link_kind {
    RP_LINK_MESSAGE = 1, /* the publish was made while handling that input message */
    RP_LINK_SAMPLED = 2, /* the publish was made by a timer of the input's node, from its latest message */
};

struct rp_link {
    RP_ATOMIC(uint32_t) state; /* rp_record_state, plus RP_LINK_CLAIMED while a writer fills it */
    uint16_t kind;             /* rp_link_kind */
    uint16_t flags;            /* RP_LINK_FLAG_* */
    uint32_t input;            /* endpoint index of the subscription */
    uint32_t output;           /* endpoint index of the publisher */
    uint32_t input_generation;
    uint32_t output_generation;
    RP_ATOMIC(uint64_t) age_sum_ns;
    RP_ATOMIC(uint64_t) own_sum_ns;
    RP_ATOMIC(uint64_t) unaged; /* linked publishes with no age (source timestamp ahead of this clock) */
    uint32_t lane;              /* the private lane of its writer, or RP_LINK_SHARED_LANE */
    uint8_t reserved[4];
    RP_ATOMIC(uint64_t) worst_sum_ns; /* RP_LINK_SAMPLED: the worst case's ages (see above) */
    RP_ATOMIC(uint32_t) age_buckets[RP_TIME_BUCKETS]; /* wrap modulo 2^32: readers diff them */
    RP_ATOMIC(uint32_t) own_buckets[RP_TIME_BUCKETS];
    RP_ATOMIC(uint32_t) worst_buckets[RP_TIME_BUCKETS]; /* RP_LINK_SAMPLED: by age from the cycle's first message */
};
#define RP_LINK_CLAIMED 2u
#define RP_LINK_SHARED_LANE UINT32_C(0xffffffff)

/*
 * RP_SECTION_BYTES (ABI 1.9, design note 0033): how many bytes an endpoint's
 * messages are, as serialized (the 4-byte encapsulation header plus the
 * XCDR1 body both rmw_cyclonedds and rmw_fastrtps send), learnt from the
 * type support given to rcl_publisher_init / rcl_subscription_init.
 *   A type without strings or sequences has one size, fixed_size: every
 *   counted message of it weighs that (no per-message work).
 *   Otherwise a random one in RP_BYTES_EVERY of the messages published
 *   (or taken), and every one until the first, is sized by walking its
 *   type's introspection members: the sum and count of those samples; a
 *   reader scales their mean by the count.
 *   A serialized publish (rcl_publish_serialized_message) or take knows its
 *   size: those go to exact_bytes and exact, always.
 * A publisher's bytes are its inter-process messages (counter slot
 * RP_SLOT_INTER): an intra-process delivery moves a pointer. For a window:
 * typed = counted - exact; bytes = exact_bytes + typed x (fixed_size, or
 * the samples' mean). Exact when fixed_size is set or typed is 0; sampled
 * otherwise; not measured when neither a fixed size nor a sample exists.
 * Records of a reused slot are zeroed before it is READY again.
 */
enum rp_bytes_flags {
    RP_BYTES_TYPED = 1u << 0,      /* the type support was read: fixed_size, or samples will come */
    RP_BYTES_UNREADABLE = 1u << 1, /* a type support was given but could not be read (reason: see doctor) */
    RP_BYTES_WIDE = 1u << 2,       /* the type has wchar/wstring members: their wire size is RMW-dependent (±2 bytes a char) */
};

struct rp_bytes {
    RP_ATOMIC(uint64_t) sampled_bytes; /* sum of the sampled messages' sizes */
    RP_ATOMIC(uint64_t) sampled;       /* how many messages were sampled */
    RP_ATOMIC(uint64_t) exact_bytes;   /* sum of the sizes of serialized publishes and takes */
    RP_ATOMIC(uint64_t) exact;         /* how many */
    RP_ATOMIC(uint32_t) fixed_size;    /* every typed message's size, or 0: it varies */
    RP_ATOMIC(uint32_t) flags;         /* rp_bytes_flags */
    RP_ATOMIC(uint32_t) max_size;      /* the largest message sized (sampled or exact) */
    RP_ATOMIC(uint32_t) every;         /* the sampling interval now (a big type samples less often) */
    uint8_t reserved[16];
};

/*
 * rp_header.env (ABI 1.5): the process's ROS environment when its segment
 * was made, as getenv saw it ("" and its bit clear: unset). Discovery and
 * middleware settings are per process; what they decide is in rp_qos.
 */
enum rp_env_flags {
    RP_ENV_DOMAIN_ID = 1u << 0,       /* ROS_DOMAIN_ID is set */
    RP_ENV_RMW = 1u << 1,             /* RMW_IMPLEMENTATION is set */
    RP_ENV_LOCALHOST_ONLY = 1u << 2,  /* ROS_LOCALHOST_ONLY is set */
    RP_ENV_DISCOVERY_RANGE = 1u << 3, /* ROS_AUTOMATIC_DISCOVERY_RANGE is set */
    RP_ENV_STATIC_PEERS = 1u << 4,    /* ROS_STATIC_PEERS is set */
    RP_ENV_CYCLONEDDS_URI = 1u << 5,  /* a Cyclone DDS configuration */
    RP_ENV_FASTDDS_PROFILE = 1u << 6, /* FASTRTPS_DEFAULT_PROFILES_FILE or FASTDDS_DEFAULT_PROFILES_FILE */
    RP_ENV_ZENOH_CONFIG = 1u << 7,    /* ZENOH_SESSION_CONFIG_URI or ZENOH_ROUTER_CONFIG_URI */
    RP_ENV_TRUNCATED = 1u << 8,       /* a value was longer than its field */
};

struct rp_env {
    uint32_t flags;
    uint32_t reserved;
    char domain_id[16];
    char rmw_implementation[40];
    char localhost_only[8];
    char discovery_range[24];
    char static_peers[256];
};

struct rp_section {
    uint32_t kind;
    uint32_t count;  /* number of records */
    uint64_t offset; /* from the start of the file */
    uint64_t stride; /* bytes per record */
};

struct rp_header {
    uint64_t magic;
    uint16_t abi_major;
    uint16_t abi_minor;
    uint32_t header_size;
    uint64_t total_size;
    RP_ATOMIC(uint32_t) state;
    int32_t pid;
    int32_t ppid;
    uint32_t distro;
    uint64_t start_mono_ns;    /* CLOCK_MONOTONIC at creation */
    uint64_t start_real_ns;    /* CLOCK_REALTIME at creation */
    uint64_t proc_start_ticks; /* /proc/self/stat field 22: identity across pid reuse */
    uint32_t lane_count;
    uint32_t section_count;
    uint32_t node_capacity;
    RP_ATOMIC(uint32_t) node_count;
    uint32_t endpoint_capacity;
    RP_ATOMIC(uint32_t) endpoint_count;
    RP_ATOMIC(uint64_t) dropped_nodes;     /* node table full */
    RP_ATOMIC(uint64_t) dropped_endpoints; /* endpoint table full: those are not counted */
    RP_ATOMIC(uint64_t) dropped_handles;   /* private handle map full */
    RP_ATOMIC(uint32_t) lanes_claimed;     /* private lanes ever handed to threads */
    uint32_t cmdline_len;                  /* bytes used in cmdline, NUL-separated args */
    RP_ATOMIC(uint64_t) cache_misses;      /* per-message lookups that missed the thread cache */
    struct rp_section sections[RP_MAX_SECTIONS];
    char exe[RP_EXE_MAX];
    char cmdline[RP_CMDLINE_MAX];
    struct rp_env env; /* ABI 1.5 */
    /* ABI 1.6: sections beyond the RP_MAX_SECTIONS in sections[] (readers of 1.5 and before see those only) */
    uint32_t ext_section_count;
    uint32_t reserved_ext;
    struct rp_section ext_sections[RP_MAX_SECTIONS];
    uint8_t reserved1[RP_HEADER_SIZE - 320 - RP_EXE_MAX - RP_CMDLINE_MAX - 352 - 8 - 24 * RP_MAX_SECTIONS];
};

struct rp_node {
    RP_ATOMIC(uint32_t) state;
    uint32_t flags;
    uint64_t created_mono_ns;
    char name[RP_NAME_MAX]; /* fully qualified: namespace + "/" + name */
};

struct rp_endpoint {
    RP_ATOMIC(uint32_t) state;
    uint16_t kind;
    uint16_t reserved0;
    RP_ATOMIC(uint32_t) node_index; /* may be filled in after publication (Humble /rosout) */
    RP_ATOMIC(uint32_t) flags;
    uint64_t aux;             /* publisher/subscription: QoS depth; timer: period ns */
    uint64_t created_mono_ns; /* rates of a young endpoint are taken over its lifetime */
    RP_ATOMIC(uint32_t) generation; /* ABI 1.3: 0 for a slot's first entity, +1 at every reuse */
    uint32_t reserved0b;
    uint64_t base[3];               /* ABI 1.3: lane sums of counter slots 0..2 when this entity took the slot */
    char name[RP_NAME_MAX];
};

#ifndef __cplusplus
_Static_assert(sizeof(struct rp_section) == 24, "rp_section size");
_Static_assert(sizeof(struct rp_header) == RP_HEADER_SIZE, "rp_header size");
_Static_assert(__builtin_offsetof(struct rp_header, sections) == 128, "sections offset");
_Static_assert(__builtin_offsetof(struct rp_header, exe) == 320, "exe offset");
_Static_assert(sizeof(struct rp_node) == 272, "rp_node size");
_Static_assert(sizeof(struct rp_endpoint) == 320, "rp_endpoint size");
_Static_assert(sizeof(struct rp_gap) == 32 + 4 * RP_GAP_BUCKETS, "rp_gap size");
_Static_assert(sizeof(struct rp_timing) == 48 + 8 * RP_TIME_BUCKETS + RP_SYMBOL_MAX + 16 * RP_TIME_BUCKET_WORDS, "rp_timing size");
_Static_assert(sizeof(struct rp_thread) == 128, "rp_thread size");
_Static_assert(sizeof(struct rp_qos) == 256, "rp_qos size");
_Static_assert(sizeof(struct rp_env) == 352, "rp_env size");
_Static_assert(sizeof(struct rp_link) == 64 + 12 * RP_TIME_BUCKETS, "rp_link size");
_Static_assert(sizeof(struct rp_bytes) == 64, "rp_bytes size");
_Static_assert(sizeof(struct rp_calls) == 64 + 4 * RP_TIME_BUCKETS + 16 * RP_CALL_RING + 32, "rp_calls size");
#endif

#endif /* ROS2_PULSE_SEGMENT_H */
