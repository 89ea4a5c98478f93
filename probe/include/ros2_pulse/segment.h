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
#define RP_ABI_MINOR 4

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

struct rp_gap {
    RP_ATOMIC(uint64_t) last_mono_ns; /* CLOCK_MONOTONIC of the last message; 0 = none yet */
    RP_ATOMIC(uint64_t) sum_ns;       /* sum of all gaps counted in the buckets */
    RP_ATOMIC(uint32_t) flags;        /* RP_GAP_INTRA_PUBLISHER */
    uint32_t reserved;
    RP_ATOMIC(uint32_t) buckets[RP_GAP_BUCKETS]; /* wrap modulo 2^32: readers diff them */
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
 */
#define RP_TIME_BUCKETS 200u
#define RP_TIME_SUB_BITS 3u

#define RP_SYMBOL_MAX 128u

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
    uint8_t reserved1[RP_HEADER_SIZE - 320 - RP_EXE_MAX - RP_CMDLINE_MAX];
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
_Static_assert(sizeof(struct rp_gap) == 24 + 4 * RP_GAP_BUCKETS, "rp_gap size");
_Static_assert(sizeof(struct rp_timing) == 48 + 8 * RP_TIME_BUCKETS + RP_SYMBOL_MAX, "rp_timing size");
_Static_assert(sizeof(struct rp_thread) == 128, "rp_thread size");
#endif

#endif /* ROS2_PULSE_SEGMENT_H */
