package segment

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Kind is an endpoint kind.
type Kind uint16

func (k Kind) String() string {
	switch k {
	case KindPublisher:
		return "pub"
	case KindSubscription:
		return "sub"
	case KindTimer:
		return "timer"
	case KindService:
		return "service"
	case KindClient:
		return "client"
	}
	return fmt.Sprintf("kind(%d)", uint16(k))
}

// Distro is what the probe found in the loaded libtracetools.
type Distro uint32

func (d Distro) String() string {
	switch d {
	case DistroHumble:
		return "humble"
	case DistroJazzy:
		return "jazzy"
	case DistroKilted:
		return "kilted"
	}
	return "unknown"
}

// Node is one rcl_node_init seen by a process.
type Node struct {
	Name        string
	CreatedMono uint64
}

// Endpoint is a publisher, subscription, timer or service with its counters
// summed over all lanes.
type Endpoint struct {
	Index       int
	Kind        Kind
	Name        string
	Node        int // index into Snapshot.Nodes, or -1
	Aux         uint64
	CreatedMono uint64
	Flags       uint32
	Generation  uint32                      // the slot's reuse count: another generation is another entity (ABI 1.3)
	Base        [3]uint64                   // the slot's counter sums when this entity took it: what the entities before it counted
	Counts      [CountersPerEndpoint]uint64 // this entity's own counts (the slot's sums minus Base)
	Gap         *Gap                        // nil unless the process runs with gap tracking
	Latency     *Gap                        // a subscription's receive latency; nil unless latency tracking is on (LastMono is then CLOCK_REALTIME)
	Timing      *Timing                     // a subscription's, timer's or service's callback durations; nil when timing is off (ABI 1.4)
	Lateness    *Lateness                   // a timer's calls against its schedule; nil when timing is off
	QoS         *QoS                        // a publisher's or subscription's QoS, type, rmw and domain; nil when not learnt (ABI 1.5)
	Calls       *Calls                      // a service's or client's calls; nil when timing is off or before ABI 1.6
	Bytes       Bytes                       // a publisher's or subscription's message sizes; zero unless bytes are on (ABI 1.9)
}

// Bytes is how big an endpoint's messages are (see rp_bytes in segment.h,
// design note 0033): sizes serialized, 4-byte header included. Sums and
// counts are monotonic for the endpoint's generation.
type Bytes struct {
	Typed      bool   // its type was read: FixedSize, or samples to come
	Unreadable bool   // a type support was given but could not be read: not measured
	Wide       bool   // wchar/wstring members: their wire size depends on the rmw
	FixedSize  uint32 // every typed message's size; 0: it varies (sampled)
	MaxSize    uint32 // the largest message sized
	Every      uint32 // one message in this many is sized now
	// SampledBytes over Sampled: the sampled messages' sizes; ExactBytes
	// over Exact: the serialized publishes' and takes', known per message.
	SampledBytes, Sampled, ExactBytes, Exact uint64
}

// Calls are a service server's or client's calls (see rp_calls in
// segment.h): server, requests taken and answered, handling time from take
// to response; client, requests sent and answered, round trip. Counts are
// monotonic; bucket counts wrap modulo 2^32.
type Calls struct {
	Started   uint64
	Answered  uint64
	Unmatched uint64 // responses whose call was not (or no longer) open
	Evicted   uint64 // calls still open when a newer call took their ring entry
	// SendFailed (ABI 1.8; 0 before): a server's responses rcl_send_response
	// refused (RCL_RET_TIMEOUT: the client went away before the answer). Their
	// calls are closed: neither answered nor open, and not in the durations.
	SendFailed    uint64
	HasSendFailed bool // the record has SendFailed (ABI 1.8): else a refused response was not seen
	SumNs         uint64
	Buckets       [TimeBuckets]uint32
	Open          []uint64 // CLOCK_MONOTONIC starts of the calls open now (at most CallRing), oldest first
}

// QoS is what the probe learnt of a publisher or subscription when rcl
// created it (see rp_qos in segment.h). Policy values are rmw's enums.
type QoS struct {
	Actual        bool   // History..Lease hold the QoS the rmw gave it; false: QoS unknown
	History       uint8  // 1 keep last, 2 keep all
	Depth         uint32 // keep last: the queue
	Reliability   uint8  // 1 reliable, 2 best effort
	Durability    uint8  // 1 transient local, 2 volatile
	Liveliness    uint8  // 1 automatic, 3 manual by topic
	DeadlineNs    uint64 // 0: unspecified; DurationInfinite
	LifespanNs    uint64
	LeaseNs       uint64
	AvoidRosNS    bool   // a raw DDS topic name (avoid_ros_namespace_conventions)
	Domain        int    // the node's ROS domain; -1 unknown
	RMW           string // the rmw implementation of its rmw handle; "" unknown
	Type          string // "pkg/msg/Type"; "" unknown
	TypeTruncated bool
}

// Env is a process's ROS environment when its segment was made (ABI 1.5).
type Env struct {
	Flags          uint32 `json:"flags"` // Env* bits: which variables were set
	DomainID       string `json:"ROS_DOMAIN_ID,omitempty"`
	RMW            string `json:"RMW_IMPLEMENTATION,omitempty"`
	LocalhostOnly  string `json:"ROS_LOCALHOST_ONLY,omitempty"`
	DiscoveryRange string `json:"ROS_AUTOMATIC_DISCOVERY_RANGE,omitempty"`
	StaticPeers    string `json:"ROS_STATIC_PEERS,omitempty"`
}

