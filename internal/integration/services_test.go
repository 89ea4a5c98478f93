package integration

import (
	"testing"
	"time"
)

// A service server's requests are counted in every window, to the request,
// as the graph handled them: rclcpp's callbacks fire callback_start. An
// rclpy server's fire nothing: its window entry says not measured, and its
// count stays zero rather than pretending (issue 23, item 3).
func TestServiceServersCount(t *testing.T) {
	for _, distro := range []string{"humble", "jazzy"} {
		t.Run(distro, func(t *testing.T) {
			g := sim(t, "testdata/services.graph", distro, 3*time.Second)
			ws, _ := judgeRun(t, g, 500*time.Millisecond, []string{"/add_two_ints", "/py_add"}, 0)
			answered := 0
			for i, w := range ws[:len(ws)-1] {
				seen := map[string]bool{}
				for _, sv := range w.Services {
					switch sv.Name {
					case "/add_two_ints":
						seen[sv.Name] = true
						if sv.Node != "/cpp_server" || !sv.Measured {
							t.Errorf("window %d: %+v, want /cpp_server's, measured", i, sv)
						}
						if sv.Delta > 0 {
							answered++
						}
					case "/py_add":
						seen[sv.Name] = true
						if sv.Node != "/py_server" || sv.Measured || sv.Delta != 0 {
							t.Errorf("window %d: %+v, want /py_server's, not measured", i, sv)
						}
					}
				}
				if !seen["/add_two_ints"] || !seen["/py_add"] {
					t.Errorf("window %d: services %+v", i, w.Services)
				}
			}
			if answered < 2 {
				t.Errorf("the rclcpp server answered in %d windows", answered)
			}
		})
	}
}
