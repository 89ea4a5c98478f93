package export

import (
	"path/filepath"
	"testing"
	"time"

	"ros2_pulse/internal/segment"
)

// ros2_pulse_bytes_total (design note 0033): a fixed-size publisher's
// count x size, a sampled one's count x its samples' mean, a subscription's
// serialized takes exactly; no series where nothing could be sized; and a
// later, smaller sampled mean never makes the counter go down.
func TestBytesTotal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bytes-7.0.pulse")
	write := func(imageCount, sampled, sampledBytes uint64) {
		err := segment.WriteSynthetic(path, segment.SyntheticSpec{Pid: 7, StartMono: 1, Exe: "/opt/ros/lib/cam", Nodes: []string{"/cam"},
			Endpoints: []segment.SyntheticEndpoint{
				{Kind: segment.KindPublisher, Name: "/pose", Node: 0, CreatedMono: 1, Counts: [4]uint64{100},
					Bytes: &segment.Bytes{Typed: true, FixedSize: 44}},
				{Kind: segment.KindPublisher, Name: "/image", Node: 0, CreatedMono: 1, Counts: [4]uint64{imageCount},
					Bytes: &segment.Bytes{Typed: true, Sampled: sampled, SampledBytes: sampledBytes}},
				{Kind: segment.KindSubscription, Name: "/bag", Node: 0, CreatedMono: 1, Counts: [4]uint64{3},
					Bytes: &segment.Bytes{Typed: true, Exact: 3, ExactBytes: 3000}},
				{Kind: segment.KindPublisher, Name: "/text", Node: 0, CreatedMono: 1, Counts: [4]uint64{9},
					Bytes: &segment.Bytes{Unreadable: true}},
			}})
		if err != nil {
			t.Fatal(err)
		}
	}
	write(32, 2, 2000)
	c, err := New(Options{Dir: dir, Retain: time.Hour, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := gather(t, c)
	for topic, want := range map[string]float64{"/pose": 4400, "/image": 32000, "/bag": 3000} {
		if got, ok := find(t, f, "ros2_pulse_bytes_total", map[string]string{"topic": topic}); !ok || got != want {
			t.Errorf("%s: %v (found %v), want %v", topic, got, ok, want)
		}
	}
	if _, ok := find(t, f, "ros2_pulse_bytes_total", map[string]string{"topic": "/text"}); ok {
		t.Error("bytes exported for a type nothing could size")
	}
	// 16 more images whose samples were smaller (500 B): the counter adds 8000, it never recomputes 48 x the mean
	write(48, 4, 3000)
	f = gather(t, c)
	if got, _ := find(t, f, "ros2_pulse_bytes_total", map[string]string{"topic": "/image"}); got != 40000 {
		t.Errorf("/image after smaller samples: %v, want 32000 + 16 x 500", got)
	}
}