// Set reports whether the variable of bit (EnvDomainID, ...) was set.
func (e *Env) Set(bit uint32) bool { return e != nil && e.Flags&bit != 0 }

// Timing is an endpoint's callback durations (see rp_timing in segment.h).
// Every field is monotonic; bucket counts wrap modulo 2^32.
type Timing struct {
	SumNs    uint64
	Unended  uint64 // starts abandoned without their end (an exception, a deferred service response)
	Overruns uint64 // timer: callbacks longer than the period
	Buckets  [TimeBuckets]uint32
	Used     BucketSet // the buckets that may count; every other one is 0
	Function string    // its callbacks' function (rclcpp_callback_register), "" until named or unnamable; cut at SymbolMax-1 bytes
}

// Lateness is a timer's calls against its own schedule.
type Lateness struct {
	SumNs   uint64
	Buckets [TimeBuckets]uint32
	Used    BucketSet // as Timing's
}

// BucketSet is a set of a time histogram's buckets, bit b of word b/64 for
// bucket b: since ABI 1.10 the probe marks each bucket that ever counted.
type BucketSet [TimeBucketWords]uint64

// AllBuckets holds every bucket: what a histogram without marks may use.
var AllBuckets = func() (s BucketSet) {
	for b := 0; b < TimeBuckets; b++ {
		s[b/64] |= 1 << (b % 64)
	}
	return s
}()

// Each yields every bucket of s, lowest first.
func (s *BucketSet) Each() iter.Seq[int] {
	return func(yield func(int) bool) {
		for w, m := range s {
			for ; m != 0; m &= m - 1 {
				if !yield(w*64 + bits.TrailingZeros64(m)) {
					return
				}
			}
		}
	}
}

// Thread is one thread's busy time (see rp_thread in segment.h), read
// consistently under the record's seqlock.
type Thread struct {
	Lane      int
	Tid       int
	Name      string
	BusyNs    uint64 // inside ended outermost callbacks
	OpenNs    uint64 // CLOCK_MONOTONIC start of the outermost callback running now; 0 = none
	Callbacks uint64 // outermost callbacks ended
	Node      int    // index into Snapshot.Nodes of its last outermost callback, or -1
	WaitNs    uint64 // inside rcl_wait, ended waits
	WaitOpen  uint64 // CLOCK_MONOTONIC start of the rcl_wait running now; 0 = none
	Waits     uint64 // rcl_wait calls ended
}

// BusyAt is the thread's time inside outermost callbacks as of mono
// (CLOCK_MONOTONIC ns), the callback running now counted up to then.
func (t *Thread) BusyAt(mono uint64) uint64 { return upTo(t.BusyNs, t.OpenNs, mono) }

// WaitAt is the thread's time inside rcl_wait as of mono, the wait running now counted up to then.
func (t *Thread) WaitAt(mono uint64) uint64 { return upTo(t.WaitNs, t.WaitOpen, mono) }

// Waiter reports whether the thread waits through rcl_wait (an executor thread, any client library).
func (t *Thread) Waiter() bool { return t.Waits > 0 || t.WaitOpen != 0 }

// upTo adds to sum the part of an interval open since open (0: none) that lies before mono.
func upTo(sum, open, mono uint64) uint64 {
	if open != 0 && mono > open {
		return sum + (mono - open)
	}
	return sum
}

// Gap is an endpoint's inter-arrival histogram (see rp_gap in segment.h).
type Gap struct {
	LastMono       uint64 // CLOCK_MONOTONIC of the last message; 0 = none yet
	SumNs          uint64
	IntraPublisher bool
	Buckets        [GapBuckets]uint32
}

// Retired reports whether the endpoint's handle was re-used for another entity.
func (e *Endpoint) Retired() bool { return e.Flags&FlagRetired != 0 }

// Snapshot is one validated reading of a segment.
type Snapshot struct {
	Path             string
	Pid, Ppid        int
	Distro           Distro
	StartMono        uint64
	StartReal        uint64
	ProcStartTicks   uint64
	Exe              string
	Cmdline          []string
	Nodes            []Node
	Endpoints        []Endpoint
	DroppedNodes     uint64
	DroppedEndpoints uint64
	DroppedHandles   uint64
	LanesClaimed     uint32
	CacheMisses      uint64
	Threads          []Thread // threads that ran a callback on a private lane (ABI 1.4 with timing on)
	Timing           bool     // the process times callbacks (ABI 1.4, ROS_PULSE_TIMING not 0)
	Env              *Env     // its ROS environment; nil before ABI 1.5
	Links            []Link   // which input each callback's publishes came from (ABI 1.9); nil unless links are on
	LinksOn          bool     // the process runs with ROS_PULSE_LINKS=1 (a links section)
	BytesOn          bool     // the process runs with ROS_PULSE_BYTES=1 (a bytes section)
	Corrupt          int      // records skipped because they failed validation

	Alive bool // set by Reader: the probe's lock is held
	// OwnPid, set by Reader for a process in another PID namespace than the
	// reader's: the pid it knows itself by (its segment's), while Pid is its
	// pid in the reader's namespace, learnt from the lock it holds. 0 otherwise.
	OwnPid int

	key   string    // Key(), kept by the Reader per mapping
	times *timeSlab // its endpoints' Timing and Lateness
}

