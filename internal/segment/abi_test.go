package segment

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// cABI compiles probe/test/abi_dump.c against the real header and returns
// its report: "struct.field" -> [offset, size], "const NAME" -> value.
// ABI_DUMP names an abi_dump built by the Makefile instead: the arm64 lane
// runs the arm64 one beside this test built for arm64.
func cABI(t *testing.T) (fields map[string][2]uint64, consts map[string]uint64, sizes map[string]uint64) {
	t.Helper()
	bin := os.Getenv("ABI_DUMP")
	if bin == "" {
		root, _ := filepath.Abs("../..")
		bin = filepath.Join(t.TempDir(), "abi_dump")
		cmd := exec.Command("cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", filepath.Join(root, "probe/include"),
			"-o", bin, filepath.Join(root, "probe/test/abi_dump.c"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("compiling abi_dump: %v\n%s", err, out)
		}
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	fields, consts, sizes = map[string][2]uint64{}, map[string]uint64{}, map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case f[0] == "const":
			v, _ := strconv.ParseUint(f[2], 10, 64)
			consts[f[1]] = v
		case f[0] == "sizeof":
			v, _ := strconv.ParseUint(f[2], 10, 64)
			sizes[f[1]] = v
		default:
			off, _ := strconv.ParseUint(f[1], 10, 64)
			size, _ := strconv.ParseUint(f[2], 10, 64)
			fields[f[0]] = [2]uint64{off, size}
		}
	}
	return fields, consts, sizes
}

