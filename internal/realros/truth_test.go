package realros

import (
	"strings"
	"testing"
)

const sampleTruth = `{"pid":42,"lang":"rclcpp","endpoints":[
 {"kind":"publisher","node":"/talker","name":"/chatter","period_ns":0,"count":101,"bytes":1616,"answered":0,"first_ns":1000000000,"last_ns":6000000000,"failed":0,
  "callback":{"n":0,"sum_ns":0,"max_ns":0},"late":{"n":0,"sum_ns":0,"max_ns":0},"round_trip":{"n":0,"sum_ns":0,"max_ns":0}}]}`

func TestParseTruth(t *testing.T) {
	tr, err := ParseTruth([]byte(sampleTruth))
	if err != nil || tr.Pid != 42 || len(tr.Endpoints) != 1 || tr.Endpoints[0].Count != 101 || tr.Endpoints[0].Hz() != 20 {
		t.Fatalf("%+v %v", tr, err)
	}
	for _, bad := range []string{``, `{}`, `{"pid":1,"lang":"go"}`, `{"pid":-1,"lang":"rclpy"}`,
		strings.Replace(sampleTruth, `"first_ns":1000000000`, `"first_ns":9000000000`, 1),
		strings.Replace(sampleTruth, `"failed":0`, `"failed":-2`, 1),
		strings.Replace(sampleTruth, `"failed":0`, `"failed":0,"ages_ns":[1,2],"path_ages_ns":[3]`, 1), `{"pid":1,"lang":"rclpy","endpoints":[{}]}`} {
		if _, err := ParseTruth([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParseTruth(f *testing.F) {
	f.Add([]byte(sampleTruth))
	f.Add([]byte(`{"pid":1,"lang":"rclpy","endpoints":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ParseTruth(b)
		if err != nil {
			return
		}
		for i := range tr.Endpoints {
			if tr.Endpoints[i].Hz() < 0 {
				t.Fatalf("negative rate from %q", b)
			}
		}
	})
}