// Key identifies one process image's segment across snapshots.
func (s *Snapshot) Key() string {
	if s.key != "" {
		return s.key
	}
	return s.Path + "@" + strconv.FormatUint(s.StartMono, 10)
}

// FindEndpoint returns the endpoint with record index i in eps, which a
// snapshot lists in index order (records not ready yet are skipped), or nil.
func FindEndpoint(eps []Endpoint, i int) *Endpoint {
	if i < len(eps) && eps[i].Index == i { // no record skipped before it: the usual case
		return &eps[i]
	}
	j := sort.Search(len(eps), func(j int) bool { return eps[j].Index >= i })
	if j < len(eps) && eps[j].Index == i {
		return &eps[j]
	}
	return nil
}

// ErrNotReady means the segment is still being created (no magic yet).
var ErrNotReady = errors.New("segment is still being initialised")

func load32(p *uint32) uint32 { return atomic.LoadUint32(p) }
func load64(p *uint64) uint64 { return atomic.LoadUint64(p) }

func cString(b []byte) (string, bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", false
	}
	return string(b[:i]), true
}

// Parse validates mem, the bytes of one segment file, and returns its
// snapshot. mem must be 8-byte aligned (an mmap is) and may be written
// concurrently by the owning probe: published fields are read with atomic
// loads, and nothing read from mem is trusted without a bounds check.
func Parse(mem []byte) (*Snapshot, error) { return parse(mem, nil) }

// mappingCache is what a reader keeps per mapping between scans. A record's
// name never changes once the record is published, so each name is converted
// once instead of every scan; spare is an endpoint list handed back by
// Reader.Recycle for the next parse to fill.
type mappingCache struct {
	nodes, endpoints []*string
	generations      []uint32 // of the endpoint names cached: a reused slot has another name
	qos              []cachedQoS
	env              *Env // the header's, shared read-only by every snapshot of the mapping
	envCorrupt       int
	spare            []Endpoint
	spareTimes       *timeSlab
	functions        []cachedFunction // callbacks' function names, by endpoint record
}

// cachedFunction is a callback's function name as read for the record's
// generation: the probe writes it once, so it is converted once.
type cachedFunction struct {
	gen  uint32
	name string
}

// timeSlab holds a snapshot's Timing, Lateness and Calls records: three
// allocations a snapshot instead of two or three an endpoint (they were most of a robot's
// garbage), handed back by Reader.Recycle for the next parse to refill.
type timeSlab struct {
	timings   []Timing
	latenesss []Lateness
	calls     []Calls // a robot's ~1,000 idle parameter services were one allocation each a scan
}

// take returns the next free element of *list, growing it by a new array
// when full (the elements already taken stay where they are).
func take[T any](list *[]T) *T {
	if len(*list) == cap(*list) {
		*list = make([]T, 0, max(16, 2*cap(*list)))
	}
	*list = (*list)[:len(*list)+1]
	return &(*list)[len(*list)-1]
}

func cached(list *[]*string, i uint32, read func() (string, bool)) (string, bool) {
	if int(i) < len(*list) && (*list)[i] != nil {
		return *(*list)[i], true
	}
	v, ok := read()
	if ok {
		for uint32(len(*list)) <= i {
			*list = append(*list, nil)
		}
		(*list)[i] = &v
	}
	return v, ok
}

