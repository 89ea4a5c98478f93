// Command robotgen writes sim/graphs/robot.graph: an Autoware-shaped stand-in
// robot (issue 46) of about 150 nodes in two dozen processes, most of them
// component containers, over 500 topics in /sensing, /localization,
// /perception, /planning, /control, /vehicle, /map and /system. Its names,
// rates and sizes follow Autoware's launch files; its debug topics
// (processing_time_ms and the like, most with no subscriber) are what make a
// real robot's topic count five times its node count.
//
//	go run ./sim/robotgen > sim/graphs/robot.graph
//
// The graph file is what simgraph reads; this program is how it was made, so
// a change to the robot is a change here (the test keeps the two equal).
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	if err := write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "robotgen:", err)
		os.Exit(1)
	}
}

// Sizes (bytes) of the robot's heavy messages.
const (
	cloudTop   = 1_500_000 // a 128-beam lidar's point cloud
	cloudSide  = 500_000   // a 32-beam lidar's
	cloudMerge = 2_000_000 // the four concatenated
	cloudSmall = 300_000   // downsampled for NDT
	image      = 921_600   // 640x480 rgb8
	gridMap    = 640_000   // an 800x800 occupancy grid
	lanelets   = 4_000_000 // the vector map, transient local
)

// robot is the graph being written: processes of nodes of endpoints.
type robot struct {
	b  strings.Builder
	py bool // the node being written is rclpy's
}

func (r *robot) line(indent int, format string, args ...any) {
	r.b.WriteString(strings.Repeat("  ", indent))
	fmt.Fprintf(&r.b, format, args...)
	r.b.WriteByte('\n')
}

func (r *robot) process(name string, opts ...string) {
	r.b.WriteByte('\n')
	r.line(0, "process %s", strings.Join(append([]string{name}, opts...), " "))
}

// node starts a node. Every C++ node of Autoware publishes its processing
// and cycle times and /diagnostics; a py node its /diagnostics. Each
// publishes from its main loop: one timer a rate, not one a publisher.
func (r *robot) node(fqn string, hz float64, opts ...string) {
	r.line(1, "node %s", strings.Join(append(append([]string{fqn}, opts...), "loop"), " "))
	r.py = len(opts) > 0 && opts[0] == "lang=py"
	if !r.py {
		r.line(2, "pub %s/debug/processing_time_ms %s", fqn, num(hz))
		r.line(2, "pub %s/debug/cyclic_time_ms %s", fqn, num(hz))
	}
	r.line(2, "pub /diagnostics 1")
}

// pub adds a publisher to the node. A C++ node's outputs other than debug
// topics also say when each message left (Autoware's published_time
// publisher: TOPIC/debug/published_time, at the topic's rate, no subscriber).
func (r *robot) pub(topic string, hz float64, opts ...string) {
	r.line(2, "pub %s", strings.Join(append([]string{topic, num(hz)}, opts...), " "))
	if !r.py && !strings.Contains(topic, "/debug/") && hz >= 1 && !strings.HasPrefix(topic, "/tf") {
		r.line(2, "pub %s/debug/published_time %s", topic, num(hz))
	}
}

func (r *robot) sub(topics ...string) {
	for _, t := range topics {
		r.line(2, "sub %s", t)
	}
}

func (r *robot) raw(indent int, s string) { r.line(indent, "%s", s) }

// tf: the node keeps a tf2 buffer (a listener on /tf and /tf_static), as many of Autoware's do.
func (r *robot) tf() { r.sub("/tf", "/tf_static") }

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func write(w io.Writer) error {
	r := &robot{}
	r.b.WriteString(`# An Autoware-shaped robot (issue 46), written by sim/robotgen: do not edit,
# change sim/robotgen/main.go and run 'go run ./sim/robotgen > sim/graphs/robot.graph'.
# Sensors -> perception -> planning -> control in component containers
# (intra-process where Autoware composes them), ~20 % rclpy nodes, the
# services and the action of its API. Syntax: sim/graphs/demo.graph.
`)
	sensing(r)
	localization(r)
	perception(r)
	planning(r)
	control(r)
	vehicleAndMap(r)
	system(r)
	_, err := io.WriteString(w, r.b.String())
	return err
}

