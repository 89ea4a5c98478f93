// Package segment is the only Go code that knows the segment ABI defined in
// probe/include/ros2_pulse/segment.h. It maps segments read-only, validates
// every field (a segment is untrusted input), takes snapshots of their
// monotonic counters and tells live processes from dead ones through the
// probe's record lock.
package segment

// The Go mirror of segment.h. abi_test.go compiles the C header and checks
// every offset, size and constant below against it.

const (
	Magic                 = 0x45534c5550325352 // "RS2PULSE" as a little-endian u64
	ABIMajor              = 1
	ABIMinor              = 10
	HeaderSize            = 4096
	MaxSections           = 8
	ExeMax                = 256
	CmdlineMax            = 1024
	NameMax               = 256
	CountersPerEndpoint   = 4
	NoNode                = 0xffffffff
	SegmentInitializing   = 0
	SegmentReady          = 1
	DistroUnknown         = 0
	DistroHumble          = 1
	DistroJazzy           = 2
	DistroKilted          = 3
	SectionNodes          = 1
	SectionEndpoints      = 2
	SectionLanes          = 3
	SectionGaps           = 4
	SectionLatency        = 5          // receive latency, rp_gap layout (ABI 1.2)
	SectionTiming         = 6          // callback durations and timer lateness (ABI 1.4)
	SectionThreads        = 7          // one record per private lane: busy time (ABI 1.4)
	SectionQoS            = 8          // per endpoint: actual QoS, type, rmw, domain (ABI 1.5)
	SectionCalls          = 9          // per service or client: requests, answers, durations, open calls (ABI 1.6)
	SectionLinks          = 10         // which input each callback's publishes came from (ABI 1.9, ROS_PULSE_LINKS=1)
	SectionBytes          = 11         // per endpoint: its messages' sizes (ABI 1.9, ROS_PULSE_BYTES=1)
	BytesTyped            = 1 << 0     // rp_bytes.flags: the type was read (a fixed size, or samples to come)
	BytesUnreadable       = 1 << 1     // rp_bytes.flags: a type support was given but could not be read
	BytesWide             = 1 << 2     // rp_bytes.flags: wchar/wstring members (their wire size depends on the rmw)
	LinkMessage           = 1          // rp_link.kind: published while handling that input message
	LinkSampled           = 2          // rp_link.kind: published by a timer of the input's node, from its latest message (rule 3)
	LinkClaimed           = 2          // rp_link.state while its writer fills it
	LinkSharedLane        = 0xffffffff // rp_link.lane of the shared lane's record (atomic adds)
	LinkFlagRclpy         = 1          // rp_link.flags: linked by rclpy's rule (a take to the thread's next take, wait, timer call or service take)
	CallRing              = 32
	CallAnswered          = 1 << 63 // ABI 1.7: in a client's ring entry, an answer taken before its call opened
	TypeMax               = 128
	RMWMax                = 32
	NoDomain              = 0xffffffff
	DurationInfinite      = 1<<64 - 1
	QoSActual             = 1 << 0
	QoSTypeTruncated      = 1 << 1
	QoSAvoidRosNS         = 1 << 2
	EnvDomainID           = 1 << 0
	EnvRMW                = 1 << 1
	EnvLocalhostOnly      = 1 << 2
	EnvDiscoveryRange     = 1 << 3
	EnvStaticPeers        = 1 << 4
	EnvCycloneDDSURI      = 1 << 5
	EnvFastDDSProfile     = 1 << 6
	EnvZenohConfig        = 1 << 7
	EnvTruncated          = 1 << 8
	TimeBuckets           = 200
	TimeSubBits           = 3
	SymbolMax             = 128
	TimeBucketWords       = (TimeBuckets + 63) / 64 // u64 words of a bucket bitmap (ABI 1.10)
	GapBuckets            = 384
	GapSubBits            = 4
	GapIntraPublisher     = 1
	RecordEmpty           = 0
	RecordReady           = 1
	KindPublisher         = 1
	KindSubscription      = 2
	KindTimer             = 3
	KindService           = 4
	KindClient            = 5 // ABI 1.6
	FlagNameTruncated     = 1 << 0
	FlagRetired           = 1 << 1
	FlagRclcpp            = 1 << 2
	SlotInter             = 0
	SlotIntra             = 1
	SlotTaken             = 2
	SlotReserved          = 3
	headerReserved1Length = HeaderSize - 320 - ExeMax - CmdlineMax - 352 - 8 - 24*MaxSections
)

// rawSection mirrors struct rp_section.
type rawSection struct {
	Kind   uint32
	Count  uint32
	Offset uint64
	Stride uint64
}

// rawHeader mirrors struct rp_header. Fields written after publication are
// read with atomic loads (see reader.go).
type rawHeader struct {
	Magic            uint64
	AbiMajor         uint16
	AbiMinor         uint16
	HeaderSize       uint32
	TotalSize        uint64
	State            uint32
	Pid              int32
	Ppid             int32
	Distro           uint32
	StartMonoNs      uint64
	StartRealNs      uint64
	ProcStartTicks   uint64
	LaneCount        uint32
	SectionCount     uint32
	NodeCapacity     uint32
	NodeCount        uint32
	EndpointCapacity uint32
	EndpointCount    uint32
	DroppedNodes     uint64
	DroppedEndpoints uint64
	DroppedHandles   uint64
	LanesClaimed     uint32
	CmdlineLen       uint32
	CacheMisses      uint64
	Sections         [MaxSections]rawSection
	Exe              [ExeMax]byte
	Cmdline          [CmdlineMax]byte
	Env              rawEnv // ABI 1.5
	ExtSectionCount  uint32 // ABI 1.6: sections beyond the eight of Sections
	ReservedExt      uint32
	ExtSections      [MaxSections]rawSection
	Reserved1        [headerReserved1Length]byte
}

