package bridge

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxDomainID is the largest DDS domain id ROS 2 accepts (the RTPS port
// formula leaves no room above it).
const MaxDomainID = 232

// DomainFromEnv reads ROS_DOMAIN_ID (default 0) as ROS does: a whole
// number from 0 to 232, anything else is an error that says so.
func DomainFromEnv(getenv func(string) string) (uint32, error) {
	s := strings.TrimSpace(getenv("ROS_DOMAIN_ID"))
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v > MaxDomainID {
		return 0, fmt.Errorf("ROS_DOMAIN_ID=%q: must be a whole number from 0 to %d", getenv("ROS_DOMAIN_ID"), MaxDomainID)
	}
	return uint32(v), nil
}

// localhostConfig is what rmw_cyclonedds generates for localhost-only
// discovery: no multicast, the loopback peer, automatic participant indexes.
const localhostConfig = `<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>` +
	`<AllowMulticast>false</AllowMulticast></General><Discovery><ParticipantIndex>auto</ParticipantIndex>` +
	`<MaxAutoParticipantIndex>32</MaxAutoParticipantIndex><Peers><Peer address="localhost"/></Peers></Discovery></Domain></CycloneDDS>`

// DiscoveryConfig returns the CycloneDDS configuration the ROS environment
// asks for: "" to let CycloneDDS read CYCLONEDDS_URI (or its defaults), or
// the localhost-only configuration for ROS_LOCALHOST_ONLY=1 (Humble) or
// ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (Jazzy and later). A CYCLONEDDS_URI
// the user set always wins, as in rmw_cyclonedds.
func DiscoveryConfig(getenv func(string) string) (string, error) {
	if getenv("CYCLONEDDS_URI") != "" {
		return "", nil
	}
	switch r := strings.ToUpper(strings.TrimSpace(getenv("ROS_AUTOMATIC_DISCOVERY_RANGE"))); r {
	case "LOCALHOST":
		return localhostConfig, nil
	case "OFF":
		return "", fmt.Errorf("ROS_AUTOMATIC_DISCOVERY_RANGE=OFF: discovery is off, no ROS tool could see the bridge")
	case "", "SUBNET", "SYSTEM_DEFAULT":
	default:
		return "", fmt.Errorf("ROS_AUTOMATIC_DISCOVERY_RANGE=%q: expected SUBNET, LOCALHOST, OFF or SYSTEM_DEFAULT", r)
	}
	switch strings.TrimSpace(getenv("ROS_LOCALHOST_ONLY")) {
	case "1":
		return localhostConfig, nil
	case "", "0":
		return "", nil
	default:
		return "", fmt.Errorf("ROS_LOCALHOST_ONLY=%q: expected 0 or 1", getenv("ROS_LOCALHOST_ONLY"))
	}
}
