package segment

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// aligned returns an 8-byte aligned copy of b (as an mmap would be).
func aligned(b []byte) []byte {
	words := make([]uint64, (len(b)+7)/8+1) // +1: an empty input still has an address
	out := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:len(b)]
	copy(out, b)
	return out
}

// build lays out a segment the way probe/src/segment_writer.c does.
func build(nodes []string, eps []rawEndpoint, counts [][CountersPerEndpoint]uint64, lanes uint32) []byte {
	const nodeCap, epCap = 8, 16
	nodeOff := uint64(HeaderSize)
	epOff := nodeOff + nodeCap*uint64(unsafe.Sizeof(rawNode{}))
	laneOff := epOff + epCap*uint64(unsafe.Sizeof(rawEndpoint{}))
	laneStride := uint64(epCap * CountersPerEndpoint * 8)
	total := laneOff + uint64(lanes)*laneStride
	mem := aligned(make([]byte, total))
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	h.Magic, h.AbiMajor, h.HeaderSize, h.TotalSize = Magic, ABIMajor, HeaderSize, total
	h.State, h.Pid, h.Distro, h.StartMonoNs = SegmentReady, 4242, DistroJazzy, 1000
	h.LaneCount, h.SectionCount, h.NodeCapacity, h.EndpointCapacity = lanes, 3, nodeCap, epCap
	h.NodeCount, h.EndpointCount = uint32(len(nodes)), uint32(len(eps))
	h.LanesClaimed = lanes
	h.Sections[0] = rawSection{SectionNodes, nodeCap, nodeOff, uint64(unsafe.Sizeof(rawNode{}))}
	h.Sections[1] = rawSection{SectionEndpoints, epCap, epOff, uint64(unsafe.Sizeof(rawEndpoint{}))}
	h.Sections[2] = rawSection{SectionLanes, lanes, laneOff, laneStride}
	copy(h.Exe[:], "/opt/ros/bin/talker")
	h.CmdlineLen = uint32(copy(h.Cmdline[:], "talker\x00--ros-args\x00"))
	for i, n := range nodes {
		r := (*rawNode)(unsafe.Pointer(&mem[nodeOff+uint64(i)*uint64(unsafe.Sizeof(rawNode{}))]))
		r.State = RecordReady
		copy(r.Name[:], n)
	}
	for i, e := range eps {
		r := (*rawEndpoint)(unsafe.Pointer(&mem[epOff+uint64(i)*uint64(unsafe.Sizeof(rawEndpoint{}))]))
		*r = e
		for lane := uint32(0); lane < lanes; lane++ {
			base := laneOff + uint64(lane)*laneStride + uint64(i)*CountersPerEndpoint*8
			for c := 0; c < CountersPerEndpoint; c++ {
				binary.LittleEndian.PutUint64(mem[base+uint64(c)*8:], counts[i][c]*uint64(lane+1))
			}
		}
	}
	return mem
}

func endpoint(kind uint16, name string, node uint32) rawEndpoint {
	e := rawEndpoint{State: RecordReady, Kind: kind, NodeIndex: node, Aux: 10, CreatedMonoNs: 2000}
	copy(e.Name[:], name)
	return e
}

func sample() []byte {
	return build([]string{"/talker", "/listener"},
		[]rawEndpoint{endpoint(KindPublisher, "/chatter", 0), endpoint(KindSubscription, "/chatter", 1), endpoint(KindTimer, "", NoNode)},
		[][CountersPerEndpoint]uint64{{5, 1, 0, 0}, {7, 0, 0, 0}, {3, 0, 0, 0}}, 3)
}

