// Package simtruth reads what the stand-in graph really did: the ground-truth
// files simgraph keeps with --truth DIR (sim/simgraph/truth.h), one per
// process. Tests judge pulse against these counts, never against nominal
// rate x time: a loaded machine really skips timer periods (design note 0016).
//
// Each count is bumped with release order just after the tracepoint it
// mirrors, so at any instant a probe count is the truth's count plus at most
// the message its one writer thread has in flight: a truth read before a scan
// bounds the scan from below, one read after it bounds it from above (+1).
package simtruth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"ros2_pulse/internal/segment"
	"ros2_pulse/internal/window"
)

// The layout of truth.h.
const (
	magic      = "SIMTRUTH"
	version    = 2
	headerSize = 64
	nameSize   = 128
	kindSize   = 8
	langSize   = 8
	recordSize = kindSize + langSize + 2*nameSize + 4*8 + 8*8
)

// Timing is the graph's own clock around its callbacks and timer calls
// (truth.h enum truth_timing), summed over a key's records (maxima: the max).
// The graph reads its clock just outside callback_start and callback_end, so
// its durations bracket the probe's.
type Timing struct {
	CallbackNs, Callbacks, CallbackMaxNs, Overruns uint64
	LateNs, Lates, LateMaxNs                       uint64 // timer: lateness; service: take to response; client: round trip (truth.h TT_CALL_*)
	Thrown                                         uint64 // callbacks that threw: started, never ended
	GapMaxNs                                       uint64 // pub: the longest gap between two of its publishes (TT_GAP_MAX)
	// Bytes: pub, the serialized bytes of its messages that went out
	// through rcl; sub, of the middleware messages it took (TT_BYTES).
	Bytes uint64
	// sub: each delivered message's age since its chain's first publish
	// (relay=; a message nobody relayed: since its own publish), realtime:
	// the sum, how many, the oldest (TT_E2E_*).
	E2ENs, E2EN, E2EMaxNs uint64
}

// What each count of a record means, by kind (truth.h enum truth_count).
const (
	PubInter = 0 // pub: messages that went out through rcl
	PubIntra = 1 // pub: publishes that took rclcpp's intra-process path
	SubInter = 0 // sub: middleware messages that reached the user (rclpy: the take)
	SubIntra = 1 // sub: intra-process messages that reached the callback
	SubTaken = 2 // sub: rmw_take calls that took a message
	SubLost  = 3 // sub: samples a best-effort reader never got
	Fires    = 0 // timer: callbacks; service: requests taken; client: requests sent
	Answered = 1 // service: responses sent; client: responses taken
	Late     = 2 // client: responses taken later than its timeout=
	// SendFailed: service, responses rcl_send_response refused
	// (RCL_RET_TIMEOUT: on Fast DDS, a request taken after its client had gone).
	SendFailed = 3
)

// Key names what one or more records count: the same key on the probe's side
// is the sum over the endpoints with that process, node, topic and kind.
type Key struct {
	Pid   int
	Kind  string // "pub", "sub", "timer", "service", "client"
	Node  string // fully qualified
	Topic string // topic or service name; "" for a timer
}

func (k Key) String() string { return fmt.Sprintf("pid %d %s %s %q", k.Pid, k.Node, k.Kind, k.Topic) }

// Proc is one process's file.
type Proc struct {
	Pid, Ppid int
	Process   string // the graph's process name
	Exited    bool   // returned normally: every count is final
}

// Snapshot is every truth file of a directory at one moment.
type Snapshot struct {
	Procs  []Proc
	Counts map[Key][4]uint64
	Lang   map[Key]string // the node's client library: "cpp" (rclcpp) or "py" (rclpy)
	Timing map[Key]Timing
	// Ages: each relayed message's age since its chain's first publish,
	// when its relay published it (ns, in publish order per process), by
	// the relay's publisher: a path's per-message truth (truth.h truth_age).
	Ages map[Key][]uint64
	// SampledBest and SampledWorst: each publish of a timer whose node's
	// subscription had run for messages (a sampled link, issue 47 rule 3),
	// by the timer's publisher: the age of the latest of them and of the
	// first since the timer's previous publish (ns, truth.h truth_sampled).
	SampledBest, SampledWorst map[Key][]uint64
}

// Get returns the counts of a key (zero when absent: nothing happened yet).
func (s *Snapshot) Get(k Key) [4]uint64 { return s.Counts[k] }

// Proc returns the process with pid, if it has a file.
func (s *Snapshot) Proc(pid int) (Proc, bool) {
	for _, p := range s.Procs {
		if p.Pid == pid {
			return p, true
		}
	}
	return Proc{}, false
}

// Keys returns the keys in a stable order.
func (s *Snapshot) Keys() []Key {
	out := make([]Key, 0, len(s.Counts))
	for k := range s.Counts {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Read reads every truth-*.bin of dir. A file whose header is not written yet
// is left out (its process has counted nothing yet); a malformed one is an error.
func Read(dir string) (*Snapshot, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "truth-*.bin"))
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Counts: map[Key][4]uint64{}, Lang: map[Key]string{}, Timing: map[Key]Timing{}, Ages: map[Key][]uint64{},
		SampledBest: map[Key][]uint64{}, SampledWorst: map[Key][]uint64{}}
	for _, path := range paths {
		if err := s.readFile(path); err != nil {
			return nil, err
		}
	}
	sort.Slice(s.Procs, func(i, j int) bool { return s.Procs[i].Pid < s.Procs[j].Pid })
	return s, nil
}

