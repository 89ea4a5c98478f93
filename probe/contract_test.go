package probe

import (
	"strings"
	"testing"
)

func TestExportsReadFromTheVersionScript(t *testing.T) {
	got := Exports()
	if len(got) != 37 {
		t.Fatalf("%d exports: %v", len(got), got)
	}
	seen := map[string]bool{}
	serviceCall := map[string]bool{"rcl_take_request": true, "rcl_take_request_with_info": true, "rcl_send_response": true,
		"rcl_send_request": true, "rcl_take_response": true, "rcl_take_response_with_info": true}
	for _, s := range got {
		if !strings.HasPrefix(s, "ros_trace_") && !strings.HasPrefix(s, "rcl_publish_") && s != "rcl_take_serialized_message" && !strings.HasPrefix(s, "rcl_timer_call") && s != "rcl_wait" &&
			s != "rcl_publisher_init" && s != "rcl_subscription_init" && !serviceCall[s] && !strings.HasPrefix(s, "_ZN10tracetools6detail") || seen[s] {
			t.Errorf("bad or repeated export %q", s)
		}
		seen[s] = true
	}
	for _, must := range []string{"ros_trace_rcl_publish", "ros_trace_callback_start", "ros_trace_rclcpp_intra_publish", "ros_trace_rclcpp_ring_buffer_enqueue", "ros_trace_rclcpp_ring_buffer_dequeue", "ros_trace_rmw_take",
		"rcl_publish_loaned_message", "rcl_publish_serialized_message", "rcl_take_serialized_message", "ros_trace_callback_end", "rcl_timer_call", "rcl_timer_call_with_info", "rcl_publisher_init", "rcl_subscription_init",
		"ros_trace_rcl_client_init", "rcl_take_request", "rcl_send_response", "rcl_send_request", "rcl_take_response_with_info",
		"_ZN10tracetools6detail15demangle_symbolEPKc", "_ZN10tracetools6detail18get_symbol_funcptrEPv"} {
		if !seen[must] {
			t.Errorf("%s missing", must)
		}
	}
}