const (
	twist    = "/sensing/vehicle_velocity_converter/twist_with_covariance"
	imu      = "/sensing/imu/imu_data"
	concat   = "/sensing/lidar/concatenated/pointcloud"
	kinState = "/localization/kinematic_state"
	objects  = "/perception/object_recognition/objects"
	grid     = "/perception/occupancy_grid_map/map"
	noGround = "/perception/obstacle_segmentation/pointcloud"
	vecMap   = "/map/vector_map"
	route    = "/planning/mission_planning/route"
	traj     = "/planning/scenario_planning/trajectory"
	ctrlCmd  = "/control/command/control_cmd"
	velocity = "/vehicle/status/velocity_status"
	steering = "/vehicle/status/steering_status"
	tlSignal = "/perception/traffic_light_recognition/traffic_signals"
)

func sensing(r *robot) {
	for _, l := range []struct {
		name string
		size int
	}{{"top", cloudTop}, {"left", cloudSide}, {"right", cloudSide}, {"rear", cloudSide}} {
		ns := "/sensing/lidar/" + l.name
		r.process("lidar_"+l.name, "threads=2")
		stages := []string{"pointcloud_raw_ex", "self_cropped/pointcloud_ex", "mirror_cropped/pointcloud_ex",
			"rectified/pointcloud_ex", "outlier_filtered/pointcloud"}
		nodes := []string{"velodyne_driver", "crop_box_filter_self", "crop_box_filter_mirror",
			"distortion_corrector", "ring_outlier_filter"}
		for i, n := range nodes {
			r.node(ns+"/"+n, 10, "intra")
			if i == 0 {
				r.pub(ns+"/velodyne_packets", 10, "thread", "size=120000")
				r.pub(ns+"/"+stages[0], 10, fmt.Sprintf("size=%d", l.size))
				continue
			}
			r.sub(ns + "/" + stages[i-1])
			if n == "distortion_corrector" {
				r.sub(twist, imu)
				r.tf()
			}
			r.pub(ns+"/"+stages[i], 10, fmt.Sprintf("size=%d", l.size))
		}
	}

	r.process("pointcloud_preprocessor", "threads=2")
	r.node("/sensing/lidar/concatenate_data", 10, "intra")
	r.tf()
	for _, l := range []string{"top", "left", "right", "rear"} {
		r.sub("/sensing/lidar/" + l + "/outlier_filtered/pointcloud")
	}
	r.sub(twist)
	r.pub(concat, 10, fmt.Sprintf("size=%d", cloudMerge))
	r.pub("/sensing/lidar/concatenate_data/debug/concat_num", 10)
	prev := concat
	for _, n := range []string{"crop_box_filter", "vehicle_self_filter", "downsample_filter", "pointcloud_map_filter"} {
		r.node("/sensing/lidar/"+n, 10, "intra")
		r.sub(prev)
		prev = "/sensing/lidar/" + n + "/output"
		r.pub(prev, 10, fmt.Sprintf("size=%d", cloudMerge/2))
	}

	r.process("cameras", "threads=2")
	for _, c := range []string{"camera0", "camera1", "traffic_light"} {
		ns := "/sensing/camera/" + c
		r.node(ns+"/camera_driver", 30, "intra")
		r.pub(ns+"/image_raw", 30, "thread", fmt.Sprintf("size=%d", image))
		r.pub(ns+"/camera_info", 30)
		r.node(ns+"/image_rectifier", 30, "intra")
		r.sub(ns+"/image_raw", ns+"/camera_info")
		r.pub(ns+"/image_rect", 30, fmt.Sprintf("size=%d", image))
	}

	r.process("gnss_imu")
	r.node("/sensing/gnss/ublox", 10)
	r.pub("/sensing/gnss/ublox/nav_sat_fix", 10)
	r.pub("/sensing/gnss/ublox/navpvt", 10)
	r.node("/sensing/gnss/gnss_poser", 10)
	r.sub("/sensing/gnss/ublox/nav_sat_fix")
	r.pub("/sensing/gnss/pose_with_covariance", 10)
	r.pub("/sensing/gnss/fixed", 10)
	r.node("/sensing/imu/tamagawa_driver", 100)
	r.pub("/sensing/imu/tamagawa/imu_raw", 100)
	r.node("/sensing/imu/imu_corrector", 100)
	r.sub("/sensing/imu/tamagawa/imu_raw")
	r.pub(imu, 100)
	r.node("/sensing/imu/gyro_bias_estimator", 100)
	r.sub(imu, twist)
	r.pub("/sensing/imu/gyro_bias_estimator/gyro_bias", 1)
	r.node("/sensing/vehicle_velocity_converter", 30)
	r.sub(velocity)
	r.pub(twist, 30)
}

