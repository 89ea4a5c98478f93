package realros

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"ros2_pulse/internal/window"
)

// TestBytes (issue 48, design note 0033): with ROS_PULSE_BYTES=1 each
// publisher's bytes over the run are what rclcpp serialized of its messages
// (the node's own rclcpp::Serialization sizes, encapsulation included):
// exactly for a plain type (std_msgs/Int32), within 1 % for the sampled ones
// (a std_msgs/String of changing length; an rclpy String; with sensor_msgs
// in the prefix, an rgb8 Image and a PointCloud2 whose sizes vary). Each
// subscription's mean message size is its publisher's, within 1 %: what
// `ros2 topic bw` adds up per message, without subscribing.
func TestBytes(t *testing.T) {
	l := setup(t)
	r := l.newRun(t, "ROS_PULSE_BYTES=1")
	pubs := []string{"--pub", "/bytes/text,50,2000,0,varstring", "--pub", "/bytes/count,100,0,0,int32"}
	subs := []string{"--sub", "/bytes/text", "--sub", "/bytes/count", "--sub", "/bytes/py"}
	if _, err := os.Stat(filepath.Join(l.prefix, "share/sensor_msgs")); err == nil {
		pubs = append(pubs, "--pub", "/bytes/image,15,100000,0,image", "--pub", "/bytes/cloud,10,64000,0,cloud")
		subs = append(subs, "--sub", "/bytes/image", "--sub", "/bytes/cloud")
	} else {
		t.Logf("%s has no sensor_msgs: images and point clouds are not judged", l.prefix)
	}
	listener := r.node("bytes_listener", "cpp", "", append([]string{"--duration", "8"}, subs...)...)
	talker := r.node("bytes_talker", "cpp", "", append([]string{"--duration", "6"}, pubs...)...)
	py := r.node("bytes_py", "py", "", "--duration", "6", "--pub", "/bytes/py,20,300")
	r.waitAll(60 * time.Second)
	w := window.Compute(nil, r.scan(), 0, 0, window.Options{})

	type sent struct {
		bytes, count uint64
		exact        bool
	}
	truth := map[string]sent{}
	for _, p := range []*proc{talker, py} {
		tr := r.truth(p)
		for _, e := range tr.Endpoints {
			if e.Kind == "publisher" && e.Count > 0 {
				truth[e.Name] = sent{e.Bytes, e.Count, e.Name == "/bytes/count"}
			}
		}
	}
	if len(truth) < 3 {
		t.Fatalf("publishers with truth: %v", truth)
	}
	_ = listener
	for topic, want := range truth {
		tp := w.Topic(topic)
		if tp == nil || len(tp.Pubs) != 1 {
			t.Errorf("%s: no single publisher in pulse's window", topic)
			continue
		}
		got := tp.Pubs[0].Bytes
		wantHow := window.BytesSampled
		if want.exact {
			wantHow = window.BytesExact
		}
		table(t, "bytes "+topic, fmt.Sprintf("%s %.0f B over %d messages", got.How, got.Total, got.Messages),
			fmt.Sprintf("%d B over %d (rclcpp serialized)", want.bytes, want.count))
		switch {
		case got.How != wantHow:
			t.Errorf("%s: bytes %q, want %q", topic, got.How, wantHow)
		case got.Messages != want.count:
			t.Errorf("%s: pulse sized %d messages, the node published %d", topic, got.Messages, want.count)
		case want.exact && got.Total != float64(want.bytes):
			t.Errorf("%s: %.0f bytes, the node serialized exactly %d", topic, got.Total, want.bytes)
		case math.Abs(got.Total-float64(want.bytes)) > 0.01*float64(want.bytes):
			t.Errorf("%s: %.0f bytes, the node serialized %d (1 %%)", topic, got.Total, want.bytes)
		}
		mean := float64(want.bytes) / float64(want.count)
		for _, s := range tp.Subs {
			if s.Node != "/bytes_listener" {
				continue
			}
			t.Logf("%s: the listener received %d messages, %.1f bytes each (pulse, %s); the publisher's mean %.1f",
				topic, s.Bytes.Messages, s.Bytes.MeanSize, s.Bytes.How, mean)
			if !s.Bytes.Measured() || s.Bytes.Messages == 0 || math.Abs(s.Bytes.MeanSize-mean) > 0.01*mean {
				t.Errorf("%s: the listener's messages %.1f bytes each (%s), its publisher's %.1f", topic, s.Bytes.MeanSize, s.Bytes.How, mean)
			}
		}
	}
}
