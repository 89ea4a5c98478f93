package bridge

import (
	"fmt"
	"net"
	"os"
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

// Discovery is how the bridge joins the ROS graph: the CycloneDDS
// configuration an rmw_cyclonedds node of the same distro would build from
// the same environment, and where each part came from.
type Discovery struct {
	Distro, DistroFrom string
	Range, RangeFrom   string // Humble: "localhost only" or "default"; Jazzy on: SUBNET, LOCALHOST, OFF, SYSTEM_DEFAULT
	Peers              []string
	PeersFrom          string
	URI                string   // CYCLONEDDS_URI as set ("" unset)
	Config             string   // what dds_create_domain gets: rmw's fragment, then CYCLONEDDS_URI
	Warnings           []string // what rcl and rmw_cyclonedds would warn of, in the same cases
}

// humbleLocalhost is rmw_cyclonedds' fragment for ROS_LOCALHOST_ONLY=1 on
// Humble (rmw_node.cpp, check_create_domain, humble branch): bind the
// domain to the loopback interface.
const humbleLocalhost = `<CycloneDDS><Domain><General><Interfaces><NetworkInterface address="127.0.0.1"/>` +
	`</Interfaces></General></Domain></CycloneDDS>,`

// humbleLoopbackPeer is what the bridge adds to humbleLocalhost when the
// loopback interface cannot multicast: CycloneDDS then turns multicast off
// and, with no peer, would discover nothing at all. rmw_fastrtps nodes with
// ROS_LOCALHOST_ONLY=1 still find each other there (over shared memory),
// and a Fast DDS participant listens on the RTPS well-known unicast port of
// its participant id, which this peer reaches. Automatic participant indexes
// make the bridge reachable the same way by peers that probe those ports.
const humbleLoopbackPeer = `<CycloneDDS><Domain><Discovery><ParticipantIndex>auto</ParticipantIndex>` +
	`<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>,`

// Host is what ComposeDiscovery needs to know of the machine.
type Host struct {
	LoopbackMulticast bool // the loopback interface is up and multicast-capable
}

// ThisHost looks at this machine's loopback interface.
func ThisHost() Host {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 && i.Flags&net.FlagUp != 0 {
			return Host{LoopbackMulticast: i.Flags&net.FlagMulticast != 0}
		}
	}
	return Host{}
}

// maxPeerLength is RMW_DISCOVERY_OPTIONS_STATIC_PEERS_MAX_LENGTH - 1.
const maxPeerLength = 255