func localization(r *robot) {
	r.process("pose_estimator", "threads=2")
	prev := "/sensing/lidar/top/outlier_filtered/pointcloud"
	for _, n := range []string{"crop_box_filter_measurement_range", "voxel_grid_downsample_filter", "random_downsample_filter"} {
		r.node("/localization/util/"+n, 10, "intra")
		r.sub(prev)
		prev = "/localization/util/" + n + "/pointcloud"
		r.pub(prev, 10, fmt.Sprintf("size=%d", cloudSmall))
	}
	ndt := "/localization/pose_estimator/ndt_scan_matcher"
	r.node(ndt, 10, "intra")
	r.tf()
	r.sub(prev, "/map/pointcloud_map", "/localization/pose_twist_fusion_filter/biased_pose_with_covariance")
	r.pub("/localization/pose_estimator/pose_with_covariance", 10)
	for _, d := range []string{"exe_time_ms", "iteration_num", "transform_probability",
		"nearest_voxel_transformation_likelihood", "initial_pose_with_covariance", "ndt_marker"} {
		r.pub(ndt+"/debug/"+d, 10)
	}
	r.raw(2, "service /localization/pose_estimator/ndt_align_srv cost=50")
	r.node("/localization/pose_estimator/pose_instability_detector", 10, "intra")
	r.sub(kinState, twist)
	r.pub("/localization/pose_estimator/pose_instability_detector/debug/diff_pose", 10)

	r.process("twist_fusion", "threads=2")
	r.node("/localization/twist_estimator/gyro_odometer", 30)
	r.sub(twist, imu)
	r.pub("/localization/twist_estimator/twist_with_covariance", 30)
	ekf := "/localization/pose_twist_fusion_filter/ekf_localizer"
	r.node(ekf, 50)
	r.sub("/localization/pose_estimator/pose_with_covariance", "/localization/twist_estimator/twist_with_covariance")
	r.pub("/tf", 50)
	r.pub("/localization/pose_twist_fusion_filter/kinematic_state", 50)
	r.pub("/localization/pose_twist_fusion_filter/biased_pose_with_covariance", 50)
	r.pub(ekf+"/debug/estimated_yaw_bias", 50)
	r.raw(2, "timer 50")
	r.node("/localization/pose_twist_fusion_filter/stop_filter", 50)
	r.sub("/localization/pose_twist_fusion_filter/kinematic_state")
	r.pub(kinState, 50)
	r.node("/localization/pose_twist_fusion_filter/twist2accel", 50)
	r.sub(kinState)
	r.pub("/localization/acceleration", 50)
	r.node("/localization/localization_error_monitor", 10)
	r.sub(kinState)
	r.pub("/localization/localization_error_monitor/ellipse_marker", 10)
	r.node("/localization/util/pose_initializer", 1)
	r.sub("/sensing/gnss/pose_with_covariance")
	r.pub("/localization/initialization_state", 1, "durability=transient_local")
	r.raw(2, "service /localization/initialize cost=20")
	r.node("/localization/localization_evaluator", 10)
	r.sub(kinState, "/localization/pose_estimator/pose_with_covariance")
	r.pub("/localization/localization_evaluator/metrics", 10)
}

