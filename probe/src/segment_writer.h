/* Creating and filling this process's segment (init-time code, under the probe mutex). */
#ifndef ROS2_PULSE_SEGMENT_WRITER_H
#define ROS2_PULSE_SEGMENT_WRITER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "ros2_pulse/segment.h"

#define RP_DEFAULT_BASE "/dev/shm"
#define RP_DEFAULT_ENDPOINTS 512u
#define RP_MAX_ENDPOINTS_LIMIT 65536u
#define RP_DEFAULT_BYTES_EVERY 16u /* design note 0033: the walk's cost per message under +25 ns */
#define RP_MAX_BYTES_EVERY 65536u
/* Lanes 0..RP_LANES-2 belong to one thread each; the last lane is shared and atomic. */
#define RP_LANES 16u

struct rp_config {
    bool quiet;
    bool gaps;    /* ROS_TOPIC_STATS_JITTER=1: inter-arrival histograms (one clock read per message) */
    bool latency; /* ROS_TOPIC_STATS_LATENCY=1: receive latency histograms (one realtime read per take) */
    bool timing;  /* unless ROS_PULSE_TIMING=0: callback durations, timer lateness, thread busy */
    bool links;   /* ROS_PULSE_LINKS=1 (needs timing): which input each callback's publishes came from */
    bool bytes;   /* ROS_PULSE_BYTES=1: message sizes (design note 0033) */
    uint32_t bytes_every; /* ROS_PULSE_BYTES_EVERY: one message in this many is sized (a power of two) */
    bool dir_explicit;
    uint32_t endpoint_capacity;
    uint32_t node_capacity;
    char dir[4096];
};

struct rp_segment {
    struct rp_header *header;
    struct rp_node *nodes;
    struct rp_endpoint *endpoints;
    _Atomic uint64_t *lanes;
    struct rp_gap *gaps;    /* NULL unless gap tracking is on */
    struct rp_gap *latency; /* NULL unless latency tracking is on */
    struct rp_timing *timing;  /* NULL when timing is off */
    struct rp_thread *threads; /* one per private lane; NULL when timing is off */
    struct rp_qos *qos;        /* one per endpoint slot (ABI 1.5) */
    struct rp_calls *calls;    /* one per endpoint slot (ABI 1.6); NULL when timing is off */
    struct rp_link *links;     /* link_capacity records (ABI 1.9); NULL unless links are on */
    uint32_t link_capacity;
    struct rp_bytes *bytes; /* one per endpoint slot (ABI 1.9); NULL unless bytes are on */
    uint64_t size;
    int fd;
    char path[4200];
};

/* Reads the environment once. Bad values print one line and fall back to defaults. */
void rp_config_load(struct rp_config *cfg);

/* One line on stderr, prefixed "[ros2_pulse] ", written with a single write(2). */
void rp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Links a segment holds: a few per node (design note 0032). */
#define RP_LINK_CAPACITY(ep_cap) ((ep_cap) / 2u)

uint64_t rp_segment_size(const struct rp_config *cfg, uint32_t lanes);

/* Creates, reserves, maps and locks a new segment. On failure prints why and returns false. */
bool rp_segment_create(struct rp_segment *seg, const struct rp_config *cfg, uint32_t distro);

/* Appends a record; returns its index or -1 when the table is full (counted in the header). */
int32_t rp_segment_add_node(struct rp_segment *seg, const char *ns, const char *name);
int32_t rp_segment_add_endpoint(struct rp_segment *seg, uint16_t kind, const char *name, uint64_t aux,
                                uint32_t node_index);

/*
 * Gives retired slot idx to a new entity (ABI 1.3): base[] takes the slot's lane sums, the
 * generation goes up, histograms start afresh. Returns idx, or -1 for a slot never used.
 */
int32_t rp_segment_reuse_endpoint(struct rp_segment *seg, uint32_t idx, uint16_t kind, const char *name, uint64_t aux,
                                  uint32_t node_index);

/* Stores the function name of endpoint idx's callbacks, unless it has one already (readers see it complete or not at all). */
void rp_segment_name_callback(struct rp_segment *seg, uint32_t idx, const char *symbol);

/* Stores what endpoint idx is (QoS, type, rmw, domain) under the record's seqlock. */
void rp_segment_set_qos(struct rp_segment *seg, uint32_t idx, const struct rp_qos *facts);

/* After fork: copies the parent's node and endpoint records (not counters) at the same indices. */
bool rp_segment_clone_records(struct rp_segment *dst, const struct rp_segment *src);

#endif /* ROS2_PULSE_SEGMENT_WRITER_H */
