package bridge

import (
	"fmt"
	"strings"
)

// DefaultNodeName is the node the bridge is in the ROS graph.
const DefaultNodeName = "/pulse_bridge"

// Node is the ROS node the bridge announces on ros_discovery_info.
type Node struct {
	Namespace string // absolute; "/" when none
	Name      string
}

// FullName is the node as `ros2 node list` prints it.
func (n Node) FullName() string {
	if n.Namespace == "/" {
		return "/" + n.Name
	}
	return n.Namespace + "/" + n.Name
}

// maxNodeName is rmw's limit on a node name (rmw/validate_node_name.h).
const maxNodeName = 255

// ParseNodeName splits a fully qualified node name ("/pulse_bridge",
// "/robot1/pulse_bridge"; a name without a leading slash is in the root
// namespace) and checks it by rmw's rules (rmw_validate_node_name,
// rmw_validate_namespace): each part starts with a letter or '_' and holds
// only letters, digits and '_'.
func ParseNodeName(s string) (Node, error) {
	full := s
	if !strings.HasPrefix(full, "/") {
		full = "/" + full
	}
	i := strings.LastIndexByte(full, '/')
	n := Node{Namespace: "/", Name: full[i+1:]}
	bad := func(why string) (Node, error) {
		return Node{}, fmt.Errorf("--node-name %q: %s", s, why)
	}
	if err := rosToken(n.Name); err != "" {
		return bad("the node name " + err)
	}
	if len(n.Name) > maxNodeName {
		return bad(fmt.Sprintf("the node name is longer than %d characters", maxNodeName))
	}
	if i > 0 { // in a namespace
		n.Namespace = full[:i]
		for _, part := range strings.Split(full[1:i], "/") {
			if err := rosToken(part); err != "" {
				return bad("a namespace part " + err)
			}
		}
	}
	return n, nil
}

// rosToken says what is wrong with one part of a ROS name, or "".
func rosToken(t string) string {
	if t == "" {
		return "is empty"
	}
	if t[0] >= '0' && t[0] <= '9' {
		return fmt.Sprintf("%q starts with a digit", t)
	}
	for _, c := range t {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Sprintf("%q holds %q: only letters, digits and '_' are allowed", t, c)
		}
	}
	return ""
}

// GIDSize is how many bytes the distro's rmw_gid_t holds, and so the GID
// layout of its ros_discovery_info: 24 on Humble, 16 from Iron on
// (rmw_dds_common 2.0.0, "Change Gid.msg to be 16 bytes").
func GIDSize(distro string) int {
	if distro == "humble" {
		return 24
	}
	return 16
}