func perception(r *robot) {
	r.process("obstacle_segmentation", "threads=2")
	prev := "/sensing/lidar/pointcloud_map_filter/output"
	for _, n := range []string{"crop_box_filter", "ground_segmentation", "voxel_grid_filter",
		"occupancy_grid_map_outlier_filter", "range_cropped_filter"} {
		r.node("/perception/obstacle_segmentation/"+n, 10, "intra")
		r.sub(prev)
		if n == "occupancy_grid_map_outlier_filter" {
			r.sub(grid)
		}
		prev = "/perception/obstacle_segmentation/" + n + "/output"
		r.pub(prev, 10, fmt.Sprintf("size=%d", cloudSmall))
	}
	r.node("/perception/obstacle_segmentation/pointcloud_relay", 10, "intra")
	r.sub(prev)
	r.pub(noGround, 10, fmt.Sprintf("size=%d", cloudSmall))

	od := "/perception/object_recognition/detection"
	r.process("object_recognition", "threads=4")
	r.node(od+"/centerpoint/lidar_centerpoint", 10, "intra")
	r.tf()
	r.sub(concat)
	r.pub(od+"/centerpoint/objects", 10)
	r.pub(od+"/centerpoint/lidar_centerpoint/debug/pipeline_latency_ms", 10)
	r.node(od+"/clustering/euclidean_cluster", 10, "intra")
	r.sub(noGround)
	r.pub(od+"/clustering/clusters", 10)
	r.pub(od+"/clustering/euclidean_cluster/debug/clusters", 10, "size=200000")
	r.node(od+"/clustering/shape_estimation", 10, "intra")
	r.sub(od + "/clustering/clusters")
	r.pub(od+"/clustering/objects_with_feature", 10)
	r.node(od+"/clustering/detected_object_feature_remover", 10, "intra")
	r.sub(od + "/clustering/objects_with_feature")
	r.pub(od+"/clustering/objects", 10)
	for _, c := range []string{"camera0", "camera1"} {
		r.node(od+"/"+c+"/tensorrt_yolox", 30, "intra")
		r.sub("/sensing/camera/" + c + "/image_rect")
		r.pub(od+"/"+c+"/rois", 30)
		r.pub(od+"/"+c+"/tensorrt_yolox/debug/image", 30, fmt.Sprintf("size=%d", image))
	}
	r.node(od+"/clustering/camera_lidar_fusion/roi_cluster_fusion", 10, "intra")
	r.sub(od+"/clustering/objects", od+"/camera0/rois", od+"/camera1/rois")
	r.pub(od+"/clustering/camera_lidar_fusion/clusters", 10)
	r.node(od+"/detection_by_tracker", 10, "intra")
	r.sub(od+"/clustering/camera_lidar_fusion/clusters", "/perception/object_recognition/tracking/objects")
	r.pub(od+"/detection_by_tracker/objects", 10)
	r.node(od+"/object_association_merger", 10, "intra")
	r.sub(od+"/centerpoint/objects", od+"/detection_by_tracker/objects")
	r.pub(od+"/objects_before_filter", 10)
	r.node(od+"/obstacle_pointcloud_based_validator", 10, "intra")
	r.sub(od+"/objects_before_filter", noGround)
	r.pub(od+"/validated_objects", 10)
	r.node(od+"/object_lanelet_filter", 10, "intra")
	r.sub(od+"/validated_objects", vecMap)
	r.pub(od+"/objects", 10)
	r.node("/perception/occupancy_grid_map/pointcloud_based_occupancy_grid_map", 10, "intra")
	r.tf()
	r.sub(concat, noGround)
	r.pub(grid, 10, fmt.Sprintf("size=%d", gridMap))

	r.process("tracking_prediction", "threads=2")
	r.node("/perception/object_recognition/tracking/multi_object_tracker", 10)
	r.tf()
	r.sub(od+"/objects", kinState)
	r.pub("/perception/object_recognition/tracking/objects", 10)
	r.pub("/perception/object_recognition/tracking/multi_object_tracker/debug/input_latency_ms", 10)
	r.node("/perception/object_recognition/prediction/map_based_prediction", 10)
	r.tf()
	r.sub("/perception/object_recognition/tracking/objects", vecMap, tlSignal)
	r.pub(objects, 10)
	r.pub("/perception/object_recognition/prediction/map_based_prediction/debug/markers", 10, "size=50000")
	r.node("/perception/object_recognition/tracking/tracking_object_merger", 10)
	r.sub("/perception/object_recognition/tracking/objects")
	r.pub("/perception/object_recognition/tracking/merged_objects", 10)
	r.node("/perception/object_recognition/prediction/objects_visualizer", 10)
	r.sub(objects)
	r.pub("/perception/object_recognition/objects/markers", 10, "size=80000")
	r.node("/perception/perception_online_evaluator", 10)
	r.sub(objects)
	r.pub("/perception/perception_online_evaluator/metrics", 10)

	tl := "/perception/traffic_light_recognition"
	r.process("traffic_light", "threads=2")
	r.node(tl+"/traffic_light_map_based_detector", 10, "intra")
	r.tf()
	r.sub(vecMap, route, "/sensing/camera/traffic_light/camera_info")
	r.pub(tl+"/rough/rois", 10)
	r.node(tl+"/traffic_light_fine_detector", 10, "intra")
	r.sub("/sensing/camera/traffic_light/image_rect", tl+"/rough/rois")
	r.pub(tl+"/rois", 10)
	r.node(tl+"/traffic_light_classifier", 10, "intra")
	r.sub("/sensing/camera/traffic_light/image_rect", tl+"/rois")
	r.pub(tl+"/classified/traffic_signals", 10)
	r.node(tl+"/traffic_light_multi_camera_fusion", 10, "intra")
	r.sub(tl + "/classified/traffic_signals")
	r.pub(tl+"/fused/traffic_signals", 10)
	r.node(tl+"/crosswalk_traffic_light_estimator", 10, "intra")
	r.sub(tl+"/fused/traffic_signals", vecMap, route)
	r.pub(tlSignal, 10)
	r.node(tl+"/traffic_light_visualization", 10, "intra")
	r.sub(tlSignal, "/sensing/camera/traffic_light/image_rect")
	r.pub(tl+"/debug/rois", 10, fmt.Sprintf("size=%d", image))
}