func parse(mem []byte, names *mappingCache) (*Snapshot, error) {
	if names == nil {
		names = &mappingCache{}
	}
	if len(mem) < HeaderSize {
		return nil, fmt.Errorf("truncated: %d bytes, the header alone is %d", len(mem), HeaderSize)
	}
	if uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return nil, errors.New("internal error: segment buffer is not 8-byte aligned")
	}
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	switch magic := load64(&h.Magic); {
	case magic == 0:
		return nil, ErrNotReady
	case magic != Magic:
		return nil, fmt.Errorf("bad magic %#x: not a ros2_pulse segment", magic)
	}
	if h.AbiMajor != ABIMajor {
		return nil, fmt.Errorf("unsupported ABI %d.%d (this pulse reads %d.x)", h.AbiMajor, h.AbiMinor, ABIMajor)
	}
	if h.HeaderSize != HeaderSize {
		return nil, fmt.Errorf("header size %d, expected %d", h.HeaderSize, HeaderSize)
	}
	total := h.TotalSize
	if total < HeaderSize || total > uint64(len(mem)) {
		return nil, fmt.Errorf("declared size %d does not fit the %d-byte file", total, len(mem))
	}
	if h.SectionCount > MaxSections {
		return nil, fmt.Errorf("section count %d exceeds %d", h.SectionCount, MaxSections)
	}
	sections := h.Sections[:h.SectionCount]
	if h.AbiMinor >= 6 { // ABI 1.6: the sections that did not fit in Sections
		if h.ExtSectionCount > MaxSections {
			return nil, fmt.Errorf("extension section count %d exceeds %d", h.ExtSectionCount, MaxSections)
		}
		sections = append(sections[:len(sections):len(sections)], h.ExtSections[:h.ExtSectionCount]...)
	}

	var nodesSec, epSec, laneSec, gapSec, latSec, timingSec, threadSec, qosSec, callsSec, linksSec, bytesSec *rawSection
	type span struct{ lo, hi uint64 }
	var spans []span
	for i := range sections {
		s := &sections[i]
		if s.Offset < HeaderSize || s.Offset%8 != 0 || s.Stride%8 != 0 {
			return nil, fmt.Errorf("section %d (kind %d): misplaced at offset %d stride %d", i, s.Kind, s.Offset, s.Stride)
		}
		hi, size := bits.Mul64(uint64(s.Count), s.Stride)
		if hi != 0 || size > total || s.Offset > total-size {
			return nil, fmt.Errorf("section %d (kind %d): %d x %d bytes at %d overruns the %d-byte segment", i, s.Kind, s.Count, s.Stride, s.Offset, total)
		}
		for _, o := range spans {
			if s.Offset < o.hi && o.lo < s.Offset+size {
				return nil, fmt.Errorf("section %d (kind %d) overlaps another section", i, s.Kind)
			}
		}
		spans = append(spans, span{s.Offset, s.Offset + size})
		var slot **rawSection
		switch s.Kind {
		case SectionNodes:
			slot = &nodesSec
		case SectionEndpoints:
			slot = &epSec
		case SectionLanes:
			slot = &laneSec
		case SectionGaps:
			slot = &gapSec
		case SectionLatency:
			slot = &latSec
		case SectionTiming:
			slot = &timingSec
		case SectionThreads:
			slot = &threadSec
		case SectionQoS:
			slot = &qosSec
		case SectionCalls:
			slot = &callsSec
		case SectionLinks:
			slot = &linksSec
		case SectionBytes:
			slot = &bytesSec
		default:
			continue // a later minor version's section: not ours to read
		}
		if *slot != nil {
			return nil, fmt.Errorf("section kind %d appears twice", s.Kind)
		}
		*slot = s
	}
	if nodesSec == nil || epSec == nil || laneSec == nil {
		return nil, errors.New("missing node, endpoint or lane section")
	}
	if nodesSec.Stride < uint64(unsafe.Sizeof(rawNode{})) || epSec.Stride < uint64(unsafe.Sizeof(rawEndpoint{})) {
		return nil, errors.New("node or endpoint records are smaller than this ABI's")
	}
	if nodesSec.Count != h.NodeCapacity || epSec.Count != h.EndpointCapacity || laneSec.Count != h.LaneCount {
		return nil, errors.New("section counts disagree with the header's capacities")
	}
	if h.LaneCount == 0 || laneSec.Stride < uint64(h.EndpointCapacity)*CountersPerEndpoint*8 {
		return nil, errors.New("lane section too small for the endpoint table")
	}
	gapSize := uint64(unsafe.Sizeof(rawGap{}))
	if h.AbiMinor < 7 {
		gapSize = uint64(unsafe.Offsetof(rawGap{}.FirstMonoNs)) // first_mono_ns came with 1.7
	}
	if gapSec != nil && (gapSec.Count != h.EndpointCapacity || gapSec.Stride < gapSize) {
		return nil, errors.New("gap section does not match the endpoint table")
	}
	if latSec != nil && (latSec.Count != h.EndpointCapacity || latSec.Stride < gapSize) {
		return nil, errors.New("latency section does not match the endpoint table")
	}
	if timingSec != nil && (timingSec.Count != h.EndpointCapacity || timingSec.Stride < uint64(unsafe.Offsetof(rawTiming{}.Used))) {
		return nil, errors.New("timing section does not match the endpoint table")
	}
	// ABI 1.10 marks each histogram's used buckets after the record's 1.4 fields.
	timingMarked := timingSec != nil && h.AbiMinor >= 10 && timingSec.Stride >= uint64(unsafe.Sizeof(rawTiming{}))
	if threadSec != nil && (threadSec.Count != h.LaneCount-1 || threadSec.Stride < uint64(unsafe.Sizeof(rawThread{}))) {
		return nil, errors.New("thread section does not match the lanes")
	}
	if qosSec != nil && (qosSec.Count != h.EndpointCapacity || qosSec.Stride < uint64(unsafe.Sizeof(rawQos{}))) {
		return nil, errors.New("QoS section does not match the endpoint table")
	}
	if callsSec != nil && (callsSec.Count != h.EndpointCapacity || callsSec.Stride < uint64(unsafe.Sizeof(rawCalls{}))) {
		return nil, errors.New("calls section does not match the endpoint table")
	}
	if linksSec != nil && (linksSec.Count > h.EndpointCapacity || linksSec.Stride < uint64(unsafe.Sizeof(rawLink{}))) {
		return nil, errors.New("links section is larger than the endpoint table or its records smaller than this ABI's")
	}
	if bytesSec != nil && (bytesSec.Count != h.EndpointCapacity || bytesSec.Stride < uint64(unsafe.Sizeof(rawBytes{}))) {
		return nil, errors.New("bytes section does not match the endpoint table")
	}

	snap := &Snapshot{
		Pid:              int(h.Pid),
		Ppid:             int(h.Ppid),
		Distro:           Distro(h.Distro),
		StartMono:        h.StartMonoNs,
		StartReal:        h.StartRealNs,
		ProcStartTicks:   h.ProcStartTicks,
		DroppedNodes:     load64(&h.DroppedNodes),
		DroppedEndpoints: load64(&h.DroppedEndpoints),
		DroppedHandles:   load64(&h.DroppedHandles),
		LanesClaimed:     load32(&h.LanesClaimed),
		CacheMisses:      load64(&h.CacheMisses),
	}
	if h.AbiMinor >= 5 { // written before the segment was published, never after: read once per mapping
		if names.env == nil {
			names.env = readEnv(&h.Env, &names.envCorrupt)
		}
		snap.Env, snap.Corrupt = names.env, snap.Corrupt+names.envCorrupt
	}
	if exe, ok := cString(h.Exe[:]); ok {
		snap.Exe = exe
	} else {
		snap.Corrupt++
	}
	if n := h.CmdlineLen; n <= CmdlineMax {
		args := bytes.Split(bytes.TrimRight(h.Cmdline[:n], "\x00"), []byte{0})
		for _, a := range args {
			if len(a) > 0 {
				snap.Cmdline = append(snap.Cmdline, string(a))
			}
		}
	} else {
		snap.Corrupt++
	}

	nodeCount := load32(&h.NodeCount)
	if nodeCount > h.NodeCapacity {
		return nil, fmt.Errorf("node count %d exceeds capacity %d", nodeCount, h.NodeCapacity)
	}
	nodeIndex := make([]int, nodeCount) // record index -> Snapshot.Nodes index
	snap.Nodes = make([]Node, 0, nodeCount)
	for i := uint32(0); i < nodeCount; i++ {
		nodeIndex[i] = -1
		off := nodesSec.Offset + uint64(i)*nodesSec.Stride
		r := (*rawNode)(unsafe.Pointer(&mem[off]))
		if load32(&r.State) != RecordReady {
			continue
		}
		name, ok := cached(&names.nodes, i, func() (string, bool) { return cString(r.Name[:]) })
		if !ok {
			snap.Corrupt++
			continue
		}
		nodeIndex[i] = len(snap.Nodes)
		snap.Nodes = append(snap.Nodes, Node{Name: name, CreatedMono: r.CreatedMonoNs})
	}

	// Lanes are handed out lowest first: with k private lanes ever claimed,
	// only lanes 0..k-1 can hold counts, and the shared last lane only once
	// every private lane was taken.
	lanes := h.LaneCount
	if claimed := load32(&h.LanesClaimed); claimed < h.LaneCount-1 {
		lanes = claimed
	}
	epCount := load32(&h.EndpointCount)
	if epCount > h.EndpointCapacity {
		return nil, fmt.Errorf("endpoint count %d exceeds capacity %d", epCount, h.EndpointCapacity)
	}
	if cap(names.spare) >= int(epCount) {
		snap.Endpoints, names.spare = names.spare[:0], nil
	} else {
		snap.Endpoints = make([]Endpoint, 0, epCount)
	}
	retries := 0
	if timingSec != nil || callsSec != nil {
		if snap.times = names.spareTimes; snap.times == nil {
			snap.times = &timeSlab{}
		}
		names.spareTimes = nil
		snap.times.timings, snap.times.latenesss, snap.times.calls = snap.times.timings[:0], snap.times.latenesss[:0], snap.times.calls[:0]
	}
	for i := uint32(0); i < epCount; i++ {
		off := epSec.Offset + uint64(i)*epSec.Stride
		r := (*rawEndpoint)(unsafe.Pointer(&mem[off]))
		if load32(&r.State) != RecordReady {
			continue
		}
		gen := load32(&r.Generation)
		for uint32(len(names.generations)) <= i {
			names.generations = append(names.generations, 0)
		}
		if names.generations[i] != gen && int(i) < len(names.endpoints) {
			names.endpoints[i] = nil // the slot was reused: read its new name
		}
		names.generations[i] = gen
		kind := Kind(r.Kind)
		name, ok := cached(&names.endpoints, i, func() (string, bool) { return cString(r.Name[:]) })
		if !ok || kind < KindPublisher || kind > KindClient {
			snap.Corrupt++
			continue
		}
		// Read in place: an Endpoint is large, and copied into the list it was a tenth of a scan.
		snap.Endpoints = append(snap.Endpoints, Endpoint{})
		ep := &snap.Endpoints[len(snap.Endpoints)-1]
		ep.Index, ep.Kind, ep.Name, ep.Node, ep.Aux = int(i), kind, name, -1, r.Aux
		ep.CreatedMono, ep.Flags, ep.Generation = r.CreatedMonoNs, load32(&r.Flags), gen
		for c := range ep.Base {
			ep.Base[c] = load64(&r.Base[c])
		}
		if ni := load32(&r.NodeIndex); ni != NoNode {
			if ni < nodeCount && nodeIndex[ni] >= 0 {
				ep.Node = nodeIndex[ni]
			} else {
				snap.Corrupt++
			}
		}
		for lane := uint32(0); lane < lanes; lane++ {
			base := laneSec.Offset + uint64(lane)*laneSec.Stride + uint64(i)*CountersPerEndpoint*8
			for c := 0; c < CountersPerEndpoint; c++ {
				ep.Counts[c] += load64((*uint64)(unsafe.Pointer(&mem[base+uint64(c)*8])))
			}
		}
		if gapSec != nil {
			ep.Gap = readGap(mem, gapSec, i, h.AbiMinor >= 7)
		}
		if latSec != nil && ep.Kind == KindSubscription {
			ep.Latency = readGap(mem, latSec, i, false)
		}
		if timingSec != nil && ep.Kind != KindPublisher {
			ep.Timing, ep.Lateness = readTiming(mem, timingSec, i, ep.Kind == KindTimer, timingMarked, snap.times, gen, names.function(i))
		}
		if callsSec != nil && (ep.Kind == KindService || ep.Kind == KindClient) {
			ep.Calls = readCalls(mem, callsSec, i, h.AbiMinor >= 7 && ep.Kind == KindClient, h.AbiMinor >= 8, snap.times)
		}
		if qosSec != nil && (ep.Kind == KindPublisher || ep.Kind == KindSubscription) {
			ep.QoS = readQoS(mem, qosSec, i, gen, &names.qos, &snap.Corrupt)
		}
		if bytesSec != nil && (ep.Kind == KindPublisher || ep.Kind == KindSubscription) {
			ep.Bytes = readBytes(mem, bytesSec, i)
		}
		// The record was being rewritten for a new entity while we read it
		// (microseconds, under the probe's init mutex): read it again, and if
		// it is still changing, take it next scan.
		if load32(&r.State) != RecordReady || load32(&r.Generation) != gen {
			snap.Endpoints = snap.Endpoints[:len(snap.Endpoints)-1]
			if retries < 100 {
				retries++
				runtime.Gosched()
				i--
			}
			continue
		}
		for c := range ep.Base {
			ep.Counts[c] = ep.Counts[c] - min(ep.Counts[c], ep.Base[c])
		}
	}
	if timingSec != nil {
		snap.Timing = true
		snap.Threads = readThreads(mem, threadSec, snap.Endpoints)
	}
	snap.BytesOn = bytesSec != nil
	if linksSec != nil {
		snap.LinksOn = true
		snap.Links = readLinks(mem, linksSec, snap)
	}
	return snap, nil
}