func (s *Snapshot) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < headerSize {
		return nil // being created
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Munmap(mem)
	if string(mem[:8]) != magic {
		return nil // the header is not complete yet
	}
	le := binary.NativeEndian
	if v := le.Uint32(mem[8:]); v != version {
		return fmt.Errorf("%s: truth version %d, want %d", path, v, version)
	}
	capacity := int(le.Uint32(mem[12:]))
	used := int(atomic.LoadUint32((*uint32)(unsafe.Pointer(&mem[16]))))
	exited := atomic.LoadUint32((*uint32)(unsafe.Pointer(&mem[20]))) == 1
	if used > capacity || headerSize+capacity*recordSize > len(mem) {
		return fmt.Errorf("%s: %d of %d records in %d bytes", path, used, capacity, len(mem))
	}
	p := Proc{Pid: int(int32(le.Uint32(mem[24:]))), Ppid: int(int32(le.Uint32(mem[28:]))),
		Process: cstring(mem[32:64]), Exited: exited}
	s.Procs = append(s.Procs, p)
	slots := make([]Key, used)
	defer func() { s.readAges(filepath.Join(filepath.Dir(path), fmt.Sprintf("ages-%d.bin", p.Pid)), slots) }()
	for i := 0; i < used; i++ {
		r := mem[headerSize+i*recordSize:]
		names := r[kindSize+langSize:]
		k := Key{Pid: p.Pid, Kind: cstring(r[:kindSize]), Topic: cstring(names[:nameSize]),
			Node: cstring(names[nameSize : 2*nameSize])}
		slots[i] = k
		sum := s.Counts[k]
		for c := 0; c < 4; c++ {
			sum[c] += atomic.LoadUint64((*uint64)(unsafe.Pointer(&names[2*nameSize+8*c])))
		}
		s.Counts[k] = sum
		s.Lang[k] = cstring(r[kindSize : kindSize+langSize])
		var tv [8]uint64
		for c := range tv {
			tv[c] = atomic.LoadUint64((*uint64)(unsafe.Pointer(&names[2*nameSize+32+8*c])))
		}
		t := s.Timing[k]
		t.CallbackNs += tv[0]
		t.Callbacks += tv[1]
		if k.Kind == "pub" {
			t.GapMaxNs = max(t.GapMaxNs, tv[2])
		} else {
			t.CallbackMaxNs = max(t.CallbackMaxNs, tv[2])
		}
		if k.Kind == "pub" || k.Kind == "sub" {
			t.Bytes += tv[3]
		} else {
			t.Overruns += tv[3]
		}
		if k.Kind == "sub" { // a subscription's slots 4-6 are its messages' ages (TT_E2E_*)
			t.E2ENs += tv[4]
			t.E2EN += tv[5]
			t.E2EMaxNs = max(t.E2EMaxNs, tv[6])
		} else {
			t.LateNs += tv[4]
			t.Lates += tv[5]
			t.LateMaxNs = max(t.LateMaxNs, tv[6])
		}
		t.Thrown += tv[7]
		s.Timing[k] = t
	}
	return nil
}

// readAges reads a process's ages file (absent: it relayed nothing):
// records of {slot u32, tag u32, age u64} (tag 0 a relayed message's age,
// 1 and 2 a sampled publish's best and worst); a record being appended
// (short) is left for the next read.
func (s *Snapshot) readAges(path string, slots []Key) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	le := binary.NativeEndian
	for ; len(data) >= 16; data = data[16:] {
		slot, tag, age := int(le.Uint32(data)), le.Uint32(data[4:]), le.Uint64(data[8:])
		if slot >= len(slots) {
			continue
		}
		k := slots[slot]
		switch tag {
		case 0:
			s.Ages[k] = append(s.Ages[k], age)
		case 1:
			s.SampledBest[k] = append(s.SampledBest[k], age)
		case 2:
			s.SampledWorst[k] = append(s.SampledWorst[k], age)
		}
	}
}

func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// DeclaredEndpoints counts the publishers and subscriptions a graph file
// declares (its pub and sub lines; the graphs declare none on /rosout or
// /parameter_events).
func DeclaredEndpoints(graphFile string) (int, error) {
	b, err := os.ReadFile(graphFile)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) > 0 && (string(f[0]) == "pub" || string(f[0]) == "sub") {
			n++
		}
	}
	return n, nil
}

// WaitLearnt scans dir until the probe has learnt (ABI 1.5) every publisher
// and subscription graphFile declares, that is until each was created, and
// returns that scan: what a test of a diagnosis waits for rather than sleeping.
func WaitLearnt(dir, graphFile string, timeout time.Duration) (*segment.Scan, error) {
	want, err := DeclaredEndpoints(graphFile)
	if err != nil {
		return nil, err
	}
	r := segment.NewReader(dir)
	defer r.Close()
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		s, err := r.Scan()
		if err != nil {
			return nil, err
		}
		n := 0
		for _, snap := range s.Snapshots {
			for i := range snap.Endpoints {
				e := &snap.Endpoints[i]
				if snap.Alive && e.QoS != nil && !window.IsBuiltin(e.Name) && (e.Kind == segment.KindPublisher || e.Kind == segment.KindSubscription) {
					n++
				}
			}
		}
		if n >= want {
			return s, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the probe learnt %d of the %d publishers and subscriptions %s declares in %v", n, want, graphFile, timeout)
		}
	}
}