func planning(r *robot) {
	mp := "/planning/mission_planning"
	r.process("mission_planning")
	r.node(mp+"/mission_planner", 1)
	r.sub(vecMap, kinState)
	r.pub(route, 1, "durability=transient_local")
	r.pub(mp+"/route_marker", 1, "durability=transient_local")
	r.raw(2, "service "+mp+"/set_waypoint_route cost=30")
	r.raw(2, "service "+mp+"/set_lanelet_route cost=30")
	r.node(mp+"/goal_pose_visualizer", 1)
	r.sub(route)
	r.pub(mp+"/echo_back_goal_pose", 1)
	r.node(mp+"/route_selector", 1)
	r.sub(route)
	r.pub(mp+"/route_selector/main/route", 1)
	r.node("/planning/planning_evaluator", 10)
	r.sub(traj, objects)
	r.pub("/planning/planning_evaluator/metrics", 10)
	r.node("/planning/planning_diagnostics/planning_error_monitor", 10)
	r.sub(traj)

	sp := "/planning/scenario_planning"
	bp := sp + "/lane_driving/behavior_planning"
	r.process("behavior_planning", "threads=2")
	r.node(bp+"/behavior_path_planner", 10, "intra")
	r.tf()
	r.sub(route, kinState, objects, grid, vecMap, "/localization/acceleration")
	r.pub(bp+"/path_with_lane_id", 10, "size=100000")
	for _, m := range []string{"avoidance", "lane_change_left", "lane_change_right", "goal_planner", "start_planner",
		"side_shift", "static_obstacle_avoidance", "dynamic_obstacle_avoidance"} {
		r.pub(bp+"/behavior_path_planner/debug/"+m, 10)
	}
	r.pub("/planning/steering_factor/behavior_path_planner", 10)
	r.pub(bp+"/behavior_path_planner/bound", 10)
	r.node(bp+"/behavior_velocity_planner", 10, "intra")
	r.tf()
	r.sub(bp+"/path_with_lane_id", kinState, objects, noGround, tlSignal, vecMap)
	r.pub(bp+"/path", 10, "size=80000")
	for _, m := range []string{"blind_spot", "crosswalk", "detection_area", "intersection", "stop_line",
		"traffic_light", "virtual_traffic_light", "occlusion_spot", "run_out", "walkway", "no_stopping_area"} {
		r.pub(bp+"/behavior_velocity_planner/debug/"+m, 10)
	}
	r.pub("/planning/velocity_factors/behavior_velocity_planner", 10)
	r.node(bp+"/rtc_auto_mode_manager", 10, "intra")
	r.pub("/planning/cooperate_status", 10)
	r.raw(2, "service /planning/enable_auto_mode/internal cost=5")
	r.node(sp+"/scenario_selector", 10, "intra")
	r.sub(sp+"/lane_driving/trajectory", sp+"/parking/trajectory", kinState, route)
	r.pub(sp+"/scenario", 10)
	r.pub(sp+"/scenario_selector/trajectory", 10)
	r.node(sp+"/external_velocity_limit_selector", 10, "intra")
	r.pub(sp+"/max_velocity", 10)
	r.node(sp+"/motion_velocity_smoother", 10, "intra")
	r.sub(sp+"/scenario_selector/trajectory", kinState, sp+"/max_velocity")
	r.pub(sp+"/motion_velocity_smoother/trajectory", 10)
	for _, d := range []string{"closest_velocity", "closest_acceleration", "trajectory_raw", "trajectory_lateral_acc_filtered"} {
		r.pub(sp+"/motion_velocity_smoother/debug/"+d, 10)
	}
	r.node("/planning/planning_validator", 10, "intra")
	r.sub(sp+"/motion_velocity_smoother/trajectory", kinState)
	r.pub(traj, 10)
	r.pub("/planning/planning_validator/validation_status", 10)

	mo := sp + "/lane_driving/motion_planning"
	r.process("motion_planning", "threads=2")
	r.node(mo+"/path_optimizer", 10, "intra")
	r.sub(bp+"/path", kinState)
	r.pub(mo+"/path_optimizer/trajectory", 10)
	r.pub(mo+"/path_optimizer/debug/markers", 10, "size=60000")
	r.node(mo+"/path_smoother", 10, "intra")
	r.sub(mo + "/path_optimizer/trajectory")
	r.pub(mo+"/path_smoother/trajectory", 10)
	r.node(mo+"/obstacle_velocity_limiter", 10, "intra")
	r.sub(mo+"/path_smoother/trajectory", grid, noGround)
	r.pub(mo+"/obstacle_velocity_limiter/trajectory", 10)
	r.node(mo+"/obstacle_cruise_planner", 10, "intra")
	r.sub(mo+"/obstacle_velocity_limiter/trajectory", objects, kinState)
	r.pub(mo+"/obstacle_cruise_planner/trajectory", 10)
	for _, d := range []string{"cruise/planning_info", "stop_planning_info", "marker", "obstacles"} {
		r.pub(mo+"/obstacle_cruise_planner/debug/"+d, 10)
	}
	r.node(mo+"/surround_obstacle_checker", 10, "intra")
	r.sub(mo+"/obstacle_cruise_planner/trajectory", noGround, objects)
	r.pub(sp+"/lane_driving/trajectory", 10)
	r.node(mo+"/obstacle_stop_planner", 10, "intra")
	r.sub(mo+"/path_smoother/trajectory", noGround)
	r.pub(mo+"/obstacle_stop_planner/debug/marker", 10)
	r.node(sp+"/parking/costmap_generator", 10, "intra")
	r.tf()
	r.sub(objects, noGround, vecMap, sp+"/scenario")
	r.pub(sp+"/parking/costmap_generator/occupancy_grid", 10, fmt.Sprintf("size=%d", gridMap))
	r.node(sp+"/parking/freespace_planner", 10, "intra")
	r.sub(sp+"/parking/costmap_generator/occupancy_grid", route, kinState)
	r.pub(sp+"/parking/trajectory", 10)
}