// readBytes reads record i of the bytes section. A size being added may be
// in its sum and not yet in its count (or the reverse on arm64): one sample
// off for one read, whole at the next. A record with flags it cannot have
// (typed and unreadable) is read as unreadable.
func readBytes(mem []byte, sec *rawSection, i uint32) Bytes {
	r := (*rawBytes)(unsafe.Pointer(&mem[sec.Offset+uint64(i)*sec.Stride]))
	flags := load32(&r.Flags)
	b := Bytes{
		Typed: flags&BytesTyped != 0, Unreadable: flags&BytesUnreadable != 0, Wide: flags&BytesWide != 0,
		FixedSize: load32(&r.FixedSize), MaxSize: load32(&r.MaxSize), Every: load32(&r.Every),
	}
	b.SampledBytes, b.ExactBytes = load64(&r.SampledBytes), load64(&r.ExactBytes)
	b.Sampled, b.Exact = load64(&r.Sampled), load64(&r.Exact)
	if b.Typed && b.Unreadable {
		b.Typed, b.FixedSize = false, 0
	}
	return b
}

// function is where the function name of endpoint record i is cached.
func (m *mappingCache) function(i uint32) *cachedFunction {
	for uint32(len(m.functions)) <= i {
		m.functions = append(m.functions, cachedFunction{gen: ^uint32(0)})
	}
	return &m.functions[i]
}

