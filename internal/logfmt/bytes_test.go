package logfmt

import (
	"strings"
	"testing"

	"ros2_pulse/internal/window"
)

func bytesWindow() *window.Window {
	return &window.Window{TsNs: 5e9, Seconds: 1, Topics: []window.Topic{
		{Name: "/image", PubInter: 30, PubCount: 1, SubCount: 1, PubInterSeen: true, RecvInter: 30, RecvSeen: true,
			PubBytes:  window.Bytes{How: window.BytesSampled, PerS: 27649440, MeanSize: 921648, MaxSize: 921652, Messages: 30, Total: 27649440},
			RecvBytes: window.Bytes{How: window.BytesExact, PerS: 120, MeanSize: 4, MaxSize: 4, Messages: 30, Total: 120},
			Pubs:      []window.EndpointRate{{Pid: 7, Node: "/cam", Inter: 30, Alive: true, Bytes: window.Bytes{How: window.BytesSampled, PerS: 27649440, MeanSize: 921648}}},
			Subs:      []window.EndpointRate{{Pid: 8, Node: "/view", Inter: 30, Alive: true, Bytes: window.Bytes{How: window.BytesNone}}}},
		{Name: "/plain", PubInter: 1, PubCount: 1, PubInterSeen: true},
	}}
}

// A window's bytes (design note 0033) read back as written, in both
// formats: each topic side's, and each endpoint's; a topic without bytes
// has none.
func TestBytesRoundTrip(t *testing.T) {
	w := bytesWindow()
	for _, f := range []Format{Text, JSONL} {
		res := read(t, Render(f, w, Options{}))
		if res.Malformed != 0 || len(res.Windows) != 1 {
			t.Fatalf("%s: %s", f, res)
		}
		got := res.Windows[0]
		img, plain := got.Topic("/image"), got.Topic("/plain")
		if img == nil || plain == nil {
			t.Fatalf("%s: topics %+v", f, got.Topics)
		}
		if img.PubBytes != w.Topics[0].PubBytes || img.RecvBytes != w.Topics[0].RecvBytes {
			t.Errorf("%s: /image pub %+v recv %+v, want %+v %+v", f, img.PubBytes, img.RecvBytes, w.Topics[0].PubBytes, w.Topics[0].RecvBytes)
		}
		if len(img.Pubs) != 1 || img.Pubs[0].Bytes != w.Topics[0].Pubs[0].Bytes || len(img.Subs) != 1 || img.Subs[0].Bytes.How != window.BytesNone {
			t.Errorf("%s: endpoints %+v %+v", f, img.Pubs, img.Subs)
		}
		if plain.PubBytes.How != "" {
			t.Errorf("%s: /plain has bytes %+v", f, plain.PubBytes)
		}
	}
}

// A BYTES line or an EP line's bytes with a bad side, kind or number is
// one malformed line; the window around it still reads.
func TestBytesMalformed(t *testing.T) {
	good := string(Render(Text, bytesWindow(), Options{}))
	for _, bad := range []string{
		"BYTES /x up how=exact per_s=1 mean=1 max=1 messages=1",
		"BYTES /x pub how=guessed per_s=1 mean=1 max=1 messages=1",
		"BYTES /x pub how=exact per_s=-1 mean=1 max=1 messages=1",
		"BYTES /x pub how=exact per_s=1 mean=NaN max=1 messages=1",
		"BYTES /x pub how=exact per_s=1 mean=1 max=99999999999 messages=1",
		"BYTES /x pub how=exact per_s=1 mean=1 max=1",
		"EP /x pub pid=1 node=/a inter=1.0 intra=0.0 bytes=exact bytes_per_s=x mean_bytes=1",
		"EP /x pub pid=1 node=/a inter=1.0 intra=0.0 bytes=maybe bytes_per_s=1 mean_bytes=1",
	} {
		data := strings.Replace(good, "TOPIC /plain", bad+"\nTOPIC /plain", 1)
		if data == good {
			t.Fatalf("no TOPIC /plain line in\n%s", good)
		}
		res := read(t, []byte(data))
		if res.Malformed != 1 || len(res.Windows) != 1 || res.Windows[0].Topic("/image").PubBytes.How != window.BytesSampled {
			t.Errorf("%q: %s", bad, res)
		}
	}
}