func control(r *robot) {
	tf := "/control/trajectory_follower"
	r.process("control", "threads=2")
	r.node(tf+"/controller_node_exe", 30, "intra")
	r.tf()
	r.sub(traj, kinState, steering, "/localization/acceleration")
	r.pub(tf+"/control_cmd", 30)
	for _, d := range []string{"lateral/diagnostic", "longitudinal/diagnostic", "lateral/predicted_trajectory",
		"lateral/debug/markers", "longitudinal/slope_angle"} {
		r.pub(tf+"/"+d, 30)
	}
	r.raw(2, "timer 30")
	r.node(tf+"/lane_departure_checker_node", 30, "intra")
	r.sub(traj, kinState, route, vecMap)
	r.pub(tf+"/lane_departure_checker_node/debug/marker", 30)
	r.node("/control/shift_decider", 30, "intra")
	r.sub(tf + "/control_cmd")
	r.pub("/control/shift_decider/gear_cmd", 30)
	r.node("/control/vehicle_cmd_gate", 30, "intra")
	r.sub(tf+"/control_cmd", "/control/shift_decider/gear_cmd", "/control/external_cmd_selector/selected_external_control_cmd")
	r.pub(ctrlCmd, 30)
	r.pub("/control/command/gear_cmd", 30)
	r.pub("/control/command/turn_indicators_cmd", 30)
	r.pub("/control/command/hazard_lights_cmd", 30)
	r.pub("/control/command/emergency_cmd", 30)
	r.pub("/control/vehicle_cmd_gate/is_paused", 30)
	r.raw(2, "service /control/vehicle_cmd_gate/engage cost=2")
	r.node("/control/control_validator", 30, "intra")
	r.sub(traj, tf+"/lateral/predicted_trajectory", kinState)
	r.pub("/control/control_validator/validation_status", 30)
	r.node("/control/autonomous_emergency_braking", 30, "intra")
	r.tf()
	r.sub(noGround, kinState, imu, tf+"/lateral/predicted_trajectory")
	r.pub("/control/autonomous_emergency_braking/debug/markers", 30)
	r.node("/control/external_cmd_selector", 30, "intra")
	r.pub("/control/external_cmd_selector/selected_external_control_cmd", 30)
	r.raw(2, "service /control/external_cmd_selector/select_external_command cost=1")
}

