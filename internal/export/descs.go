package export

import "github.com/prometheus/client_golang/prometheus"

// descs are the metric families, one per idea.
type descs struct {
	messages, published, gap, latency, lastAge, nodeUp, procUp, procs, cpuSec, rss, timerFires, timerPeriod, build         *prometheus.Desc
	ruleOK, ruleUnjudgeable, specMin, specMax, dropped, starved, unmatched, endpointInfo                                   *prometheus.Desc
	callbackDuration, timerLateness, timerOverruns, threadBusy, threadWait, wakeups                                        *prometheus.Desc
	serviceRequests, serviceResponses, serviceAbandoned, serviceResponse, serviceOutstanding, serviceOldest, serverMissing *prometheus.Desc

	serviceSendFailed *prometheus.Desc // ABI 1.8
	bytes             *prometheus.Desc // ROS_PULSE_BYTES=1 (design note 0033)
}

// desc is the family ros2_pulse_<name>.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(ns+"_"+name, help, labels, nil)
}

func newDescs(perTopic bool) descs {
	msgL, gapL, pubL := endpointLabels, gapEndpoint, []string{"topic", "node", "pid"}
	if perTopic {
		msgL, gapL, pubL = topicLabels, gapTopic, []string{"topic"}
	}
	d := desc
	return descs{
		messages:    d("messages_total", "Messages published (side=pub, at rcl_publish or rclcpp_intra_publish) or delivered to a callback (side=recv), by transport.", msgL...),
		published:   d("published_messages_total", "Messages a publisher sent, each once whatever its transports (the larger of its inter and intra counts): what each subscription on this machine should receive, for loss.", pubL...),
		gap:         d("message_gap_seconds", "Time between consecutive messages of an endpoint (gap tracking on: ROS_TOPIC_STATS_JITTER=1).", gapL...),
		latency:     d("message_latency_seconds", "Receive latency of a subscription: take time minus the message's source timestamp (ROS_TOPIC_STATS_LATENCY=1; exact on one host, across hosts as good as their clock sync).", gapL...),
		lastAge:     d("last_message_age_seconds", "Seconds since the last message of an endpoint or topic side (exact with gap tracking, else at scrape resolution).", gapL...),
		nodeUp:      d("node_up", "1 while the node's process is alive, 0 once it has exited (kept for the retention time).", "node", "pid"),
		procUp:      d("process_up", "1 while a probed process is alive, 0 once it has exited.", "pid", "exe"),
		procs:       d("processes", "Probed processes by state.", "state"),
		cpuSec:      d("process_cpu_seconds_total", "User and system CPU time of a probed process.", "pid", "nodes"),
		rss:         d("process_resident_memory_bytes", "Resident memory of a probed process.", "pid", "nodes"),
		timerFires:  d("timer_fires_total", "Callbacks of an rclcpp timer.", "node", "pid", "timer"),
		timerPeriod: d("timer_period_seconds", "Configured period of an rclcpp timer.", "node", "pid", "timer"),
		build:       d("build_info", "pulse's version.", "version", "goversion"),
		ruleOK: d("spec_rule_ok", "1 when the spec rule held in the last judged window, 0 when it was violated (kind rate, gap, latency, loss, node, timer, timer_late, timer_overrun, callback: topic is the rule's topic or node, busy, service: topic is the service and side server or client, action: topic is the action, path: topic is the path's name).",
			"kind", "topic", "side", "transport", "node", "timer"),
		ruleUnjudgeable: d("spec_rule_unjudgeable", "1 when a spec rule cannot be judged (a max_gap_ms rule without gap data).", "kind", "topic", "side", "transport", "node", "timer"),
		specMin:         d("spec_min_hz", "The spec's min_hz for a topic side and transport.", "topic", "side", "transport"),
		specMax:         d("spec_max_hz", "The spec's max_hz for a topic side and transport.", "topic", "side", "transport"),
		dropped:         d("dropped_endpoints_total", "Endpoints a process could not fit in its segment (ROS_PULSE_MAX_ENDPOINTS).", "pid"),
		callbackDuration: d("callback_duration_seconds", "How long each callback ran, callback_start to callback_end (rclcpp; rclpy's callbacks fire neither: no series). name is the topic or service, timer the timer's ordinal in its node.",
			"kind", "name", "node", "pid", "timer"),
		timerLateness: d("timer_lateness_seconds", "How late each call of a timer came against its own schedule (rcl's expected call time; rclcpp and rclpy).", "node", "pid", "timer"),
		timerOverruns: d("timer_overruns_total", "Callbacks of a timer that ran longer than its period.", "node", "pid", "timer"),
		wakeups: d("process_wakeups_total", "Callbacks and takes the probe saw in a process (deliveries, timer fires, service requests): rate(process_cpu_seconds_total) over rate() of this is the CPU a wake-up costs, recorded as ros2_pulse_cpu_seconds_per_message.",
			"pid", "nodes"),
		threadBusy: d("thread_busy_seconds_total", "Time a thread spent inside its outermost callbacks (one running now counts up to the scrape; rclcpp: threads that ran a callback): rate() is the thread's busy ratio.",
			"pid", "tid", "thread"),
		threadWait: d("thread_wait_seconds_total", "Time a thread spent inside rcl_wait (one waiting now counts up to the scrape; any client library's executor threads): 1 - rate() is its share outside the wait, working.",
			"pid", "tid", "thread"),
		unmatched: d("endpoint_unmatched", "1 for a live publisher or subscription that meets nobody on this machine, with why (qos_incompatible, type_mismatch, other_domain, other_rmw, discovery_range, no_publisher), and for a starved subscription (subscription_starved 1) whose only publishers here run another DDS vendor's RMW, with its likely cause (cross_vendor: ROS 2 does not guarantee communication between different DDS vendors; run both sides with one RMW_IMPLEMENTATION); absent otherwise.",
			"topic", "node", "pid", "side", "reason"),
		endpointInfo: d("endpoint_info", "1 per live publisher and subscription, labelled with what the probe learnt at its creation: message type, rmw implementation, domain and the actual QoS.",
			"topic", "node", "pid", "side", "type", "rmw", "domain", "reliability", "durability", "history", "depth", "deadline", "liveliness", "lease"),
		serviceRequests: d("service_requests_total", "Service calls by any client library (ABI 1.6): side=server, requests its server took (rcl_take_request); side=client, requests its client sent (rcl_send_request). action parts are services named <action>/_action/send_goal, get_result, cancel_goal.",
			callLabels...),
		serviceResponses: d("service_responses_total", "Service calls answered: side=server, responses sent for a request it took; side=client, responses taken for a call it sent. requests - responses is what is still open or was never answered.",
			callLabels...),
		serviceAbandoned: d("service_abandoned_total", "Calls still unanswered when 32 newer calls had been made (the probe stops waiting for them: never answered, or answered too late to be matched).",
			callLabels...),
		serviceSendFailed: d("service_send_failed_total", "Responses a server could not send (ABI 1.8, side=server only): rcl_send_response refused them (RCL_RET_TIMEOUT on Fast DDS: the client went away before the answer; rclcpp and rclpy warn and move on). Their calls are closed, neither answered nor outstanding, and not in service_response_seconds.",
			callLabels...),
		serviceResponse: d("service_response_seconds", "Time of each answered call: side=server, from taking the request to sending its response (handling); side=client, from sending the request to taking its response (round trip).",
			callLabels...),
		serviceOutstanding: d("service_outstanding", "Calls open now: side=server, requests taken and not yet answered; side=client, requests sent and not yet answered (at most 32 are tracked).",
			callLabels...),
		serviceOldest: d("service_oldest_outstanding_seconds", "Age of the oldest call open now (0 when none): a client's call past its timeout has timed out.",
			callLabels...),
		serverMissing: d("service_server_missing", "1 for a live client whose service no live process on this machine serves (a server on another host is not seen), else 0.",
			"service", "node", "pid"),
		bytes: d("bytes_total", "Bytes of an endpoint's inter-process messages as serialized (4-byte header and CDR body; ROS_PULSE_BYTES=1): side=pub sent, side=recv received. Exact for fixed-size types and serialized messages, else the sampled messages' mean size times the count; no series where no type support could size them. rate() is the bandwidth.",
			gapL...),
		starved: d("subscription_starved", "For a live subscription that has received nothing yet: 1 once this machine's publishers of its topic have published since the exporter first saw it (a QoS, type, domain, rmw or name mismatch, or publishers only on another DDS vendor's RMW: endpoint_unmatched names the cause where it is visible), else 0.",
			"topic", "node", "pid"),
	}
}