func TestParseValid(t *testing.T) {
	s, err := Parse(sample())
	if err != nil {
		t.Fatal(err)
	}
	if s.Pid != 4242 || s.Distro != DistroJazzy || s.Exe != "/opt/ros/bin/talker" || strings.Join(s.Cmdline, " ") != "talker --ros-args" {
		t.Fatalf("header: %+v", s)
	}
	if len(s.Nodes) != 2 || s.Nodes[1].Name != "/listener" {
		t.Fatalf("nodes: %+v", s.Nodes)
	}
	if len(s.Endpoints) != 3 {
		t.Fatalf("endpoints: %+v", s.Endpoints)
	}
	// Lanes are summed: lane k holds (k+1) x the base counts, so 3 lanes give 6x.
	if pub := s.Endpoints[0]; pub.Kind != KindPublisher || pub.Name != "/chatter" || pub.Node != 0 || pub.Counts[SlotInter] != 30 || pub.Counts[SlotIntra] != 6 {
		t.Fatalf("publisher: %+v", pub)
	}
	if sub := s.Endpoints[1]; sub.Node != 1 || sub.Counts[SlotInter] != 42 {
		t.Fatalf("subscription: %+v", sub)
	}
	if tm := s.Endpoints[2]; tm.Kind != KindTimer || tm.Node != -1 || s.Corrupt != 0 {
		t.Fatalf("timer: %+v corrupt=%d", tm, s.Corrupt)
	}
}