func vehicleAndMap(r *robot) {
	r.process("vehicle")
	r.node("/vehicle/raw_vehicle_cmd_converter", 30)
	r.sub(ctrlCmd, velocity, steering)
	r.pub("/control/command/actuation_cmd", 30)
	r.node("/vehicle/vehicle_interface", 30)
	r.sub("/control/command/actuation_cmd", "/control/command/gear_cmd", "/control/command/turn_indicators_cmd",
		"/control/command/hazard_lights_cmd")
	for _, s := range []string{"velocity_status", "steering_status", "gear_status", "turn_indicators_status",
		"hazard_lights_status", "control_mode", "battery_charge"} {
		r.pub("/vehicle/status/"+s, 30)
	}
	r.raw(2, "service /control/control_mode_request cost=5")
	r.node("/robot_state_publisher", 1)
	r.pub("/tf_static", 1, "durability=transient_local")
	r.pub("/robot_description", 1, "durability=transient_local")
	r.node("/vehicle/vehicle_velocity_reporter", 30)
	r.sub(velocity)
	r.pub("/vehicle/odometry", 30)

	r.process("map")
	r.node("/map/map_projection_loader", 1)
	r.pub("/map/map_projector_info", 1, "durability=transient_local")
	r.node("/map/lanelet2_map_loader", 1)
	r.pub(vecMap, 1, "durability=transient_local", fmt.Sprintf("size=%d", lanelets))
	r.node("/map/pointcloud_map_loader", 1)
	r.pub("/map/pointcloud_map", 1, "durability=transient_local", fmt.Sprintf("size=%d", lanelets))
	r.raw(2, "service /map/get_differential_pointcloud_map cost=40")
	r.raw(2, "service /map/get_partial_pointcloud_map cost=40")
	r.node("/map/vector_map_tf_generator", 1)
	r.sub(vecMap)
	r.node("/map/lanelet2_map_visualization", 1)
	r.sub(vecMap)
	r.pub("/map/vector_map_marker", 1, "durability=transient_local", "size=500000")
}

