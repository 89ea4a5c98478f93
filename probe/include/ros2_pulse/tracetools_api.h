/*
 * The tracetools function contract, as shipped by ros2_tracing, one X-macro
 * entry per tracepoint: RP_TP(name, (parameter list), (argument list)).
 * Source: shared/reference/tracetools-facts.md section 2.
 *
 * Used by the probe (to declare the functions it interposes) and by the
 * stand-in libtracetools and simgraph in sim/ (to export and call them).
 *
 * RP_TRACEPOINTS_COMMON: present in Humble, Jazzy and Kilted (27 + rmw_publish).
 * RP_TRACEPOINTS_JAZZY:  added in Iron/Jazzy (ros2_tracing >= 6).
 * RP_TRACEPOINTS_KILTED: added in 8.5.0 (Kilted).
 * ros_trace_rmw_publish changes signature in Jazzy and is declared apart.
 */
#ifndef ROS2_PULSE_TRACETOOLS_API_H
#define ROS2_PULSE_TRACETOOLS_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RP_TRACEPOINTS_COMMON(RP_TP)                                                                  \
    RP_TP(rcl_init, (const void *context_handle), (context_handle))                                    \
    RP_TP(rcl_node_init,                                                                               \
          (const void *node_handle, const void *rmw_handle, const char *node_name,                    \
           const char *node_namespace),                                                                \
          (node_handle, rmw_handle, node_name, node_namespace))                                        \
    RP_TP(rmw_publisher_init, (const void *rmw_publisher_handle, const uint8_t *gid),                 \
          (rmw_publisher_handle, gid))                                                                 \
    RP_TP(rcl_publisher_init,                                                                          \
          (const void *publisher_handle, const void *node_handle, const void *rmw_publisher_handle,   \
           const char *topic_name, const size_t queue_depth),                                          \
          (publisher_handle, node_handle, rmw_publisher_handle, topic_name, queue_depth))              \
    RP_TP(rclcpp_publish, (const void *publisher_handle, const void *message),                        \
          (publisher_handle, message))                                                                 \
    RP_TP(rcl_publish, (const void *publisher_handle, const void *message), (publisher_handle, message)) \
    RP_TP(rmw_subscription_init, (const void *rmw_subscription_handle, const uint8_t *gid),           \
          (rmw_subscription_handle, gid))                                                              \
    RP_TP(rcl_subscription_init,                                                                       \
          (const void *subscription_handle, const void *node_handle,                                   \
           const void *rmw_subscription_handle, const char *topic_name, const size_t queue_depth),     \
          (subscription_handle, node_handle, rmw_subscription_handle, topic_name, queue_depth))        \
    RP_TP(rclcpp_subscription_init, (const void *subscription_handle, const void *subscription),      \
          (subscription_handle, subscription))                                                         \
    RP_TP(rclcpp_subscription_callback_added, (const void *subscription, const void *callback),       \
          (subscription, callback))                                                                    \
    RP_TP(rmw_take,                                                                                    \
          (const void *rmw_subscription_handle, const void *message, int64_t source_timestamp,        \
           const bool taken),                                                                          \
          (rmw_subscription_handle, message, source_timestamp, taken))                                 \
    RP_TP(rcl_take, (const void *message), (message))                                                  \
    RP_TP(rclcpp_take, (const void *message), (message))                                               \
    RP_TP(rcl_service_init,                                                                            \
          (const void *service_handle, const void *node_handle, const void *rmw_service_handle,       \
           const char *service_name),                                                                  \
          (service_handle, node_handle, rmw_service_handle, service_name))                             \
    RP_TP(rclcpp_service_callback_added, (const void *service_handle, const void *callback),          \
          (service_handle, callback))                                                                  \
    RP_TP(rcl_client_init,                                                                             \
          (const void *client_handle, const void *node_handle, const void *rmw_client_handle,         \
           const char *service_name),                                                                  \
          (client_handle, node_handle, rmw_client_handle, service_name))                               \
    RP_TP(rcl_timer_init, (const void *timer_handle, int64_t period), (timer_handle, period))          \
    RP_TP(rclcpp_timer_callback_added, (const void *timer_handle, const void *callback),              \
          (timer_handle, callback))                                                                    \
    RP_TP(rclcpp_timer_link_node, (const void *timer_handle, const void *node_handle),                \
          (timer_handle, node_handle))                                                                 \
    RP_TP(rclcpp_callback_register, (const void *callback, const char *function_symbol),              \
          (callback, function_symbol))                                                                 \
    RP_TP(callback_start, (const void *callback, const bool is_intra_process),                        \
          (callback, is_intra_process))                                                                \
    RP_TP(callback_end, (const void *callback), (callback))                                            \
    RP_TP(rcl_lifecycle_state_machine_init, (const void *node_handle, const void *state_machine),     \
          (node_handle, state_machine))                                                                \
    RP_TP(rcl_lifecycle_transition,                                                                    \
          (const void *state_machine, const char *start_label, const char *goal_label),               \
          (state_machine, start_label, goal_label))                                                    \
    RP_TP(rclcpp_executor_get_next_ready, (void), ())                                                  \
    RP_TP(rclcpp_executor_wait_for_work, (const int64_t timeout), (timeout))                          \
    RP_TP(rclcpp_executor_execute, (const void *handle), (handle))

