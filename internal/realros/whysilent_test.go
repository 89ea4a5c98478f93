package realros

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// doctorSays runs pulse doctor on the run's segments once the graph has
// settled and returns what it printed.
func doctorSays(r *run) string {
	r.t.Helper()
	out, _ := r.pulseCmd("doctor", "--dir", r.dir).CombinedOutput() // exit 1: it found the problem
	return string(out)
}

// TestWhySilent: a subscription that hears nothing, for each cause pulse
// can see on a real graph (a QoS the publisher does not offer, another
// message type, another domain, a near name): pulse doctor names the cause
// for that subscription, as the finding's one line every view shows.
func TestWhySilent(t *testing.T) {
	l := setup(t)
	cases := []struct {
		name       string
		pub, sub   []string
		pubEnv     []string
		topic      string
		wantReason string
	}{
		{"qos", []string{"--best-effort", "--pub", "/q,20"}, []string{"--sub", "/q"}, nil, "/q", "qos_incompatible"},
		{"type", []string{"--pub", "/t,20,4,0,int32"}, []string{"--sub", "/t"}, nil, "/t", "type_mismatch"},
		{"domain", []string{"--pub", "/d,20"}, []string{"--sub", "/d"}, []string{"ROS_DOMAIN_ID=%d"}, "/d", "other_domain"},
		{"near name", []string{"--pub", "/chatter,20"}, []string{"--sub", "/chater"}, nil, "/chater", "no_publisher"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := l.newRun(t)
			var env []string
			for _, e := range c.pubEnv {
				env = append(env, fmt.Sprintf(e, r.domain+1))
			}
			r.node("listener", "cpp", "", append(c.sub, "--duration", "6")...)
			r.nodeEnv("talker", "cpp", "", env, append(c.pub, "--duration", "6")...)
			time.Sleep(4 * time.Second)
			doc := doctorSays(r)
			want := fmt.Sprintf("on %s: %s", c.topic, c.wantReason)
			table(t, "why silent: "+c.name, fmt.Sprintf("%q said: %v", want, strings.Contains(doc, want)), "the subscription received 0")
			if !strings.Contains(doc, want) {
				t.Errorf("pulse doctor does not say %q:\n%s", want, doc)
			}
			r.waitAll(20 * time.Second)
			for _, p := range r.procs {
				tr := r.truth(p)
				for _, e := range tr.Endpoints {
					if e.Kind == "subscription" && e.Count != 0 {
						t.Errorf("the silent subscription received %d: the case did not happen", e.Count)
					}
				}
			}
		})
	}
}

// TestCrossVendor: a Cyclone DDS subscription whose only publisher is a Fast
// DDS node on the same host and domain (real ROS: it received 10 of 90 and
// then nothing). pulse doctor names the two vendors as the likely cause for
// that subscription, with the fix, and never "the cause is not visible".
func TestCrossVendor(t *testing.T) {
	l := setup(t)
	if !l.has("rmw_cyclonedds_cpp") || !l.has("rmw_fastrtps_cpp") {
		t.Skipf("%s has not both Cyclone DDS and Fast DDS", l.prefix)
	}
	r := l.newRun(t)
	r.node("listener", "cpp", "rmw_cyclonedds_cpp", "--sub", "/xv", "--duration", "10")
	r.node("talker", "cpp", "rmw_fastrtps_cpp", "--pub", "/xv,20", "--duration", "10")
	time.Sleep(7 * time.Second)
	doc := doctorSays(r)
	if !strings.Contains(doc, "cross_vendor") || strings.Contains(doc, "not visible") {
		t.Errorf("pulse doctor on a Cyclone subscription fed only by Fast DDS:\n%s", doc)
	}
	r.waitAll(20 * time.Second)
	var got []string
	for _, p := range r.procs {
		tr := r.truth(p)
		for _, e := range tr.Endpoints {
			got = append(got, fmt.Sprintf("%s %d", e.Kind, e.Count))
		}
	}
	table(t, "why silent: Cyclone DDS subscription, Fast DDS publisher", fmt.Sprintf("cross_vendor said: %v", strings.Contains(doc, "cross_vendor")),
		strings.Join(got, ", "))
}
