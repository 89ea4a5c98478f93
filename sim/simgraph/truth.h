/*
 * Ground truth: what a simgraph process really did, counted by the graph
 * itself, so that tests judge pulse against the graph's own counts rather
 * than against nominal rate x time (a loaded machine really skips timer
 * periods). Read by internal/simtruth; design note 0016.
 *
 * One file per process, DIR/truth-<pid>.bin, mapped MAP_SHARED: the counts
 * survive a SIGKILL and can be read at any moment. Every count is bumped
 * with release order just *after* the tracepoint it mirrors, so at any
 * instant the probe's count is the truth's count plus at most the messages
 * one writer thread has in flight between the two.
 */
#ifndef SIMGRAPH_TRUTH_H
#define SIMGRAPH_TRUTH_H

#include <stdatomic.h>
#include <stdint.h>

#define TRUTH_MAGIC "SIMTRUTH"
#define TRUTH_VERSION 2u
#define TRUTH_CAPACITY 4096u
#define TRUTH_NAME 128

/* What each count of a record means, by kind. */
enum truth_count {
    TC_PUB_INTER = 0, /* pub: messages that went out through rcl (rcl_publish, loaned or serialized) */
    TC_PUB_INTRA = 1, /* pub: publishes that took rclcpp's intra-process path */
    TC_SUB_INTER = 0, /* sub: messages from the middleware that reached the user (callback; rclpy: the take) */
    TC_SUB_INTRA = 1, /* sub: intra-process messages that reached the callback */
    TC_SUB_TAKEN = 2, /* sub: rmw_take calls that took a message (includes discarded own intra copies) */
    TC_SUB_LOST = 3,  /* sub: samples the best-effort reader never got (drop=) */
    TC_FIRES = 0,     /* timer: callbacks run; service: requests taken; client: requests sent */
    TC_ANSWERED = 1,  /* service: responses sent; client: responses taken */
    TC_LATE = 2,      /* client: responses taken later than its timeout= */
    TC_SEND_FAILED = 3, /* service: responses rcl_send_response refused (RCL_RET_TIMEOUT: the client had gone) */
};

/* What a record's timing[] holds: the graph's own clock around each callback
 * (read just before callback_start and just after callback_end, so it
 * brackets the probe's) and each timer call against rcl's schedule. */
enum truth_timing {
    TT_CALLBACK_NS = 0,  /* sum of callback durations */
    TT_CALLBACKS = 1,    /* callbacks timed (ended) */
    TT_CALLBACK_MAX = 2, /* the longest */
    TT_OVERRUNS = 3,     /* timer: callbacks longer than the period */
    TT_LATE_NS = 4,      /* timer: sum of actual - scheduled call time */
    TT_LATE_N = 5,       /* timer: calls */
    TT_LATE_MAX = 6,     /* timer: the latest call */
    TT_THROWN = 7,       /* callbacks that threw: started, never ended */
    TT_CALL_NS = 4,      /* service: sum of take-to-response times; client: sum of round trips */
    TT_CALL_N = 5,       /* service, client: calls answered and timed */
    TT_CALL_MAX = 6,     /* service, client: the longest */
    TT_GAP_MAX = 2,      /* pub: the longest gap between two of its publishes, read just before each */
    TT_BYTES = 3,        /* pub: serialized bytes of its messages that went out through rcl; sub: of the middleware messages it took */
    TT_E2E_NS = 4,       /* sub: sum of each delivered message's age since its chain's first publish (realtime) */
    TT_E2E_N = 5,        /* sub: messages so timed */
    TT_E2E_MAX = 6,      /* sub: the oldest */
};

struct truth_header {
    char magic[8];
    uint32_t version;
    uint32_t capacity;
    _Atomic uint32_t used;   /* records published (each written before used moves past it) */
    _Atomic uint32_t exited; /* 1 once the process returned normally: every count is final */
    int32_t pid;
    int32_t ppid;
    char process[32];
};

struct truth_record {
    char kind[8];  /* "pub", "sub", "timer", "service", "client" */
    char lang[8];  /* the node's client library: "cpp" (rclcpp) or "py" (rclpy) */
    char topic[TRUTH_NAME]; /* topic, service name; "" for a timer */
    char node[TRUTH_NAME];  /* fully qualified node name */
    _Atomic uint64_t count[4];
    _Atomic uint64_t timing[8]; /* enum truth_timing (version 2) */
};

/* Opens DIR/truth-<pid>.bin; dir NULL or "" keeps truth off (every call a no-op). */
void truth_open(const char *dir, const char *process);
/* After fork() without exec: the child gets a file of its own with the same records at zero. */
void truth_after_fork(void);
/* A new record; returns its slot, or -1 (truth off or full). */
int truth_add(const char *kind, const char *lang, const char *node, const char *topic);
void truth_inc(int slot, enum truth_count c);
/* One callback of slot's entity that ran d_ns (a timer's: overran when longer than period_ns). */
void truth_callback(int slot, uint64_t d_ns, uint64_t period_ns);
/* One callback of slot that threw (no callback_end). */
void truth_thrown(int slot);
/* One timer call of slot, late_ns after its scheduled time. */
void truth_late(int slot, uint64_t late_ns);
/* One answered call of slot's service (take to response) or client (round trip) that took d_ns. */
void truth_call(int slot, uint64_t d_ns);
/* One message delivered to slot's subscription age_ns after its chain's first publish (relay=). */
void truth_e2e(int slot, uint64_t age_ns);

/* A publisher's message through rcl, or a subscription's from the middleware, of size bytes serialized (TT_BYTES). */
void truth_bytes(int slot, uint64_t size);
/* One relayed message published by slot's publisher age_ns after its chain's first publish (relay=):
 * appended to DIR/ages-<pid>.bin as {uint32 slot, uint32 tag, uint64 age_ns}, one write each, so the
 * tests read each message's end-to-end latency, not only its sum (issue 47: p50 and p99). Tag 0. */
void truth_age(int slot, uint64_t age_ns);
enum { AGE_RELAYED = 0, AGE_SAMPLED_BEST = 1, AGE_SAMPLED_WORST = 2 };
/* A timer's publish on slot's publisher while its node's subscription had taken messages (a sampled
 * link, issue 47 rule 3): the age of the latest of them (tag 1) and of the first since the timer's
 * previous publish (tag 2), from their source timestamps; records as truth_age's. */
void truth_sampled(int slot, uint64_t best_ns, uint64_t worst_ns);
/* A publish at now (the graph's clock): its gap after the latest publish before it, read from *last
 * (any thread); a publish whose clock read is older than *last's spans no gap, as the probe's. */
void truth_publish_at(int slot, _Atomic uint64_t *last, uint64_t now);
/* The process is returning normally: its counts are final. */
void truth_exit(void);

#endif
