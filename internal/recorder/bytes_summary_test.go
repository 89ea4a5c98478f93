package recorder

import (
	"bytes"
	"strings"
	"testing"

	"ros2_pulse/internal/window"
)

// A run's bandwidth table: each topic's bytes over the windows it had
// bytes in, sampled ones marked ~, a side nothing could size "-", a row
// per publisher under a topic that has several, and no table at all for a
// run that measured no bytes.
func TestBytesSummary(t *testing.T) {
	s := Summary{Period: 1}
	for i := 0; i < 2; i++ {
		s.Add(&window.Window{Seconds: 1, Topics: []window.Topic{
			{Name: "/image", PubBytes: window.Bytes{How: window.BytesSampled, Total: 3e6, Messages: 30, MaxSize: 100060},
				RecvBytes: window.Bytes{How: window.BytesNone, Messages: 30},
				Pubs: []window.EndpointRate{
					{Node: "/right", Pid: 7, Bytes: window.Bytes{How: window.BytesSampled, Total: 1e6, Messages: 20, MaxSize: 50030}},
					{Node: "/left", Pid: 7, Bytes: window.Bytes{How: window.BytesExact, Total: 2e6, Messages: 10, MaxSize: 100060}}}},
			{Name: "/pose", PubBytes: window.Bytes{How: window.BytesExact, Total: 2200, Messages: 50, MaxSize: 44},
				RecvBytes: window.Bytes{How: window.BytesExact, Total: 2200, Messages: 50},
				Pubs:      []window.EndpointRate{{Node: "/odom", Pid: 8, Bytes: window.Bytes{How: window.BytesExact, Total: 2200, Messages: 50, MaxSize: 44}}}},
			{Name: "/plain"},
		}})
	}
	var out bytes.Buffer
	s.printBytes(&out)
	got := out.String()
	rows := map[string]string{}
	for _, l := range strings.Split(got, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	if rows["/image"] != "~3.00 MB ~100 kB 100 kB -" || rows["/pose"] != "2.20 kB 44 B 44 B 2.20 kB" || !strings.HasPrefix(got, "bandwidth") ||
		rows["/left@7"] != "2.00 MB 200 kB 100 kB" || rows["/right@7"] != "~1.00 MB ~50.0 kB 50.0 kB" || rows["/odom@8"] != "" {
		t.Errorf("table:\n%s", got)
	}
	if strings.Index(got, "/left@7") > strings.Index(got, "/right@7") || strings.Index(got, "/image") > strings.Index(got, "/left@7") {
		t.Errorf("publishers out of order:\n%s", got)
	}
	if strings.Contains(got, "/plain") {
		t.Errorf("a topic without bytes in the table:\n%s", got)
	}
	var none Summary
	none.Add(&window.Window{Seconds: 1, Topics: []window.Topic{{Name: "/plain"}}})
	out.Reset()
	none.printBytes(&out)
	if out.Len() != 0 {
		t.Errorf("a run without bytes printed:\n%s", out.String())
	}
}