#define RP_TRACEPOINTS_JAZZY(RP_TP)                                                                   \
    RP_TP(rclcpp_intra_publish, (const void *publisher_handle, const void *message),                  \
          (publisher_handle, message))                                                                 \
    RP_TP(rclcpp_ipb_to_subscription, (const void *ipb, const void *subscription), (ipb, subscription)) \
    RP_TP(rclcpp_buffer_to_ipb, (const void *buffer, const void *ipb), (buffer, ipb))                 \
    RP_TP(rclcpp_construct_ring_buffer, (const void *buffer, const uint64_t capacity),                \
          (buffer, capacity))                                                                          \
    RP_TP(rclcpp_ring_buffer_enqueue,                                                                  \
          (const void *buffer, const uint64_t index, const uint64_t size, const bool overwritten),    \
          (buffer, index, size, overwritten))                                                          \
    RP_TP(rclcpp_ring_buffer_dequeue, (const void *buffer, const uint64_t index, const uint64_t size), \
          (buffer, index, size))                                                                       \
    RP_TP(rclcpp_ring_buffer_clear, (const void *buffer), (buffer))

#define RP_TRACEPOINTS_KILTED(RP_TP)                                                                  \
    RP_TP(rmw_take_request,                                                                            \
          (const void *rmw_service_handle, const void *request, const uint8_t *client_gid,            \
           int64_t sequence_number, const bool taken),                                                 \
          (rmw_service_handle, request, client_gid, sequence_number, taken))                           \
    RP_TP(rmw_send_response,                                                                           \
          (const void *rmw_service_handle, const void *response, const uint8_t *client_gid,           \
           int64_t sequence_number, int64_t timestamp),                                                \
          (rmw_service_handle, response, client_gid, sequence_number, timestamp))                      \
    RP_TP(rmw_client_init, (const void *rmw_client_handle, const uint8_t *gid), (rmw_client_handle, gid)) \
    RP_TP(rmw_send_request, (const void *rmw_client_handle, const void *request, int64_t sequence_number), \
          (rmw_client_handle, request, sequence_number))                                               \
    RP_TP(rmw_take_response,                                                                           \
          (const void *rmw_client_handle, const void *response, int64_t sequence_number,              \
           int64_t source_timestamp, const bool taken),                                                \
          (rmw_client_handle, response, sequence_number, source_timestamp, taken))

/* ros_trace_rmw_publish: Humble/Iron take the message only; Jazzy+ take three arguments. */
typedef void (*rp_rmw_publish_humble_fn)(const void *message);
typedef void (*rp_rmw_publish_jazzy_fn)(const void *rmw_publisher_handle, const void *message,
                                        int64_t timestamp);