// readTiming copies record i of the timing section into the slab:
// durations, and for a timer its lateness. fn caches the function name of
// the endpoint record's generation gen. marked: the record marks its used
// buckets (ABI 1.10).
func readTiming(mem []byte, sec *rawSection, i uint32, timer, marked bool, slab *timeSlab, gen uint32, fn *cachedFunction) (*Timing, *Lateness) {
	r := (*rawTiming)(unsafe.Pointer(&mem[sec.Offset+uint64(i)*sec.Stride]))
	t := take(&slab.timings)
	t.SumNs, t.Unended, t.Overruns, t.Function = load64(&r.SumNs), load64(&r.Unended), load64(&r.Overruns), ""
	// A record nothing was ever timed into (most of them: a node's idle
	// parameter services) is not read bucket by bucket: every timed
	// duration adds to the sum before its bucket, so a sum of 0 means empty
	// buckets, or a count on its way that the next read, with a sum, takes
	// whole (the buckets are cumulative). Only a first duration of 0 ns (a
	// clock that did not advance) would wait for the next duration.
	if t.SumNs == 0 {
		clearBuckets(&t.Buckets, &t.Used)
	} else {
		readBuckets(&t.Buckets, &t.Used, &r.Buckets, &r.Used, marked)
	}
	if fn.gen == gen {
		t.Function = fn.name
	} else if n := load32(&r.SymbolLen); n > 0 && n < SymbolMax {
		// The name's bytes are written before its length (release): a length
		// read first covers complete bytes. Hostile bytes are replaced, never
		// trusted. Once named, a record keeps its name until it is reused.
		b := r.Symbol[:n]
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i] // a length past the name's end: the name, not its padding
		}
		t.Function = callbackName(strings.ToValidUTF8(string(b), "\uFFFD"))
		*fn = cachedFunction{gen: gen, name: t.Function}
	}
	if !timer {
		return t, nil
	}
	l := take(&slab.latenesss)
	l.SumNs = load64(&r.LateSumNs)
	readBuckets(&l.Buckets, &l.Used, &r.LateBuckets, &r.LateUsed, marked)
	return t, l
}