// ComposeDiscovery builds the configuration by the rules of distro
// ("humble", or "jazzy"/"kilted" and later), as rcl reads the environment
// (rcl init.c, localhost.c, discovery_options.c) and rmw_cyclonedds turns
// the result into a CycloneDDS configuration (check_create_domain), which
// CycloneDDS merges with CYCLONEDDS_URI. A value rcl warns about gets the
// same warning and the same fallback. One addition of the bridge's own: see
// humbleLoopbackPeer.
func ComposeDiscovery(distro string, getenv func(string) string, host Host) Discovery {
	d := Discovery{Distro: distro, URI: getenv("CYCLONEDDS_URI")}
	localhost := getenv("ROS_LOCALHOST_ONLY")
	if distro == "humble" {
		d.Range, d.RangeFrom = "default", "default"
		if localhost == "1" {
			d.Range, d.RangeFrom = "localhost only", "ROS_LOCALHOST_ONLY"
			d.Config = humbleLocalhost
			if !host.LoopbackMulticast {
				d.Config += humbleLoopbackPeer
				d.Peers, d.PeersFrom = []string{"127.0.0.1"}, "pulse: the loopback interface cannot multicast"
			}
		}
		d.Config += d.URI
		return d
	}
	// Jazzy and later: ROS_LOCALHOST_ONLY is deprecated, and when it is 1
	// it overrides the range and drops the static peers.
	if localhost != "" {
		d.Warnings = append(d.Warnings, "ROS_LOCALHOST_ONLY is deprecated but still honored if it is enabled. "+
			"Use ROS_AUTOMATIC_DISCOVERY_RANGE and ROS_STATIC_PEERS instead.")
	}
	if localhost == "1" {
		d.Warnings = append(d.Warnings, "'localhost_only' is enabled, 'automatic_discovery_range' and 'static_peers' will be ignored.")
		d.Range, d.RangeFrom = "LOCALHOST", "ROS_LOCALHOST_ONLY"
	} else {
		if localhost != "" {
			d.Warnings = append(d.Warnings, "'localhost_only' is disabled, 'automatic_discovery_range' and 'static_peers' will be used.")
		}
		switch v := getenv("ROS_AUTOMATIC_DISCOVERY_RANGE"); v {
		case "":
			d.Range, d.RangeFrom = "SUBNET", "default"
		case "OFF", "LOCALHOST", "SUBNET", "SYSTEM_DEFAULT":
			d.Range, d.RangeFrom = v, "ROS_AUTOMATIC_DISCOVERY_RANGE"
		default:
			d.Warnings = append(d.Warnings, fmt.Sprintf("Invalid value '%s' specified for 'ROS_AUTOMATIC_DISCOVERY_RANGE', assuming localhost only", v))
			d.Range, d.RangeFrom = "LOCALHOST", "ROS_AUTOMATIC_DISCOVERY_RANGE (invalid)"
		}
		if d.Range != "OFF" { // rcl reads no peers for OFF
			for _, p := range strings.Split(getenv("ROS_STATIC_PEERS"), ";") {
				switch {
				case p == "":
				case len(p) > maxPeerLength:
					d.Warnings = append(d.Warnings, fmt.Sprintf("Static peer %.40s… specified to 'ROS_STATIC_PEERS' is too long (maximum of %d); skipping", p, maxPeerLength))
				default:
					d.Peers = append(d.Peers, p)
				}
			}
			if len(d.Peers) > 0 {
				d.PeersFrom = "ROS_STATIC_PEERS"
			}
		}
	}
	localhostPeer, staticPeers, noMulticast := false, false, false
	switch d.Range {
	case "SUBNET":
		staticPeers = true
	case "SYSTEM_DEFAULT":
		if len(d.Peers) > 0 {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%d static peers were specified, but discovery is set to use the RMW "+
				"implementation default, so these static peers will be ignored.", len(d.Peers)))
		}
	case "LOCALHOST":
		localhostPeer, staticPeers, noMulticast = true, true, true
	case "OFF":
		noMulticast = true
	}
	if !staticPeers {
		d.Peers, d.PeersFrom = nil, ""
	}
	if localhostPeer || staticPeers || noMulticast {
		var b strings.Builder
		b.WriteString("<CycloneDDS><Domain>")
		if noMulticast {
			b.WriteString("<General><AllowMulticast>false</AllowMulticast></General>")
		}
		if noMulticast && !localhostPeer && !staticPeers {
			// OFF: a tag no other process has, so nothing is discovered automatically.
			fmt.Fprintf(&b, "<Discovery><ParticipantIndex>none</ParticipantIndex><Tag>ros_discovery_off_%d</Tag>", os.Getpid())
		} else {
			b.WriteString("<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>")
		}
		if localhostPeer || len(d.Peers) > 0 {
			b.WriteString("<Peers>")
			if localhostPeer {
				b.WriteString(`<Peer address="localhost"/>`)
			}
			for _, p := range d.Peers {
				fmt.Fprintf(&b, `<Peer address="%s"/>`, xmlEscape(p))
			}
			b.WriteString("</Peers>")
		}
		b.WriteString("</Discovery></Domain></CycloneDDS>,")
		d.Config = b.String()
	}
	d.Config += d.URI
	return d
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}

// CheckURI refuses a CYCLONEDDS_URI that names a file that cannot be read:
// CycloneDDS would stop with a vague error (and a ROS node would not start).
func CheckURI(uri string) error {
	for _, part := range strings.Split(uri, ",") {
		part = strings.TrimSpace(part)
		if !strings.HasPrefix(part, "file://") {
			continue // inline XML, or empty
		}
		path := strings.TrimPrefix(part, "file://")
		if _, err := os.ReadFile(path); err != nil {
			return fmt.Errorf("CYCLONEDDS_URI names %s: %v", path, err)
		}
	}
	return nil
}

// Describe is the one line the bridge prints at start: the domain, the
// distro's rules, the discovery range, the peers, the interfaces, and
// where each came from.
func (d Discovery) Describe(domain uint32, domainFrom string) string {
	peers := "none"
	if len(d.Peers) > 0 {
		peers = strings.Join(d.Peers, ",") + " (from " + d.PeersFrom + ")"
	}
	iface := "CycloneDDS's choice"
	switch {
	case d.Distro == "humble" && d.Range == "localhost only":
		iface = "127.0.0.1 (rmw_cyclonedds, ROS_LOCALHOST_ONLY=1)"
	case d.Range == "LOCALHOST":
		iface = "CycloneDDS's choice, no multicast, peer localhost"
	case d.Range == "OFF":
		iface = "CycloneDDS's choice, no multicast, no discovery"
	}
	uri := "unset"
	if d.URI != "" {
		uri = d.URI
	}
	return fmt.Sprintf("domain %d (from %s); %s rules (from %s); discovery range %s (from %s); static peers %s; interfaces %s; CYCLONEDDS_URI %s",
		domain, domainFrom, d.Distro, d.DistroFrom, d.Range, d.RangeFrom, peers, iface, uri)
}