/*
 * Two rcl API functions (librcl.so, not libtracetools) the probe wraps: on
 * Humble they publish without any tracepoint; on Jazzy+ they fire
 * rcl_publish inside (tracetools-facts.md §5). rcl_publisher_t * and
 * rmw_publisher_allocation_t * are opaque here; rcl_ret_t is int32_t.
 */
typedef int32_t rp_rcl_ret_t;
#define RP_RCL_RET_OK 0
#define RP_RCL_RET_ERROR 1
#define RP_RCL_RET_INVALID_ARGUMENT 11
#define RP_RCL_RET_PUBLISHER_INVALID 300
typedef rp_rcl_ret_t (*rp_rcl_publish_fn)(const void *publisher, const void *message, void *allocation);
rp_rcl_ret_t rcl_publish_loaned_message(const void *publisher, void *ros_message, void *allocation);
rp_rcl_ret_t rcl_publish_serialized_message(const void *publisher, const void *serialized_message, void *allocation);
/* The same on Humble-Kilted; Jazzy's RMWs fire rmw_take inside with the serialized message (design note 0033). */
typedef rp_rcl_ret_t (*rp_rcl_take_serialized_fn)(const void *subscription, void *serialized_message, void *message_info,
                                                  void *allocation);
rp_rcl_ret_t rcl_take_serialized_message(const void *subscription, void *serialized_message, void *message_info,
                                         void *allocation);

/*
 * The rcl timer calls the probe wraps to see when each timer is called
 * against its schedule: rclcpp (Humble) and rclpy call rcl_timer_call;
 * rclcpp and rclpy from Jazzy on call rcl_timer_call_with_info, whose info
 * holds the scheduled and the actual call time (rcl/timer.h). A timer's
 * lateness before a plain rcl_timer_call is -rcl_timer_get_time_until_next_call.
 */
#define RP_RCL_RET_TIMER_CANCELED 801
typedef struct {
    int64_t expected_call_time; /* rcl_time_point_value_t: ns of the timer's clock */
    int64_t actual_call_time;
} rp_rcl_timer_call_info_t;
typedef rp_rcl_ret_t (*rp_rcl_timer_call_fn)(void *timer);
typedef rp_rcl_ret_t (*rp_rcl_timer_call_with_info_fn)(void *timer, rp_rcl_timer_call_info_t *info);
typedef rp_rcl_ret_t (*rp_rcl_timer_get_time_until_next_call_fn)(const void *timer, int64_t *time_until_next_call);
rp_rcl_ret_t rcl_timer_call(void *timer);
rp_rcl_ret_t rcl_timer_call_with_info(void *timer, rp_rcl_timer_call_info_t *info);
rp_rcl_ret_t rcl_timer_get_time_until_next_call(const void *timer, int64_t *time_until_next_call);

/* rcl_wait(rcl_wait_set_t *, int64_t timeout): every executor (rclcpp, rclpy) waits through it;
 * the probe times it to tell an executor thread's idle time from its work. */
typedef rp_rcl_ret_t (*rp_rcl_wait_fn)(void *wait_set, int64_t timeout);
rp_rcl_ret_t rcl_wait(void *wait_set, int64_t timeout);

/*
 * Publisher and subscription creation (rcl/publisher.h, subscription.h; the
 * same on Humble, Jazzy and Kilted): the probe wraps the two init functions
 * to learn, once each returned RCL_RET_OK, what the endpoint is (qos.c).
 * Every struct is opaque except those below, which are rmw's and rosidl's
 * public layouts (rmw/types.h, rmw/time.h, rosidl_runtime_c,
 * rosidl_typesupport_{c,cpp}/type_support_map.h), unchanged from Humble to Kilted.
 */
typedef rp_rcl_ret_t (*rp_rcl_endpoint_init_fn)(void *endpoint, const void *node, const void *type_support,
                                                const char *topic_name, const void *options);
rp_rcl_ret_t rcl_publisher_init(void *publisher, const void *node, const void *type_support, const char *topic_name,
                                const void *options);
rp_rcl_ret_t rcl_subscription_init(void *subscription, const void *node, const void *type_support,
                                   const char *topic_name, const void *options);