// readBuckets copies a time histogram's buckets into dst and the buckets
// that may count into set. marked (ABI 1.10): only the buckets the record
// marks, the others 0; a mark is read before its bucket, so the bucket
// holds at least the count that set it. Unmarked: every bucket.
//
// dst and set come from a recycled slab, where every bucket outside set is
// already 0: only those inside are cleared, and only those the new marks
// do not overwrite. A scan writes a few lines of
// each of ~2,000 histograms at robot size, where clearing all 800 bytes of
// each, out of cache, was most of the scan (docs/PERFORMANCE.md §27).
func readBuckets(dst *[TimeBuckets]uint32, set *BucketSet, src *[TimeBuckets]uint32, used *BucketSet, marked bool) {
	if !marked {
		for b := range dst {
			dst[b] = load32(&src[b])
		}
		*set = AllBuckets
		return
	}
	var now BucketSet
	for w := range now {
		now[w] = load64(&used[w]) & AllBuckets[w] // a hostile mark past the last bucket is dropped
	}
	// Only the old set's buckets outside the new one are cleared: a slab
	// record mostly comes back to the endpoint it held, whose marks grew
	// or stayed, and the buckets in both are overwritten below.
	stale := *set
	for w := range stale {
		stale[w] &^= now[w]
	}
	if stale != (BucketSet{}) {
		if *set == AllBuckets {
			*dst = [TimeBuckets]uint32{}
		} else {
			for b := range stale.Each() {
				dst[b] = 0
			}
		}
	}
	*set = now
	for b := range now.Each() {
		dst[b] = load32(&src[b])
	}
}

// clearBuckets zeroes the buckets of dst in set, and set: all of dst is 0.
func clearBuckets(dst *[TimeBuckets]uint32, set *BucketSet) {
	if *set == AllBuckets {
		*dst = [TimeBuckets]uint32{}
	} else {
		for b := range set.Each() {
			dst[b] = 0
		}
	}
	*set = BucketSet{}
}

// readCalls copies record i of the calls section. An open call is read id,
// start, id: one whose entry changed meanwhile (answered, or replaced) is
// left out, and so is a client's answer waiting for its call (early: ABI 1.7,
// an id with CallAnswered). Most records are a node's idle parameter
// services: the counts say when there is no histogram (nothing answered) or
// no open call to read. failed: the record has send_failed (ABI 1.8; before,
// those bytes were reserved).
func readCalls(mem []byte, sec *rawSection, i uint32, early, failed bool, slab *timeSlab) *Calls {
	r := (*rawCalls)(unsafe.Pointer(&mem[sec.Offset+uint64(i)*sec.Stride]))
	c := take(&slab.calls)
	// A recycled record's buckets are all 0 unless it had answers: its
	// other fields are rewritten and its buckets cleared only then (at
	// robot size ~1,000 idle parameter services wrote 800 bytes each a scan).
	// Every field but Buckets is set here (Open starts nil: never a previous scan's).
	stale := c.Answered > 0 || c.SumNs > 0
	c.Started, c.Answered, c.Unmatched = load64(&r.Started), load64(&r.Answered), load64(&r.Unmatched)
	c.Evicted, c.SumNs, c.Open = load64(&r.Evicted), load64(&r.SumNs), nil
	c.SendFailed, c.HasSendFailed = 0, false
	if failed {
		c.SendFailed, c.HasSendFailed = load64(&r.SendFailed), true
	}
	if c.Answered > 0 || c.SumNs > 0 {
		for b := range c.Buckets {
			c.Buckets[b] = load32(&r.Buckets[b])
		}
	} else if stale {
		c.Buckets = [TimeBuckets]uint32{}
	}
	if c.Started == 0 {
		return c // never called: no entry was ever written
	}
	for k := range r.Ring {
		e := &r.Ring[k]
		id := load64(&e.Id)
		if id == 0 || early && id&CallAnswered != 0 {
			continue
		}
		if start := load64(&e.StartNs); start != 0 && load64(&e.Id) == id {
			c.Open = append(c.Open, start)
		}
	}
	slices.Sort(c.Open)
	return c
}

// readThreads reads every claimed thread record, each consistently: a
// record the probe is changing (odd or moved seq) is read again.
func readThreads(mem []byte, sec *rawSection, eps []Endpoint) []Thread {
	if sec == nil {
		return nil
	}
	var out []Thread
	for i := uint32(0); i < sec.Count; i++ {
		r := (*rawThread)(unsafe.Pointer(&mem[sec.Offset+uint64(i)*sec.Stride]))
		for try := 0; try < 100; try++ {
			s0 := load32(&r.Seq)
			if s0&1 != 0 {
				runtime.Gosched()
				continue
			}
			th := Thread{Lane: int(i), Tid: int(atomic.LoadInt32(&r.Tid)), BusyNs: load64(&r.BusyNs), OpenNs: load64(&r.OpenNs),
				Callbacks: load64(&r.Callbacks), Node: -1, WaitNs: load64(&r.WaitNs), WaitOpen: load64(&r.WaitOpenNs), Waits: load64(&r.Waits)}
			ei := load32(&r.EndpointIndex)
			var name [24]byte
			for k := range name {
				name[k] = *(*byte)(unsafe.Pointer(&r.Name[k]))
			}
			if load32(&r.Seq) != s0 {
				continue
			}
			if th.Tid == 0 {
				break // never claimed
			}
			if e := FindEndpoint(eps, int(ei)); ei != NoNode && e != nil {
				th.Node = e.Node
			}
			th.Name, _ = cString(name[:])
			out = append(out, th)
			break
		}
	}
	return out
}

