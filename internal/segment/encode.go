package segment

import (
	"encoding/binary"
	"os"
	"unsafe"
)

// SyntheticEndpoint is one endpoint of a synthetic segment.
type SyntheticEndpoint struct {
	Kind        Kind
	Name        string
	Node        int // index into SyntheticSpec.Nodes, or -1
	Aux         uint64
	CreatedMono uint64
	Counts      [CountersPerEndpoint]uint64 // put in lane 0: the slot's sums
	Generation  uint32                      // a reused slot's generation
	Base        [3]uint64                   // and what the entities before it counted
	QoS         *QoS                        // what the probe learnt of it at creation (nil: nothing)
	Bytes       *Bytes                      // its sizes (ROS_PULSE_BYTES=1); any endpoint's set: a bytes section
}

// SyntheticSpec describes a segment as the probe would write it. Tests and
// `pulse bench reader` use it; the probe itself never does.
type SyntheticSpec struct {
	Pid, Ppid        int
	StartMono        uint64
	StartReal        uint64 // wall clock at creation, ns
	Exe              string
	Cmdline          []string
	Nodes            []string
	Endpoints        []SyntheticEndpoint
	NodeCapacity     int // 0: len(Nodes) rounded up to 8
	EndpointCapacity int // 0: len(Endpoints) rounded up to 16
	Lanes            int // 0: 16
	Env              Env // the process's ROS environment
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// Encode lays spec out exactly as probe/src/segment_writer.c does and
// returns an 8-byte aligned buffer.
func Encode(spec SyntheticSpec) []byte {
	nodeCap := spec.NodeCapacity
	if nodeCap == 0 {
		nodeCap = max(8, roundUp(len(spec.Nodes), 8))
	}
	epCap := spec.EndpointCapacity
	if epCap == 0 {
		epCap = max(16, roundUp(len(spec.Endpoints), 16))
	}
	lanes := spec.Lanes
	if lanes == 0 {
		lanes = 16
	}
	align := func(x uint64) uint64 { return (x + 63) &^ 63 }
	nodeOff := uint64(HeaderSize)
	epOff := align(nodeOff + uint64(nodeCap)*uint64(unsafe.Sizeof(rawNode{})))
	laneOff := align(epOff + uint64(epCap)*uint64(unsafe.Sizeof(rawEndpoint{})))
	laneStride := uint64(epCap) * CountersPerEndpoint * 8
	qosOff := align(laneOff + uint64(lanes)*laneStride)
	qosStride := uint64(unsafe.Sizeof(rawQos{}))
	total := align(qosOff + uint64(epCap)*qosStride)
	bytesOff, bytesStride := uint64(0), uint64(unsafe.Sizeof(rawBytes{}))
	for _, e := range spec.Endpoints {
		if e.Bytes != nil && bytesOff == 0 { // the probe's extension place, after the others
			bytesOff = total
			total = align(bytesOff + uint64(epCap)*bytesStride)
		}
	}

	words := make([]uint64, total/8)
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), total)
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	h.Magic, h.AbiMajor, h.AbiMinor, h.HeaderSize, h.TotalSize = Magic, ABIMajor, ABIMinor, HeaderSize, total
	h.State, h.Pid, h.Ppid, h.Distro, h.StartMonoNs = SegmentReady, int32(spec.Pid), int32(spec.Ppid), DistroJazzy, spec.StartMono
	h.StartRealNs = spec.StartReal
	h.LaneCount, h.SectionCount, h.NodeCapacity, h.EndpointCapacity = uint32(lanes), 4, uint32(nodeCap), uint32(epCap)
	h.NodeCount, h.EndpointCount = uint32(len(spec.Nodes)), uint32(len(spec.Endpoints))
	h.LanesClaimed = 1 // the counts below are in lane 0, as one thread would have put them
	h.Sections[0] = rawSection{SectionNodes, uint32(nodeCap), nodeOff, uint64(unsafe.Sizeof(rawNode{}))}
	h.Sections[1] = rawSection{SectionEndpoints, uint32(epCap), epOff, uint64(unsafe.Sizeof(rawEndpoint{}))}
	h.Sections[2] = rawSection{SectionLanes, uint32(lanes), laneOff, laneStride}
	h.Sections[3] = rawSection{SectionQoS, uint32(epCap), qosOff, qosStride}
	if bytesOff != 0 {
		h.ExtSections[0], h.ExtSectionCount = rawSection{SectionBytes, uint32(epCap), bytesOff, bytesStride}, 1
	}
	env := &h.Env
	env.Flags = spec.Env.Flags
	copy(env.DomainId[:len(env.DomainId)-1], spec.Env.DomainID)
	copy(env.RmwImplementation[:len(env.RmwImplementation)-1], spec.Env.RMW)
	copy(env.LocalhostOnly[:len(env.LocalhostOnly)-1], spec.Env.LocalhostOnly)
	copy(env.DiscoveryRange[:len(env.DiscoveryRange)-1], spec.Env.DiscoveryRange)
	copy(env.StaticPeers[:len(env.StaticPeers)-1], spec.Env.StaticPeers)
	copy(h.Exe[:ExeMax-1], spec.Exe)
	n := 0
	for _, a := range spec.Cmdline {
		if n+len(a)+1 >= CmdlineMax {
			break
		}
		n += copy(h.Cmdline[n:], a) + 1
	}
	h.CmdlineLen = uint32(n)
	for i, name := range spec.Nodes {
		r := (*rawNode)(unsafe.Pointer(&mem[nodeOff+uint64(i)*uint64(unsafe.Sizeof(rawNode{}))]))
		r.State = RecordReady
		copy(r.Name[:NameMax-1], name)
	}
	for i, e := range spec.Endpoints {
		r := (*rawEndpoint)(unsafe.Pointer(&mem[epOff+uint64(i)*uint64(unsafe.Sizeof(rawEndpoint{}))]))
		r.State, r.Kind, r.Aux, r.CreatedMonoNs = RecordReady, uint16(e.Kind), e.Aux, e.CreatedMono
		r.Generation, r.Base = e.Generation, e.Base
		r.NodeIndex = NoNode
		if e.Node >= 0 {
			r.NodeIndex = uint32(e.Node)
		}
		copy(r.Name[:NameMax-1], e.Name)
		if q := e.QoS; q != nil {
			rq := (*rawQos)(unsafe.Pointer(&mem[qosOff+uint64(i)*qosStride]))
			rq.Seq, rq.Generation, rq.DomainId = 2, e.Generation, NoDomain
			if q.Domain >= 0 {
				rq.DomainId = uint32(q.Domain)
			}
			if q.Actual {
				rq.Flags |= QoSActual
				rq.History, rq.Depth, rq.Reliability, rq.Durability, rq.Liveliness = q.History, q.Depth, q.Reliability, q.Durability, q.Liveliness
				rq.DeadlineNs, rq.LifespanNs, rq.LeaseNs = q.DeadlineNs, q.LifespanNs, q.LeaseNs
			}
			copy(rq.Rmw[:RMWMax-1], q.RMW)
			copy(rq.Type[:TypeMax-1], q.Type)
		}
		for c := 0; c < CountersPerEndpoint; c++ {
			binary.LittleEndian.PutUint64(mem[laneOff+uint64(i)*CountersPerEndpoint*8+uint64(c)*8:], e.Counts[c])
		}
		if b := e.Bytes; b != nil {
			rb := (*rawBytes)(unsafe.Pointer(&mem[bytesOff+uint64(i)*bytesStride]))
			rb.SampledBytes, rb.Sampled, rb.ExactBytes, rb.Exact = b.SampledBytes, b.Sampled, b.ExactBytes, b.Exact
			rb.FixedSize, rb.MaxSize, rb.Every = b.FixedSize, b.MaxSize, b.Every
			if b.Typed {
				rb.Flags |= BytesTyped
			}
			if b.Unreadable {
				rb.Flags |= BytesUnreadable
			}
			if b.Wide {
				rb.Flags |= BytesWide
			}
		}
	}
	return mem
}

// WriteSynthetic writes Encode(spec) to path (mode 0600). Nobody holds its
// lock, so readers see it as the segment of an exited process.
func WriteSynthetic(path string, spec SyntheticSpec) error {
	return os.WriteFile(path, Encode(spec), 0o600)
}