// rawEnv mirrors struct rp_env: the process's ROS environment at creation.
type rawEnv struct {
	Flags             uint32
	Reserved          uint32
	DomainId          [16]byte
	RmwImplementation [40]byte
	LocalhostOnly     [8]byte
	DiscoveryRange    [24]byte
	StaticPeers       [256]byte
}

// rawQos mirrors struct rp_qos: one endpoint's QoS, type, rmw and domain, under a seqlock.
type rawQos struct {
	Seq         uint32
	Generation  uint32
	History     uint8
	Reliability uint8
	Durability  uint8
	Liveliness  uint8
	Depth       uint32
	DeadlineNs  uint64
	LifespanNs  uint64
	LeaseNs     uint64
	DomainId    uint32
	Flags       uint32
	Rmw         [RMWMax]byte
	Type        [TypeMax]byte
	Reserved    [48]byte
}

// rawCall mirrors struct rp_call: one open call (Id 0: none), read id, start, id.
type rawCall struct {
	Id      uint64
	StartNs uint64
}

// rawCalls mirrors struct rp_calls (ABI 1.6): one service's or client's calls.
type rawCalls struct {
	Started    uint64
	Answered   uint64
	Unmatched  uint64
	Evicted    uint64
	SumNs      uint64
	SendFailed uint64 // ABI 1.8 (reserved before): a server's responses rcl_send_response refused
	Reserved   [16]byte
	Buckets    [TimeBuckets]uint32
	Ring       [CallRing]rawCall
	Reserved2  [32]byte
}

// rawLink mirrors struct rp_link (ABI 1.9): one input linked to one output.
type rawLink struct {
	State            uint32
	Kind             uint16
	Flags            uint16
	Input            uint32 // endpoint index of the subscription
	Output           uint32 // endpoint index of the publisher
	InputGeneration  uint32
	OutputGeneration uint32
	AgeSumNs         uint64
	OwnSumNs         uint64
	Unaged           uint64
	Lane             uint32 // its writer's private lane, or LinkSharedLane
	Reserved         [4]byte
	WorstSumNs       uint64 // LinkSampled: ages from each cycle's first message
	AgeBuckets       [TimeBuckets]uint32
	OwnBuckets       [TimeBuckets]uint32
	WorstBuckets     [TimeBuckets]uint32 // LinkSampled
}

// rawBytes mirrors struct rp_bytes (ROS_PULSE_BYTES=1).
type rawBytes struct {
	SampledBytes uint64
	Sampled      uint64
	ExactBytes   uint64
	Exact        uint64
	FixedSize    uint32
	Flags        uint32
	MaxSize      uint32
	Every        uint32
	Reserved     [16]byte
}

// rawGap mirrors struct rp_gap (present only when the process runs with gap tracking).
type rawGap struct {
	LastMonoNs  uint64
	SumNs       uint64
	Flags       uint32
	Reserved    uint32
	Buckets     [GapBuckets]uint32
	FirstMonoNs uint64 // ABI 1.7: gaps sum to LastMonoNs - FirstMonoNs
}

// rawTiming mirrors struct rp_timing (ABI 1.4, unless the process runs with ROS_PULSE_TIMING=0).
type rawTiming struct {
	SumNs           uint64
	Unended         uint64
	Overruns        uint64
	LateSumNs       uint64
	PeriodNs        uint64
	SymbolLen       uint32 // stored after Symbol's bytes (release): read it first
	SymbolTruncated uint32
	Buckets         [TimeBuckets]uint32
	LateBuckets     [TimeBuckets]uint32
	Symbol          [SymbolMax]byte
	Used            BucketSet // ABI 1.10: the buckets that ever counted, each marked after its first count
	LateUsed        BucketSet
}

// rawThread mirrors struct rp_thread: one thread's busy time, under a seqlock.
type rawThread struct {
	Seq           uint32
	Tid           int32
	BusyNs        uint64
	OpenNs        uint64
	Callbacks     uint64
	EndpointIndex uint32 // the slot of its last outermost callback (NoNode: none)
	Reserved      uint32
	Name          [24]byte
	WaitNs        uint64 // inside rcl_wait, ended waits
	WaitOpenNs    uint64 // start of the rcl_wait running now; 0 = none
	Waits         uint64
	Reserved2     [40]byte
}

// rawNode mirrors struct rp_node.
type rawNode struct {
	State         uint32
	Flags         uint32
	CreatedMonoNs uint64
	Name          [NameMax]byte
}

// rawEndpoint mirrors struct rp_endpoint.
type rawEndpoint struct {
	State         uint32
	Kind          uint16
	Reserved0     uint16
	NodeIndex     uint32
	Flags         uint32
	Aux           uint64
	CreatedMonoNs uint64
	Generation    uint32 // ABI 1.3: +1 at every reuse of the slot
	Reserved0b    uint32
	Base          [3]uint64 // ABI 1.3: the slot's lane sums when this entity took it
	Name          [NameMax]byte
}