// readQoS reads record i of the QoS section consistently (a record the
// probe is writing is read again); nil when it was never written for this
// generation of the slot or stays inconsistent. The probe writes a record
// once per entity (after its rcl init returned), so what was read for a
// generation is kept in the mapping's cache and shared (read-only) by later
// snapshots, and the record is not read again: a scan touches no QoS line
// of an endpoint it already knows.
func readQoS(mem []byte, sec *rawSection, i, gen uint32, cache *[]cachedQoS, corrupt *int) *QoS {
	r := (*rawQos)(unsafe.Pointer(&mem[sec.Offset+uint64(i)*sec.Stride]))
	for uint32(len(*cache)) <= i {
		*cache = append(*cache, cachedQoS{})
	}
	c := &(*cache)[i]
	if c.q != nil && c.gen == gen {
		return c.q // the probe writes a record once per entity: no need to touch it again
	}
	for try := 0; try < 100; try++ {
		s0 := load32(&r.Seq)
		if s0 == 0 {
			return nil // never written
		}
		if s0&1 != 0 {
			runtime.Gosched()
			continue
		}
		raw := *r // the seq, read again below, says whether this copy is whole
		if load32(&r.Seq) != s0 {
			continue
		}
		if raw.Generation != gen {
			return nil // it describes the slot's previous entity
		}
		q := &QoS{Actual: raw.Flags&QoSActual != 0, TypeTruncated: raw.Flags&QoSTypeTruncated != 0, AvoidRosNS: raw.Flags&QoSAvoidRosNS != 0, Domain: -1}
		if q.Actual {
			q.History, q.Depth, q.Reliability, q.Durability, q.Liveliness = raw.History, raw.Depth, raw.Reliability, raw.Durability, raw.Liveliness
			q.DeadlineNs, q.LifespanNs, q.LeaseNs = raw.DeadlineNs, raw.LifespanNs, raw.LeaseNs
		}
		if raw.DomainId != NoDomain {
			q.Domain = int(raw.DomainId)
		}
		rmw, ok1 := cString(raw.Rmw[:])
		typ, ok2 := cString(raw.Type[:])
		if !ok1 || !ok2 {
			*corrupt++ // unterminated: hostile or torn, never shown
		} else {
			q.RMW, q.Type = strings.ToValidUTF8(rmw, "\uFFFD"), strings.ToValidUTF8(typ, "\uFFFD")
		}
		*c = cachedQoS{gen: gen, q: q}
		return q
	}
	return nil
}

// cachedQoS is the QoS last read from one record, with the seq and
// generation it was read at.
type cachedQoS struct {
	gen uint32
	q   *QoS
}

// readEnv reads the header's environment record (written before the segment was published).
func readEnv(r *rawEnv, corrupt *int) *Env {
	e := &Env{Flags: r.Flags}
	fields := []struct {
		dst *string
		src []byte
	}{{&e.DomainID, r.DomainId[:]}, {&e.RMW, r.RmwImplementation[:]}, {&e.LocalhostOnly, r.LocalhostOnly[:]},
		{&e.DiscoveryRange, r.DiscoveryRange[:]}, {&e.StaticPeers, r.StaticPeers[:]}}
	for _, f := range fields {
		v, ok := cString(f.src)
		if !ok {
			*corrupt++
		}
		*f.dst = v
	}
	return e
}

// readGap copies record i of a histogram section (rp_gap layout).
func readGap(mem []byte, sec *rawSection, i uint32, telescoped bool) *Gap {
	g := (*rawGap)(unsafe.Pointer(&mem[sec.Offset+uint64(i)*sec.Stride]))
	out := &Gap{LastMono: load64(&g.LastMonoNs), SumNs: load64(&g.SumNs), IntraPublisher: load32(&g.Flags)&GapIntraPublisher != 0}
	if telescoped {
		// ABI 1.7 gaps: the probe keeps no sum; the gaps counted add up to
		// last - first (last only moves forward). first is stored just after
		// the first message's last: until then no gap was counted.
		out.SumNs = 0
		if first := load64(&g.FirstMonoNs); first != 0 && out.LastMono > first {
			out.SumNs = out.LastMono - first
		}
	}
	for b := range out.Buckets {
		out.Buckets[b] = load32(&g.Buckets[b])
	}
	return out
}

// callbackName is a registered name, or "" where tracetools gave only a
// placeholder: "DISABLED__demangle_symbol" and "DISABLED__get_symbol_funcptr"
// from a Humble tracetools built without LTTng (the probe names those
// callbacks itself; an older probe did not), "UNKNOWN…" where dladdr or the
// demangler failed. A placeholder is never shown as a function's name.
func callbackName(s string) string {
	if strings.HasPrefix(s, "DISABLED__") || strings.HasPrefix(s, "UNKNOWN") {
		return ""
	}
	return s
}