func camel(snake string) string {
	var b strings.Builder
	for _, part := range strings.Split(snake, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// TestABIMatchesC proves the Go mirror and segment.h agree field by field:
// every C field exists in Go at the same offset with the same size, Go has
// no field C lacks, the struct sizes match, and so does every constant.
func TestABIMatchesC(t *testing.T) {
	fields, consts, sizes := cABI(t)
	structs := map[string]reflect.Type{
		"rp_header":   reflect.TypeOf(rawHeader{}),
		"rp_section":  reflect.TypeOf(rawSection{}),
		"rp_node":     reflect.TypeOf(rawNode{}),
		"rp_endpoint": reflect.TypeOf(rawEndpoint{}),
		"rp_gap":      reflect.TypeOf(rawGap{}),
		"rp_timing":   reflect.TypeOf(rawTiming{}),
		"rp_thread":   reflect.TypeOf(rawThread{}),
		"rp_qos":      reflect.TypeOf(rawQos{}),
		"rp_env":      reflect.TypeOf(rawEnv{}),
		"rp_call":     reflect.TypeOf(rawCall{}),
		"rp_calls":    reflect.TypeOf(rawCalls{}),
		"rp_link":     reflect.TypeOf(rawLink{}),
		"rp_bytes":    reflect.TypeOf(rawBytes{}),
	}
	for cname, typ := range structs {
		if uint64(typ.Size()) != sizes[cname] {
			t.Errorf("sizeof %s: C %d, Go %d", cname, sizes[cname], typ.Size())
		}
		goFields := map[string]bool{}
		for i := 0; i < typ.NumField(); i++ {
			goFields[typ.Field(i).Name] = true
		}
		for key, want := range fields {
			s, f, _ := strings.Cut(key, ".")
			if s != cname {
				continue
			}
			gf, ok := typ.FieldByName(camel(f))
			if !ok {
				t.Errorf("%s.%s: no Go field %s", cname, f, camel(f))
				continue
			}
			delete(goFields, gf.Name)
			if uint64(gf.Offset) != want[0] || uint64(gf.Type.Size()) != want[1] {
				t.Errorf("%s.%s: C offset %d size %d, Go offset %d size %d", cname, f, want[0], want[1], gf.Offset, gf.Type.Size())
			}
		}
		for name := range goFields {
			t.Errorf("%s: Go field %s has no C counterpart", cname, name)
		}
	}
	goConsts := map[string]uint64{
		"RP_MAGIC": Magic, "RP_ABI_MAJOR": ABIMajor, "RP_ABI_MINOR": ABIMinor, "RP_HEADER_SIZE": HeaderSize,
		"RP_MAX_SECTIONS": MaxSections, "RP_EXE_MAX": ExeMax, "RP_CMDLINE_MAX": CmdlineMax, "RP_NAME_MAX": NameMax,
		"RP_COUNTERS_PER_ENDPOINT": CountersPerEndpoint, "RP_NO_NODE": NoNode,
		"RP_SEGMENT_INITIALIZING": SegmentInitializing, "RP_SEGMENT_READY": SegmentReady,
		"RP_DISTRO_UNKNOWN": DistroUnknown, "RP_DISTRO_HUMBLE": DistroHumble, "RP_DISTRO_JAZZY": DistroJazzy,
		"RP_DISTRO_KILTED": DistroKilted, "RP_SECTION_NODES": SectionNodes, "RP_SECTION_ENDPOINTS": SectionEndpoints,
		"RP_SECTION_LANES": SectionLanes, "RP_SECTION_GAPS": SectionGaps, "RP_SECTION_LATENCY": SectionLatency, "RP_GAP_BUCKETS": GapBuckets,
		"RP_SECTION_TIMING": SectionTiming, "RP_SECTION_THREADS": SectionThreads, "RP_TIME_BUCKETS": TimeBuckets, "RP_TIME_SUB_BITS": TimeSubBits, "RP_SYMBOL_MAX": SymbolMax, "RP_TIME_BUCKET_WORDS": TimeBucketWords,
		"RP_GAP_SUB_BITS": GapSubBits, "RP_GAP_INTRA_PUBLISHER": GapIntraPublisher, "RP_RECORD_EMPTY": RecordEmpty, "RP_RECORD_READY": RecordReady,
		"RP_KIND_PUBLISHER": KindPublisher, "RP_KIND_SUBSCRIPTION": KindSubscription, "RP_KIND_TIMER": KindTimer,
		"RP_KIND_SERVICE": KindService, "RP_EP_NAME_TRUNCATED": FlagNameTruncated, "RP_EP_RETIRED": FlagRetired,
		"RP_EP_RCLCPP": FlagRclcpp, "RP_SLOT_INTER": SlotInter, "RP_SLOT_INTRA": SlotIntra, "RP_SLOT_TAKEN": SlotTaken,
		"RP_SLOT_RESERVED": SlotReserved,
		"RP_SECTION_QOS":   SectionQoS, "RP_TYPE_MAX": TypeMax, "RP_RMW_MAX": RMWMax, "RP_NO_DOMAIN": NoDomain,
		"RP_DURATION_INFINITE": DurationInfinite, "RP_QOS_ACTUAL": QoSActual, "RP_QOS_TYPE_TRUNCATED": QoSTypeTruncated,
		"RP_QOS_AVOID_ROS_NS": QoSAvoidRosNS, "RP_ENV_DOMAIN_ID": EnvDomainID, "RP_ENV_RMW": EnvRMW,
		"RP_ENV_LOCALHOST_ONLY": EnvLocalhostOnly, "RP_ENV_DISCOVERY_RANGE": EnvDiscoveryRange,
		"RP_ENV_STATIC_PEERS": EnvStaticPeers, "RP_ENV_CYCLONEDDS_URI": EnvCycloneDDSURI,
		"RP_ENV_FASTDDS_PROFILE": EnvFastDDSProfile, "RP_ENV_ZENOH_CONFIG": EnvZenohConfig, "RP_ENV_TRUNCATED": EnvTruncated,
		"RP_SECTION_CALLS": SectionCalls, "RP_CALL_RING": CallRing, "RP_CALL_ANSWERED": CallAnswered, "RP_KIND_CLIENT": KindClient,
		"RP_SECTION_LINKS": SectionLinks, "RP_LINK_MESSAGE": LinkMessage, "RP_LINK_SAMPLED": LinkSampled, "RP_LINK_CLAIMED": LinkClaimed, "RP_LINK_FLAG_RCLPY": LinkFlagRclpy, "RP_LINK_SHARED_LANE": LinkSharedLane,
		"RP_SECTION_BYTES": SectionBytes, "RP_BYTES_TYPED": BytesTyped, "RP_BYTES_UNREADABLE": BytesUnreadable, "RP_BYTES_WIDE": BytesWide,
	}
	for name, v := range consts {
		gv, ok := goConsts[name]
		if !ok {
			t.Errorf("constant %s has no Go counterpart", name)
		} else if gv != v {
			t.Errorf("constant %s: C %d, Go %d", name, v, gv)
		}
	}
	if len(consts) != len(goConsts) {
		t.Errorf("C reports %d constants, Go mirrors %d", len(consts), len(goConsts))
	}
	if _, err := os.Stat("../../probe/include/ros2_pulse/segment.h"); err != nil {
		t.Fatal(err)
	}
}