func system(r *robot) {
	r.process("system_monitor", "threads=2")
	for _, m := range []string{"cpu", "mem", "net", "ntp", "process", "hdd", "gpu", "voltage"} {
		r.node("/system/system_monitor/"+m+"_monitor", 1, "lang=py")
		r.raw(2, "timer 1")
	}
	r.pub("/system/system_monitor/process_monitor/high_load", 1)

	r.process("diagnostics", "threads=2")
	r.node("/system/diagnostic_graph_aggregator", 10)
	r.sub("/diagnostics")
	r.pub("/diagnostics_graph", 10)
	r.pub("/diagnostics_graph/struct", 1, "durability=transient_local")
	r.node("/system/system_error_monitor", 10)
	r.sub("/diagnostics_graph")
	r.pub("/system/emergency/hazard_status", 10)
	r.node("/system/mrm_handler", 10)
	r.sub("/system/emergency/hazard_status", kinState)
	r.pub("/system/fail_safe/mrm_state", 10)
	r.pub("/system/emergency/gear_cmd", 10)
	r.raw(2, "client /system/mrm/emergency_stop/operate 1")
	r.node("/system/mrm_emergency_stop_operator", 10)
	r.sub("/control/command/control_cmd")
	r.pub("/system/mrm/emergency_stop/status", 10)
	r.raw(2, "service /system/mrm/emergency_stop/operate cost=1")
	r.node("/system/component_state_monitor", 1)
	r.pub("/system/component_state_monitor/component/autonomous/localization", 1)
	r.pub("/system/component_state_monitor/component/autonomous/planning", 1)
	r.node("/system/duplicated_node_checker", 1)
	r.node("/system/processing_time_checker", 1)
	r.pub("/system/processing_time_checker/metrics", 1)

	// topic_state_monitor: one rclpy node a watched topic, each reporting on /diagnostics
	r.process("topic_state_monitors")
	for _, w := range []struct{ name, topic string }{
		{"pointcloud", concat}, {"kinematic_state", kinState}, {"objects", objects}, {"trajectory", traj},
		{"control_cmd", ctrlCmd}, {"velocity_status", velocity}, {"imu", imu}, {"gnss", "/sensing/gnss/pose_with_covariance"},
		{"occupancy_grid", grid}, {"route", route}, {"traffic_signals", tlSignal}, {"vector_map", vecMap},
	} {
		r.node("/system/topic_state_monitor_"+w.name, 1, "lang=py")
		r.sub(w.topic)
	}

	ad := "/adapi/node"
	r.process("ad_api", "threads=2")
	for _, n := range []string{"autoware_state", "fail_safe", "interface", "localization", "motion", "operation_mode",
		"perception", "planning", "routing", "vehicle", "diagnostics"} {
		r.node(ad+"/"+n, 1, "lang=py")
	}
	r.process("ad_api_endpoints")
	r.node(ad+"_endpoints/routing", 1, "lang=py")
	r.sub(route)
	r.pub("/api/routing/state", 1, "durability=transient_local")
	r.raw(2, "service /api/routing/set_route_points cost=30")
	r.raw(2, "action /api/routing/navigate accept=5 result=500")
	r.node(ad+"_endpoints/operation_mode", 1, "lang=py")
	r.pub("/api/operation_mode/state", 1, "durability=transient_local")
	r.raw(2, "service /api/operation_mode/change_to_autonomous cost=5")
	r.raw(2, "client /control/vehicle_cmd_gate/engage 0.2")
	r.node(ad+"_endpoints/motion", 10, "lang=py")
	r.sub(velocity, "/control/vehicle_cmd_gate/is_paused")
	r.pub("/api/motion/state", 10)
	r.node(ad+"_endpoints/vehicle", 10, "lang=py")
	r.tf()
	r.sub(kinState, velocity, steering)
	r.pub("/api/vehicle/kinematics", 10)
	r.pub("/api/vehicle/status", 10)
	r.node("/tools/autonomy_client", 1, "lang=py")
	r.raw(2, "client /api/operation_mode/change_to_autonomous 0.2")
	r.raw(2, "client /api/routing/set_route_points 0.2")
	r.raw(2, "action_client /api/routing/navigate 0.1")
	r.raw(2, "client /localization/initialize 0.1")
}