func TestParseRejectsHostileSegments(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m []byte) []byte
		want   string
	}{
		{"truncated header", func(m []byte) []byte { return aligned(m[:100]) }, "truncated"},
		{"bad magic", func(m []byte) []byte { m[0] ^= 0xff; return m }, "bad magic"},
		{"future major", func(m []byte) []byte { hdr(m).AbiMajor = 9; return m }, "unsupported ABI"},
		{"size beyond file", func(m []byte) []byte { hdr(m).TotalSize = uint64(len(m)) + 1; return m }, "does not fit"},
		{"file cut short", func(m []byte) []byte { return aligned(m[:len(m)-64]) }, "does not fit"},
		{"too many sections", func(m []byte) []byte { hdr(m).SectionCount = 99; return m }, "section count"},
		{"section overruns", func(m []byte) []byte { hdr(m).Sections[2].Offset = hdr(m).TotalSize - 8; return m }, "overruns"},
		{"section count overflow", func(m []byte) []byte {
			hdr(m).Sections[1].Count, hdr(m).Sections[1].Stride = 0xffffffff, 1<<40
			return m
		}, "overruns"},
		{"overlapping sections", func(m []byte) []byte { hdr(m).Sections[1].Offset = hdr(m).Sections[0].Offset; return m }, "overlaps"},
		{"missing lanes", func(m []byte) []byte { hdr(m).SectionCount = 2; return m }, "missing"},
		{"duplicate section", func(m []byte) []byte { hdr(m).Sections[2].Kind = SectionNodes; return m }, "twice"},
		{"node count beyond capacity", func(m []byte) []byte { hdr(m).NodeCount = 1000; return m }, "node count"},
		{"endpoint count beyond capacity", func(m []byte) []byte { hdr(m).EndpointCount = 1000; return m }, "endpoint count"},
		{"capacity disagrees", func(m []byte) []byte { hdr(m).EndpointCapacity = 4; return m }, "disagree"},
		{"misaligned section", func(m []byte) []byte { hdr(m).Sections[0].Offset++; return m }, "misplaced"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.mutate(sample()))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func hdr(m []byte) *rawHeader { return (*rawHeader)(unsafe.Pointer(&m[0])) }

func TestParseSkipsCorruptRecords(t *testing.T) {
	bad := endpoint(KindPublisher, "", 0)
	for i := range bad.Name {
		bad.Name[i] = 'x' // no terminating NUL
	}
	weird := endpoint(77, "/t", 0)
	dangling := endpoint(KindSubscription, "/t", 5) // node 5 does not exist
	unpublished := endpoint(KindPublisher, "/half", 0)
	unpublished.State = RecordEmpty
	m := build([]string{"/n"}, []rawEndpoint{bad, weird, dangling, unpublished, endpoint(KindPublisher, "/ok", 0)},
		make([][CountersPerEndpoint]uint64, 5), 1)
	s, err := Parse(m)
	if err != nil {
		t.Fatal(err)
	}
	if s.Corrupt != 3 {
		t.Errorf("corrupt = %d, want 3 (unterminated name, bad kind, dangling node)", s.Corrupt)
	}
	if len(s.Endpoints) != 2 || s.Endpoints[0].Name != "/t" || s.Endpoints[0].Node != -1 || s.Endpoints[1].Name != "/ok" {
		t.Errorf("kept endpoints: %+v", s.Endpoints)
	}
}

func TestParseNotReady(t *testing.T) {
	m := sample()
	hdr(m).Magic = 0
	if _, err := Parse(m); err != ErrNotReady {
		t.Fatalf("got %v, want ErrNotReady", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample())
	f.Add(withTiming(sample(), 61))
	f.Add(markedTiming(withTiming(sample(), 61)))
	f.Add(withLinks(sample(), []rawLink{linkRec(1, 0, 4), linkRec(0, 1, 2)}))
	f.Add(withBytes(sample(), []rawBytes{{Sampled: 2, SampledBytes: 100, Flags: BytesTyped}, {FixedSize: 44, Flags: BytesTyped}}))
	f.Add(build(nil, nil, nil, 1))
	f.Add(make([]byte, HeaderSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(aligned(data))
		if err != nil {
			return
		}
		// Whatever parses must be internally consistent.
		for _, e := range s.Endpoints {
			if e.Node >= len(s.Nodes) || e.Kind < KindPublisher || e.Kind > KindClient || len(e.Name) >= NameMax {
				t.Fatalf("inconsistent endpoint %+v", e)
			}
			if e.Timing != nil && !withinSet(&e.Timing.Buckets, &e.Timing.Used) || e.Lateness != nil && !withinSet(&e.Lateness.Buckets, &e.Lateness.Used) {
				t.Fatalf("a bucket outside its histogram's set counts: %+v %+v", e.Timing, e.Lateness)
			}
		}
	})
}

// withinSet: every bucket outside set is 0.
func withinSet(b *[TimeBuckets]uint32, set *BucketSet) bool {
	for i, n := range b {
		if n != 0 && set[i/64]&(1<<(i%64)) == 0 {
			return false
		}
	}
	return true
}

// markedTiming makes withTiming's segment an ABI 1.10 one whose records
// mark some of their buckets, one mark past the last bucket.
func markedTiming(mem []byte) []byte {
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	h.AbiMinor = 10
	sec := h.Sections[3]
	sub := (*rawTiming)(unsafe.Pointer(&mem[sec.Offset+1*sec.Stride]))
	sub.Used[0], sub.Used[3] = 1<<10, 1<<60
	(*rawTiming)(unsafe.Pointer(&mem[sec.Offset+2*sec.Stride])).LateUsed[0] = 1 << 3
	return mem
}

// Encode (used by tests and the reader benchmark) writes what Parse reads.
func TestEncodeRoundTrip(t *testing.T) {
	mem := Encode(SyntheticSpec{Pid: 7, Exe: "/bin/x", Cmdline: []string{"x", "--ros-args"}, Nodes: []string{"/a", "/b"},
		Endpoints: []SyntheticEndpoint{{Kind: KindPublisher, Name: "/t", Node: 1, Counts: [4]uint64{5, 6, 0, 0}},
			{Kind: KindTimer, Node: -1, Aux: 1000}}})
	s, err := Parse(mem)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pid != 7 || s.Exe != "/bin/x" || len(s.Cmdline) != 2 || len(s.Nodes) != 2 || len(s.Endpoints) != 2 ||
		s.Endpoints[0].Node != 1 || s.Endpoints[0].Counts[1] != 6 || s.Endpoints[1].Aux != 1000 || s.Endpoints[1].Node != -1 {
		t.Fatalf("%+v", s)
	}
}

// withTiming appends the timing and thread sections (ABI 1.4) to a segment
// from build: the subscription (record 1) has three callbacks, a name and
// an abandoned start; the timer (record 2) a lateness; lane 0's thread is busy.
func withTiming(mem []byte, symbolLen uint32) []byte {
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	epCap := uint64(h.EndpointCapacity)
	timingOff := (uint64(len(mem)) + 63) &^ 63
	threadOff := (timingOff + epCap*uint64(unsafe.Sizeof(rawTiming{})) + 63) &^ 63
	total := threadOff + uint64(h.LaneCount-1)*uint64(unsafe.Sizeof(rawThread{}))
	out := aligned(make([]byte, total))
	copy(out, mem)
	h = (*rawHeader)(unsafe.Pointer(&out[0]))
	h.TotalSize = total
	h.Sections[3] = rawSection{SectionTiming, uint32(epCap), timingOff, uint64(unsafe.Sizeof(rawTiming{}))}
	h.Sections[4] = rawSection{SectionThreads, h.LaneCount - 1, threadOff, uint64(unsafe.Sizeof(rawThread{}))}
	h.SectionCount = 5
	sub := (*rawTiming)(unsafe.Pointer(&out[timingOff+1*uint64(unsafe.Sizeof(rawTiming{}))]))
	sub.SumNs, sub.Unended, sub.Buckets[10], sub.Buckets[40] = 3_000_000, 1, 2, 1
	copy(sub.Symbol[:], "Listener::on_chatter(std::shared_ptr<std_msgs::msg::String>)")
	sub.SymbolLen = symbolLen
	tm := (*rawTiming)(unsafe.Pointer(&out[timingOff+2*uint64(unsafe.Sizeof(rawTiming{}))]))
	tm.PeriodNs, tm.LateSumNs, tm.LateBuckets[3], tm.Overruns = 100_000_000, 9000, 3, 1
	th := (*rawThread)(unsafe.Pointer(&out[threadOff]))
	th.Seq, th.Tid, th.BusyNs, th.OpenNs, th.Callbacks, th.EndpointIndex = 2, 4243, 5_000_000, 7000, 3, 1 // the subscription, of node 1
	copy(th.Name[:], "executor")
	return out
}

func TestParseTiming(t *testing.T) {
	s, err := Parse(withTiming(sample(), 61))
	if err != nil {
		t.Fatal(err)
	}
	sub, tm := s.Endpoints[1], s.Endpoints[2]
	if !s.Timing || sub.Timing == nil || sub.Timing.SumNs != 3_000_000 || sub.Timing.Unended != 1 || sub.Timing.Buckets[40] != 1 ||
		sub.Timing.Function != "Listener::on_chatter(std::shared_ptr<std_msgs::msg::String>)" || sub.Lateness != nil {
		t.Errorf("subscription timing %+v", sub.Timing)
	}
	if tm.Lateness == nil || tm.Lateness.SumNs != 9000 || tm.Lateness.Buckets[3] != 3 || tm.Timing.Overruns != 1 {
		t.Errorf("timer %+v %+v", tm.Timing, tm.Lateness)
	}
	if s.Endpoints[0].Timing != nil {
		t.Errorf("a publisher's timing record is never read")
	}
	if len(s.Threads) != 1 || s.Threads[0] != (Thread{Lane: 0, Tid: 4243, Name: "executor", BusyNs: 5_000_000, OpenNs: 7000, Callbacks: 3, Node: 1}) {
		t.Errorf("threads %+v", s.Threads)
	}
	// A placeholder of tracetools' symbol helpers is never a name (issue 44).
	for _, placeholder := range []string{"DISABLED__demangle_symbol", "DISABLED__get_symbol_funcptr", "UNKNOWN_demangling_failed", "UNKNOWN"} {
		mem := withTiming(sample(), uint32(len(placeholder)))
		h := (*rawHeader)(unsafe.Pointer(&mem[0]))
		r := (*rawTiming)(unsafe.Pointer(&mem[h.Sections[3].Offset+uint64(unsafe.Sizeof(rawTiming{}))]))
		clear(r.Symbol[:])
		copy(r.Symbol[:], placeholder)
		if s, err := Parse(mem); err != nil || s.Endpoints[1].Timing == nil || s.Endpoints[1].Timing.Function != "" {
			t.Errorf("placeholder %q: %v %+v", placeholder, err, s.Endpoints[1].Timing)
		}
	}
	// A hostile length (past the buffer) names nothing; an odd seq (a writer
	// mid-change, for ever) leaves the thread out rather than reading it torn.
	mem := withTiming(sample(), SymbolMax)
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	(*rawThread)(unsafe.Pointer(&mem[h.Sections[4].Offset])).Seq = 3
	s, err = Parse(mem)
	if err != nil || s.Endpoints[1].Timing.Function != "" || len(s.Threads) != 0 {
		t.Errorf("hostile timing: %v %q %+v", err, s.Endpoints[1].Timing.Function, s.Threads)
	}
	// A timing section that does not match the endpoint table is refused.
	h.Sections[3].Count--
	if _, err := Parse(mem); err == nil || !strings.Contains(err.Error(), "timing section") {
		t.Errorf("a short timing section: %v", err)
	}
}

// ABI 1.5: an endpoint's QoS record is read for its own generation only, a
// hostile (unterminated) type is left out and counted as corrupt, and the
// process's environment is read from the header.
func TestParseQoSAndEnv(t *testing.T) {
	rel := &QoS{Actual: true, History: 1, Depth: 7, Reliability: 2, Durability: 2, Liveliness: 1, DeadlineNs: DurationInfinite,
		LeaseNs: 250e6, Domain: 3, RMW: "rmw_cyclonedds_cpp", Type: "sensor_msgs/msg/LaserScan"}
	spec := SyntheticSpec{Pid: 7, Nodes: []string{"/n"}, Env: Env{Flags: EnvDomainID | EnvRMW, DomainID: "3", RMW: "rmw_cyclonedds_cpp"},
		Endpoints: []SyntheticEndpoint{
			{Kind: KindPublisher, Name: "/scan", Node: 0, QoS: rel},
			{Kind: KindSubscription, Name: "/scan", Node: 0, Generation: 2, QoS: &QoS{Domain: -1, Type: "x/msg/Y"}},
			{Kind: KindSubscription, Name: "/old", Node: 0, Generation: 1, QoS: &QoS{Actual: true, Domain: 0}},
			{Kind: KindSubscription, Name: "/none", Node: 0},
		}}
	mem := Encode(spec)
	// /old's record describes the slot's previous entity
	qosOff := func(i int) uint64 {
		for _, s := range (*rawHeader)(unsafe.Pointer(&mem[0])).Sections {
			if s.Kind == SectionQoS {
				return s.Offset + uint64(i)*s.Stride
			}
		}
		t.Fatal("no QoS section")
		return 0
	}
	(*rawQos)(unsafe.Pointer(&mem[qosOff(2)])).Generation = 0
	snap, err := Parse(mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Endpoints[0].QoS; got == nil || *got != *rel {
		t.Errorf("publisher QoS %+v, want %+v", got, rel)
	}
	if got := snap.Endpoints[1].QoS; got == nil || got.Actual || got.Domain != -1 || got.Type != "x/msg/Y" {
		t.Errorf("a subscription whose QoS could not be read: %+v, want QoS unknown, type known", got)
	}
	if snap.Endpoints[2].QoS != nil || snap.Endpoints[3].QoS != nil {
		t.Errorf("a previous entity's record or none: %+v %+v, want nil", snap.Endpoints[2].QoS, snap.Endpoints[3].QoS)
	}
	if e := snap.Env; e == nil || !e.Set(EnvDomainID) || e.DomainID != "3" || e.RMW != "rmw_cyclonedds_cpp" || e.Set(EnvLocalhostOnly) {
		t.Errorf("env %+v", snap.Env)
	}
	// A hostile type (no terminating NUL) is never shown.
	r := (*rawQos)(unsafe.Pointer(&mem[qosOff(0)]))
	for k := range r.Type {
		r.Type[k] = 'A'
	}
	r.Seq += 2
	snap, err = Parse(mem)
	if err != nil {
		t.Fatal(err)
	}
	if q := snap.Endpoints[0].QoS; q == nil || q.Type != "" || q.RMW != "" || snap.Corrupt == 0 {
		t.Errorf("hostile type: %+v, corrupt %d", q, snap.Corrupt)
	}
}

// TestReadCallsSkipsEarlyAnswers: a client's answer taken before its call
// opened (ABI 1.7, CallAnswered in the id) waits in the ring, and is no open
// call; before 1.7 no id had that bit and every non-zero id was open.
func TestReadCallsSkipsEarlyAnswers(t *testing.T) {
	mem := aligned(make([]byte, unsafe.Sizeof(rawCalls{}))) // 8-byte loads: arm64 faults on a stack array's odd address
	r := (*rawCalls)(unsafe.Pointer(&mem[0]))
	r.Started = 2
	r.Ring[1] = rawCall{Id: 5, StartNs: 100}
	r.Ring[2] = rawCall{Id: 6 | CallAnswered, StartNs: 200}
	sec := &rawSection{Stride: uint64(len(mem))}
	if got := readCalls(mem, sec, 0, true, true, new(timeSlab)).Open; !slices.Equal(got, []uint64{100}) {
		t.Errorf("ABI 1.7 client: open calls started at %v, want [100]", got)
	}
	if got := readCalls(mem, sec, 0, false, false, new(timeSlab)).Open; !slices.Equal(got, []uint64{100, 200}) {
		t.Errorf("before 1.7: open calls started at %v, want [100 200]", got)
	}
}

// TestReadCallsSendFailed: a server's refused responses (ABI 1.8) are read
// from send_failed; a record of an older minor has reserved bytes there,
// which are never read as a count.
func TestReadCallsSendFailed(t *testing.T) {
	mem := aligned(make([]byte, unsafe.Sizeof(rawCalls{}))) // 8-byte loads: arm64 faults on a stack array's odd address
	r := (*rawCalls)(unsafe.Pointer(&mem[0]))
	r.Started, r.Answered, r.SendFailed = 10, 7, 3
	sec := &rawSection{Stride: uint64(len(mem))}
	if c := readCalls(mem, sec, 0, false, true, new(timeSlab)); c.SendFailed != 3 || c.Answered != 7 || len(c.Open) != 0 {
		t.Errorf("ABI 1.8: %+v, want 3 refused, 7 answered, none open", c)
	}
	if c := readCalls(mem, sec, 0, false, false, new(timeSlab)); c.SendFailed != 0 {
		t.Errorf("before 1.8: send_failed read as %d from reserved bytes", c.SendFailed)
	}
}

// A recycled calls record holds nothing of the record it was: an answered
// service's buckets, counts and open calls are gone when it comes back for
// an idle one, and an answered one's read whole.
func TestReadCallsRecycled(t *testing.T) {
	mem := aligned(make([]byte, 2*unsafe.Sizeof(rawCalls{})))
	busy := (*rawCalls)(unsafe.Pointer(&mem[0]))
	busy.Started, busy.Answered, busy.SumNs, busy.Unmatched, busy.Evicted, busy.SendFailed = 9, 7, 700, 1, 1, 1
	busy.Buckets[3], busy.Buckets[150] = 5, 2
	busy.Ring[0] = rawCall{Id: 8, StartNs: 100}
	sec := &rawSection{Stride: uint64(unsafe.Sizeof(rawCalls{}))}
	slab := new(timeSlab)
	for round, want := range []struct {
		rec     uint32
		answers uint32 // bucket 3's count
	}{{0, 5}, {1, 0}, {0, 5}, {1, 0}} {
		slab.calls = slab.calls[:0] // as Recycle hands a slab back
		c := readCalls(mem, sec, want.rec, true, round < 2, slab)
		var sum uint32
		for _, n := range c.Buckets {
			sum += n
		}
		if c.Buckets[3] != want.answers || (want.rec == 1) != (sum == 0) {
			t.Errorf("round %d, record %d: buckets 3: %d, all: %d", round, want.rec, c.Buckets[3], sum)
		}
		if want.rec == 1 && (c.Started != 0 || c.Answered != 0 || c.SumNs != 0 || c.Unmatched != 0 || c.Evicted != 0 || c.SendFailed != 0 || c.HasSendFailed != (round < 2) || c.Open != nil) {
			t.Errorf("round %d: the idle record read %+v", round, c)
		}
		if want.rec == 0 && (c.Answered != 7 || !slices.Equal(c.Open, []uint64{100}) || c.SendFailed != map[bool]uint64{true: 1, false: 0}[round < 2]) {
			t.Errorf("round %d: the answered record read %+v", round, c)
		}
	}
}

// ABI 1.10: a reader reads the buckets a record marks as used, and every
// bucket of a record whose stride ends before the marks.
func TestParseTimingMarked(t *testing.T) {
	// Bucket 40 counted and is not marked yet: read as 0 until it is. A
	// mark past the last bucket (hostile) is dropped.
	mem := markedTiming(withTiming(sample(), 61))
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	sec := h.Sections[3]
	sub := (*rawTiming)(unsafe.Pointer(&mem[sec.Offset+1*sec.Stride]))
	s, err := Parse(mem)
	if err != nil {
		t.Fatal(err)
	}
	st, lt := s.Endpoints[1].Timing, s.Endpoints[2].Lateness
	if st.Buckets[10] != 2 || st.Buckets[40] != 0 || st.Used != (BucketSet{1 << 10}) {
		t.Errorf("marked subscription: bucket 10 %d, 40 %d, used %x", st.Buckets[10], st.Buckets[40], st.Used)
	}
	if lt.Buckets[3] != 3 || lt.Used != (BucketSet{1 << 3}) {
		t.Errorf("marked lateness: bucket 3 %d, used %x", lt.Buckets[3], lt.Used)
	}
	sub.Used[0] |= 1 << 40 // marked: read
	if s, err = Parse(mem); err != nil || s.Endpoints[1].Timing.Buckets[40] != 1 {
		t.Errorf("bucket 40 once marked: %v %+v", err, s.Endpoints[1].Timing)
	}
	// A stride that ends before the marks (a 1.9 probe's record): every
	// bucket, whatever the minor says.
	old := uint64(unsafe.Offsetof(rawTiming{}.Used))
	for i := uint64(0); i < uint64(sec.Count); i++ {
		copy(mem[sec.Offset+i*old:], mem[sec.Offset+i*sec.Stride:sec.Offset+i*sec.Stride+old])
	}
	h.Sections[3].Stride = old
	if s, err = Parse(mem); err != nil || s.Endpoints[1].Timing.Buckets[40] != 1 || s.Endpoints[1].Timing.Used != AllBuckets ||
		s.Endpoints[2].Lateness.Buckets[3] != 3 {
		t.Errorf("a record without marks: %v %+v", err, s.Endpoints[1].Timing)
	}
	h.Sections[3].Stride = old - 8
	if _, err = Parse(mem); err == nil {
		t.Errorf("a timing stride short of the 1.4 record was accepted")
	}
}

// A reader's recycled records never carry a bucket of an earlier reading:
// the marks move between scans, and each scan reads exactly what is marked.
func TestReaderRecycledBucketsFollowMarks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "4242.0.pulse")
	mem := markedTiming(withTiming(sample(), 61))
	h := (*rawHeader)(unsafe.Pointer(&mem[0]))
	sec := h.Sections[3]
	sub := (*rawTiming)(unsafe.Pointer(&mem[sec.Offset+1*sec.Stride]))
	rd := NewReader(dir)
	defer rd.Close()
	var prev *Scan
	for step, used := range []uint64{1<<10 | 1<<40, 1 << 10, 1 << 40, 0} {
		sub.Used[0] = used
		if err := os.WriteFile(path, mem, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := rd.Scan()
		if err != nil || len(s.Snapshots) != 1 {
			t.Fatalf("step %d: %v", step, err)
		}
		tm := s.Snapshots[0].Endpoints[1].Timing
		want10, want40 := uint32(0), uint32(0)
		if used&(1<<10) != 0 {
			want10 = 2
		}
		if used&(1<<40) != 0 {
			want40 = 1
		}
		if tm.Buckets[10] != want10 || tm.Buckets[40] != want40 || !withinSet(&tm.Buckets, &tm.Used) {
			t.Errorf("step %d (marks %x): bucket 10 %d, 40 %d, used %x", step, used, tm.Buckets[10], tm.Buckets[40], tm.Used)
		}
		if prev != nil {
			rd.Recycle(prev)
		}
		prev = s
	}
}
