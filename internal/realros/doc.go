// Package realros holds ros2_pulse's real-ROS lane: tests that run the
// project's own test nodes (ros/pulse_testnodes, rclcpp and rclpy) on a real
// ROS 2 prefix under the probe, and judge every figure pulse gives against
// the ground truth the nodes print of themselves at exit, never against
// nominal rates.
//
// The tests skip, saying why, unless scripts/test-ros.sh (make test-ros, and
// make test's short lane where a prefix exists) has built the nodes against
// a prefix and set ROS_PREFIX, PULSE_ROS_WS (the nodes' install space),
// PULSE_ROS_DISTRO and PULSE_RMW (the RMW under test).
package realros
