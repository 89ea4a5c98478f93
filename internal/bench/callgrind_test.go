package bench

import (
	"strings"
	"testing"
)

// A profile in callgrind's format, written by hand: a wrapper in the probe
// forwarding to the real function, called twice from librcl, with name
// compression, a relative position and a call from a cold part.
const profileSample = `version: 1
creator: callgrind-3.19.0
cmd: pulse_node
events: Ir
summary: 1000

ob=(1) /opt/ros/humble/lib/librcl.so
fl=(1) rcl.c
fn=(1) rcl_publish
10 100
cob=(2) /work/build/lib/libros2_pulse.so
cfi=(2) probe.c
cfn=(2) ros_trace_rcl_publish
calls=2 20
+1 90

ob=(2)
fl=(2)
fn=(2)
20 60
cob=(3) /opt/ros/humble/lib/libtracetools.so
cfn=(3) ros_trace_rcl_publish
calls=2 30
* 22
*

ob=(3)
fn=(3)
30 22
`

func TestParseCallgrind(t *testing.T) {
	p, err := ParseCallgrind(strings.NewReader(profileSample))
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 1000 {
		t.Errorf("total %d, want 1000", p.Total)
	}
	probe := p.Funcs[Func{"libros2_pulse.so", "ros_trace_rcl_publish"}]
	if probe == nil || probe.Calls != 2 || probe.Incl != 90 {
		t.Fatalf("the probe's hook as a callee: %+v, want 2 calls, 90 inclusive", probe)
	}
	// Own: 90 inclusive less the real tracepoint's 22, over 2 calls.
	if per, calls := p.Own("libros2_pulse.so", "ros_trace_rcl_publish"); calls != 2 || per != 34 {
		t.Errorf("Own = %.1f a call over %d calls, want 34 over 2", per, calls)
	}
	if per, calls := p.Own("libtracetools.so", "ros_trace_rcl_publish"); calls != 2 || per != 11 {
		t.Errorf("the real tracepoint: %.1f over %d calls, want 11 over 2", per, calls)
	}
	if _, calls := p.Own("libros2_pulse.so", "rcl_wait"); calls != 0 {
		t.Errorf("a hook that never ran has %d calls", calls)
	}
	if p.Self["libros2_pulse.so"] != 60 || p.Self["librcl.so"] != 100 || p.Self["libtracetools.so"] != 22 {
		t.Errorf("self per object: %v", p.Self)
	}
}

func TestParseCallgrindErrors(t *testing.T) {
	for name, in := range map[string]string{
		"no events":           "version: 1\nfn=f\n1 2\n",
		"another event":       "events: Dr\nfn=f\n1 2\n",
		"undefined id":        "events: Ir\nfn=(4)\n1 2\n",
		"cost before fn":      "events: Ir\n1 2\n",
		"calls with no count": "events: Ir\nfn=f\ncfn=g\ncalls=\n1 2\n",
		"a bad cost":          "events: Ir\nfn=f\n1 x\n",
	} {
		if _, err := ParseCallgrind(strings.NewReader(in)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func FuzzParseCallgrind(f *testing.F) {
	f.Add([]byte(profileSample))
	f.Add([]byte("events: Ir\nfn=(1) a\n0 1\ncfn=(1)\ncalls=1 0\n0 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseCallgrind(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		for f, c := range p.Funcs {
			if per, calls := p.Own(f.Object, f.Name); calls != c.Calls || per < 0 {
				t.Fatalf("Own(%v) = %v over %d calls, from %+v", f, per, calls, c)
			}
		}
	})
}