typedef struct {
    uint64_t sec;
    uint64_t nsec;
} rp_rmw_time_t;

typedef struct { /* rmw_qos_profile_t */
    int32_t history;
    size_t depth;
    int32_t reliability;
    int32_t durability;
    rp_rmw_time_t deadline;
    rp_rmw_time_t lifespan;
    int32_t liveliness;
    rp_rmw_time_t liveliness_lease_duration;
    bool avoid_ros_namespace_conventions;
} rp_rmw_qos_profile_t;

typedef const rp_rmw_qos_profile_t *(*rp_rcl_get_actual_qos_fn)(const void *endpoint);
typedef void *(*rp_rcl_get_rmw_handle_fn)(const void *endpoint); /* rmw_publisher_t *: implementation_identifier first */
typedef rp_rcl_ret_t (*rp_rcl_node_get_domain_id_fn)(const void *node, size_t *domain_id);

typedef struct { /* rosidl_message_type_support_t: Iron+ appends hash and description functions */
    const char *typesupport_identifier;
    const void *data;
    const void *func;
} rp_rosidl_message_type_support_t;

typedef struct { /* type_support_map_t: the data of the rosidl_typesupport_c / _cpp dispatchers */
    size_t size;
    const char *package_name;
    const char *const *typesupport_identifier;
    const char *const *symbol_name; /* <typesupport>__get_message_type_support_handle__<pkg>__<subfolder>__<Type> */
    void **data;
} rp_type_support_map_t;

typedef struct { /* the first two fields of the introspection and fastrtps type supports' data */
    const char *message_namespace; /* "std_msgs__msg" (C) or "std_msgs::msg" (C++) */
    const char *message_name;
} rp_message_names_t;

/*
 * The introspection type support's data (rosidl_typesupport_introspection_c
 * and _cpp: the same layout; design note 0033). Iron+ inserted a key flag in
 * each: MessageMember's is_key_ at 32 (is_array_ moved to 33, the struct
 * stayed 112 bytes) and MessageMembers' has_any_key_member_ at 32 (members_
 * moved from 32 to 40). Which one a process has is read from
 * librosidl_runtime_c (rosidl_get_zero_initialized_type_hash is Iron+).
 */
typedef struct {
    const char *name;
    uint8_t type_id; /* RP_ROSIDL_TYPE_* */
    size_t string_upper_bound;
    const rp_rosidl_message_type_support_t *members; /* a MESSAGE member's own introspection type support */
    uint8_t at32;                                    /* Humble: is_array_; Iron+: is_key_ */
    uint8_t at33;                                    /* Iron+: is_array_ */
    size_t array_size;                               /* a fixed array's length, a bounded sequence's bound */
    bool is_upper_bound;
    uint32_t offset; /* of the member in its message's struct */
    const void *default_value;
    size_t (*size_function)(const void *member);                           /* arrays and sequences */
    const void *(*get_const_function)(const void *member, size_t index); /* their elements */
    const void *get_function, *fetch_function, *assign_function, *resize_function;
} rp_introspection_member_t;
#ifndef __cplusplus
_Static_assert(sizeof(rp_introspection_member_t) == 112, "MessageMember is 112 bytes on Humble-Kilted");
#endif

typedef struct {
    const char *message_namespace;
    const char *message_name;
    uint32_t member_count;
    size_t size_of;
    const void *at32; /* Humble: members_; Iron+: has_any_key_member_ (a bool) */
    const void *at40; /* Iron+: members_ */
} rp_introspection_members_t;

