/*
 * Prints the segment ABI as the C compiler lays it out: one line per field,
 * "struct.field offset size", plus constants. internal/segment/abi_test.go
 * compares this with the Go mirror, field by field.
 */
#include <stddef.h>
#include <stdio.h>

#include "ros2_pulse/segment.h"

#define F(s, f) printf("%s.%s %zu %zu\n", #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f))
#define C(name) printf("const %s %llu\n", #name, (unsigned long long)(name))

int main(void)
{
    printf("sizeof rp_header %zu\n", sizeof(struct rp_header));
    printf("sizeof rp_section %zu\n", sizeof(struct rp_section));
    printf("sizeof rp_node %zu\n", sizeof(struct rp_node));
    printf("sizeof rp_endpoint %zu\n", sizeof(struct rp_endpoint));
    printf("sizeof rp_gap %zu\n", sizeof(struct rp_gap));
    F(rp_gap, last_mono_ns); F(rp_gap, sum_ns); F(rp_gap, flags); F(rp_gap, reserved); F(rp_gap, buckets); F(rp_gap, first_mono_ns);
    printf("sizeof rp_timing %zu\n", sizeof(struct rp_timing));
    F(rp_timing, sum_ns); F(rp_timing, unended); F(rp_timing, overruns); F(rp_timing, late_sum_ns);
    F(rp_timing, period_ns); F(rp_timing, symbol_len); F(rp_timing, symbol_truncated); F(rp_timing, buckets);
    F(rp_timing, late_buckets); F(rp_timing, symbol); F(rp_timing, used); F(rp_timing, late_used);
    printf("sizeof rp_thread %zu\n", sizeof(struct rp_thread));
    F(rp_thread, seq); F(rp_thread, tid); F(rp_thread, busy_ns); F(rp_thread, open_ns); F(rp_thread, callbacks);
    F(rp_thread, endpoint_index); F(rp_thread, reserved); F(rp_thread, name); F(rp_thread, wait_ns);
    F(rp_thread, wait_open_ns); F(rp_thread, waits); F(rp_thread, reserved2);
    printf("sizeof rp_qos %zu\n", sizeof(struct rp_qos));
    F(rp_qos, seq); F(rp_qos, generation); F(rp_qos, history); F(rp_qos, reliability); F(rp_qos, durability);
    F(rp_qos, liveliness); F(rp_qos, depth); F(rp_qos, deadline_ns); F(rp_qos, lifespan_ns); F(rp_qos, lease_ns);
    F(rp_qos, domain_id); F(rp_qos, flags); F(rp_qos, rmw); F(rp_qos, type); F(rp_qos, reserved);
    printf("sizeof rp_call %zu\n", sizeof(struct rp_call));
    F(rp_call, id); F(rp_call, start_ns);
    printf("sizeof rp_calls %zu\n", sizeof(struct rp_calls));
    F(rp_calls, started); F(rp_calls, answered); F(rp_calls, unmatched); F(rp_calls, evicted); F(rp_calls, sum_ns);
    F(rp_calls, send_failed);
    F(rp_calls, reserved); F(rp_calls, buckets); F(rp_calls, ring); F(rp_calls, reserved2);
    printf("sizeof rp_link %zu\n", sizeof(struct rp_link));
    F(rp_link, state); F(rp_link, kind); F(rp_link, flags); F(rp_link, input); F(rp_link, output);
    F(rp_link, input_generation); F(rp_link, output_generation); F(rp_link, age_sum_ns); F(rp_link, own_sum_ns);
    F(rp_link, unaged); F(rp_link, lane); F(rp_link, reserved); F(rp_link, worst_sum_ns); F(rp_link, age_buckets);
    F(rp_link, own_buckets); F(rp_link, worst_buckets);
    printf("sizeof rp_bytes %zu\n", sizeof(struct rp_bytes));
    F(rp_bytes, sampled_bytes); F(rp_bytes, sampled); F(rp_bytes, exact_bytes); F(rp_bytes, exact);
    F(rp_bytes, fixed_size); F(rp_bytes, flags); F(rp_bytes, max_size); F(rp_bytes, every); F(rp_bytes, reserved);
    printf("sizeof rp_env %zu\n", sizeof(struct rp_env));
    F(rp_env, flags); F(rp_env, reserved); F(rp_env, domain_id); F(rp_env, rmw_implementation);
    F(rp_env, localhost_only); F(rp_env, discovery_range); F(rp_env, static_peers);
    F(rp_section, kind); F(rp_section, count); F(rp_section, offset); F(rp_section, stride);
    F(rp_header, magic); F(rp_header, abi_major); F(rp_header, abi_minor); F(rp_header, header_size);
    F(rp_header, total_size); F(rp_header, state); F(rp_header, pid); F(rp_header, ppid);
    F(rp_header, distro); F(rp_header, start_mono_ns); F(rp_header, start_real_ns);
    F(rp_header, proc_start_ticks); F(rp_header, lane_count); F(rp_header, section_count);
    F(rp_header, node_capacity); F(rp_header, node_count); F(rp_header, endpoint_capacity);
    F(rp_header, endpoint_count); F(rp_header, dropped_nodes); F(rp_header, dropped_endpoints);
    F(rp_header, dropped_handles); F(rp_header, lanes_claimed); F(rp_header, cmdline_len);
    F(rp_header, cache_misses); F(rp_header, sections); F(rp_header, exe); F(rp_header, cmdline);
    F(rp_header, env); F(rp_header, ext_section_count); F(rp_header, reserved_ext);
    F(rp_header, ext_sections); F(rp_header, reserved1);
    F(rp_node, state); F(rp_node, flags); F(rp_node, created_mono_ns); F(rp_node, name);
    F(rp_endpoint, state); F(rp_endpoint, kind); F(rp_endpoint, reserved0); F(rp_endpoint, node_index);
    F(rp_endpoint, flags); F(rp_endpoint, aux); F(rp_endpoint, created_mono_ns); F(rp_endpoint, generation);
    F(rp_endpoint, reserved0b); F(rp_endpoint, base);
    F(rp_endpoint, name);
    C(RP_MAGIC); C(RP_ABI_MAJOR); C(RP_ABI_MINOR); C(RP_HEADER_SIZE); C(RP_MAX_SECTIONS);
    C(RP_EXE_MAX); C(RP_CMDLINE_MAX); C(RP_NAME_MAX); C(RP_COUNTERS_PER_ENDPOINT); C(RP_NO_NODE);
    C(RP_SEGMENT_INITIALIZING); C(RP_SEGMENT_READY);
    C(RP_DISTRO_UNKNOWN); C(RP_DISTRO_HUMBLE); C(RP_DISTRO_JAZZY); C(RP_DISTRO_KILTED);
    C(RP_SECTION_NODES); C(RP_SECTION_ENDPOINTS); C(RP_SECTION_LANES); C(RP_SECTION_GAPS); C(RP_SECTION_LATENCY);
    C(RP_SECTION_TIMING); C(RP_SECTION_THREADS); C(RP_SECTION_QOS); C(RP_SECTION_CALLS); C(RP_SECTION_LINKS); C(RP_LINK_MESSAGE); C(RP_LINK_SAMPLED); C(RP_LINK_CLAIMED); C(RP_LINK_FLAG_RCLPY); C(RP_LINK_SHARED_LANE); C(RP_SECTION_BYTES); C(RP_BYTES_TYPED); C(RP_BYTES_UNREADABLE); C(RP_BYTES_WIDE); C(RP_CALL_RING); C(RP_CALL_ANSWERED); C(RP_TYPE_MAX); C(RP_RMW_MAX);
    C(RP_NO_DOMAIN); C(RP_DURATION_INFINITE); C(RP_QOS_ACTUAL); C(RP_QOS_TYPE_TRUNCATED); C(RP_QOS_AVOID_ROS_NS);
    C(RP_ENV_DOMAIN_ID); C(RP_ENV_RMW); C(RP_ENV_LOCALHOST_ONLY); C(RP_ENV_DISCOVERY_RANGE); C(RP_ENV_STATIC_PEERS);
    C(RP_ENV_CYCLONEDDS_URI); C(RP_ENV_FASTDDS_PROFILE); C(RP_ENV_ZENOH_CONFIG); C(RP_ENV_TRUNCATED); C(RP_TIME_BUCKETS); C(RP_TIME_SUB_BITS); C(RP_SYMBOL_MAX); C(RP_TIME_BUCKET_WORDS);
    C(RP_GAP_BUCKETS); C(RP_GAP_SUB_BITS); C(RP_GAP_INTRA_PUBLISHER);
    C(RP_RECORD_EMPTY); C(RP_RECORD_READY);
    C(RP_KIND_PUBLISHER); C(RP_KIND_SUBSCRIPTION); C(RP_KIND_TIMER); C(RP_KIND_SERVICE); C(RP_KIND_CLIENT);
    C(RP_EP_NAME_TRUNCATED); C(RP_EP_RETIRED); C(RP_EP_RCLCPP);
    C(RP_SLOT_INTER); C(RP_SLOT_INTRA); C(RP_SLOT_TAKEN); C(RP_SLOT_RESERVED);
    return 0;
}
