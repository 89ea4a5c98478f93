/*
 * The stand-in's message package, sim_msgs, as rosidl lays out its C
 * messages (design note 0033): what the probe's size walk reads through the
 * introspection type support. A string and a sequence keep their length in
 * their second word, as rosidl_runtime_c's and libstdc++'s do; the stand-in
 * serves the same layout to rclcpp's (_cpp) and rclpy's (_c) nodes.
 */
#ifndef SIM_MSGS_H
#define SIM_MSGS_H

#include <stddef.h>
#include <stdint.h>

/* sim_msgs/msg/Stamp: simgraph's struct msg, every primitive: a fixed 40-byte body. */
struct sim_msgs_stamp {
    int64_t src_real_ns;
    uint64_t seq;
    int32_t proc;
    int32_t pub;
    int32_t intra;
    uint32_t ring;
    int64_t origin_real_ns;
};

struct sim_msgs_string {
    char *data;
    size_t size;
    size_t capacity;
};

struct sim_msgs_octets {
    uint8_t *data;
    size_t size;
    size_t capacity;
};

/* sim_msgs/msg/Sample (the graphs' default type): a stamp, a frame id and a payload. */
struct sim_msgs_sample {
    struct sim_msgs_stamp stamp;
    struct sim_msgs_string frame_id;
    struct sim_msgs_octets data;
};

/* Serialized sizes, 4-byte header included: the truth the probe is judged by. */
#define SIM_MSGS_STAMP_SIZE 44u
static inline uint64_t sim_msgs_sample_size(size_t frame_len, size_t data_len)
{
    uint64_t off = 40;                    /* the stamp */
    off = ((off + 3) & ~3ull) + 4 + frame_len + 1; /* frame_id: length, chars, NUL */
    off = ((off + 3) & ~3ull) + 4 + data_len;      /* data: length, octets */
    return 4 + off;
}

#endif