enum rp_rosidl_type { /* rosidl_typesupport_interface/field_types.h, the same on Humble-Kilted */
    RP_ROSIDL_TYPE_FLOAT = 1,
    RP_ROSIDL_TYPE_DOUBLE = 2,
    RP_ROSIDL_TYPE_LONG_DOUBLE = 3,
    RP_ROSIDL_TYPE_CHAR = 4,
    RP_ROSIDL_TYPE_WCHAR = 5,
    RP_ROSIDL_TYPE_BOOLEAN = 6,
    RP_ROSIDL_TYPE_OCTET = 7,
    RP_ROSIDL_TYPE_UINT8 = 8,
    RP_ROSIDL_TYPE_INT8 = 9,
    RP_ROSIDL_TYPE_UINT16 = 10,
    RP_ROSIDL_TYPE_INT16 = 11,
    RP_ROSIDL_TYPE_UINT32 = 12,
    RP_ROSIDL_TYPE_INT32 = 13,
    RP_ROSIDL_TYPE_UINT64 = 14,
    RP_ROSIDL_TYPE_INT64 = 15,
    RP_ROSIDL_TYPE_STRING = 16,
    RP_ROSIDL_TYPE_WSTRING = 17,
    RP_ROSIDL_TYPE_MESSAGE = 18,
};

/*
 * A string member's length: a C message's rosidl_runtime_c__String {data,
 * size, capacity} and a C++ message's std::string (libstdc++: {pointer,
 * length, ...}) both keep it in their second word; the wide strings
 * (U16String, std::u16string) count 16-bit characters there.
 */
#define RP_STRING_LENGTH_OFFSET 8

/* rmw_serialized_message_t (rcutils_uint8_array_t): buffer_length counts the 4-byte header. */
typedef struct {
    uint8_t *buffer;
    size_t buffer_length;
    size_t buffer_capacity;
} rp_serialized_message_t;

/*
 * Service calls (rcl/service.h, rcl/client.h; the same on Humble, Jazzy and
 * Kilted). rclcpp and rclpy call these librcl functions for every request
 * and response; the probe wraps them (services.c). rcl_take_request and
 * rcl_take_response call their _with_info twin inside librcl. The request
 * id's layout is rmw's: a 16-byte writer GUID (int8_t[16] on Humble,
 * uint8_t[RMW_GID_STORAGE_SIZE] = 16 from Iron on), then the sequence number.
 */
#define RP_RCL_RET_CLIENT_TAKE_FAILED 501
#define RP_RCL_RET_SERVICE_TAKE_FAILED 601

typedef struct { /* rmw_request_id_t */
    uint8_t writer_guid[16];
    int64_t sequence_number;
} rp_rmw_request_id_t;

typedef struct { /* rmw_service_info_t */
    int64_t source_timestamp;
    int64_t received_timestamp;
    rp_rmw_request_id_t request_id;
} rp_rmw_service_info_t;

typedef rp_rcl_ret_t (*rp_rcl_take_request_fn)(const void *service, rp_rmw_request_id_t *header, void *request);
typedef rp_rcl_ret_t (*rp_rcl_take_request_with_info_fn)(const void *service, rp_rmw_service_info_t *header,
                                                         void *request);
typedef rp_rcl_ret_t (*rp_rcl_send_response_fn)(const void *service, rp_rmw_request_id_t *header, void *response);
typedef rp_rcl_ret_t (*rp_rcl_send_request_fn)(const void *client, const void *request, int64_t *sequence_number);
typedef rp_rcl_ret_t (*rp_rcl_take_response_fn)(const void *client, rp_rmw_request_id_t *header, void *response);
typedef rp_rcl_ret_t (*rp_rcl_take_response_with_info_fn)(const void *client, rp_rmw_service_info_t *header,
                                                          void *response);
rp_rcl_ret_t rcl_take_request(const void *service, rp_rmw_request_id_t *header, void *request);
rp_rcl_ret_t rcl_take_request_with_info(const void *service, rp_rmw_service_info_t *header, void *request);
rp_rcl_ret_t rcl_send_response(const void *service, rp_rmw_request_id_t *header, void *response);
rp_rcl_ret_t rcl_send_request(const void *client, const void *request, int64_t *sequence_number);
rp_rcl_ret_t rcl_take_response(const void *client, rp_rmw_request_id_t *header, void *response);
rp_rcl_ret_t rcl_take_response_with_info(const void *client, rp_rmw_service_info_t *header, void *response);

#endif /* ROS2_PULSE_TRACETOOLS_API_H */
