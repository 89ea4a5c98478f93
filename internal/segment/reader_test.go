package segment

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A directory full of hostile files: every bad one is a reported problem,
// the good one is read, nothing blocks, nothing crashes.
func TestReaderHostileDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1.0.pulse", sample())
	write("2.0.pulse", []byte("not a segment at all"))
	garbage := make([]byte, 8192)
	for i := range garbage {
		garbage[i] = byte(i * 7)
	}
	write("3.0.pulse", garbage)
	write("4.0.pulse", nil) // created, not yet reserved: silently skipped
	write("notes.txt", []byte("ignored"))
	if err := syscall.Mkfifo(filepath.Join(dir, "5.0.pulse"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/etc/passwd", filepath.Join(dir, "6.0.pulse"))
	os.Mkdir(filepath.Join(dir, "7.0.pulse"), 0o700)
	f, _ := os.Create(filepath.Join(dir, "8.0.pulse"))
	f.Truncate(4 << 30) // sparse 4 GiB
	f.Close()

	r := NewReader(dir)
	defer r.Close()
	s, err := r.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Snapshots) != 1 || s.Snapshots[0].Pid != 4242 {
		t.Fatalf("snapshots: %+v", s.Snapshots)
	}
	if s.Snapshots[0].Alive {
		t.Error("nobody holds the lock of a file written by a test: it must read as exited")
	}
	want := map[string]string{"2.0.pulse": "truncated", "3.0.pulse": "bad magic", "5.0.pulse": "not a regular file",
		"6.0.pulse": "not a regular file", "7.0.pulse": "not a regular file", "8.0.pulse": "larger than any segment"}
	if len(s.Problems) != len(want) {
		t.Errorf("problems: %v", s.Problems)
	}
	for _, p := range s.Problems {
		if w := want[filepath.Base(p.Path)]; w == "" || !strings.Contains(p.Err.Error(), w) {
			t.Errorf("%v: want %q", p, w)
		}
	}
	// Remove refuses what is not a segment of this directory.
	if err := r.Remove(filepath.Join(dir, "6.0.pulse")); err == nil {
		t.Error("removed a symlink")
	}
	if err := r.Remove("/etc/passwd"); err == nil {
		t.Error("removed a file outside the directory")
	}
	if err := r.Remove(filepath.Join(dir, "1.0.pulse")); err != nil {
		t.Errorf("removing a dead segment: %v", err)
	}
}

// A segment truncated after it was mapped makes the next read fault
// (SIGBUS): the reader reports it instead of crashing.
func TestReaderSurvivesTruncationWhileMapped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "9.0.pulse")
	if err := os.WriteFile(path, sample(), 0o600); err != nil {
		t.Fatal(err)
	}
	r := NewReader(dir)
	defer r.Close()
	m, err := mapFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := parseGuarded(m.mem, nil); err == nil || !strings.Contains(err.Error(), "changed size") {
		t.Fatalf("got %v", err)
	}
	// And a scan of the shrunk file just reports it.
	if s, err := r.Scan(); err != nil || len(s.Snapshots) != 0 {
		t.Fatalf("scan: %+v %v", s, err)
	}
}

// A segment replaced at the same path (a new file, a new inode) is read
// afresh, and a mapping that faulted is dropped: once the file is whole
// again, the next scan reads it. Neither needs a stat per scan.
func TestReaderRemapsReplacedAndFaultedSegments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "9.0.pulse")
	other := build([]string{"/other"}, []rawEndpoint{endpoint(KindPublisher, "/other_topic", 0)},
		[][CountersPerEndpoint]uint64{{42, 0, 0, 0}}, 1)
	if err := os.WriteFile(path, sample(), 0o600); err != nil {
		t.Fatal(err)
	}
	r := NewReader(dir)
	defer r.Close()
	name := func() string {
		t.Helper()
		s, err := r.Scan()
		if err != nil || len(s.Snapshots) != 1 || len(s.Snapshots[0].Endpoints) == 0 {
			t.Fatalf("scan: %+v %v", s, err)
		}
		return s.Snapshots[0].Endpoints[0].Name
	}
	if got := name(); got != "/chatter" {
		t.Fatalf("first read: %q", got)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, other, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil { // a new inode at the same name
		t.Fatal(err)
	}
	if got := name(); got != "/other_topic" {
		t.Fatalf("after the replacement the reader still read %q", got)
	}
	// Truncated under the mapping: reported, not fatal; restored in place
	// (same inode, full size again): read again.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if s, err := r.Scan(); err != nil || len(s.Snapshots) != 0 {
		t.Fatalf("scan of the truncated file: %+v %v", s, err)
	}
	if err := os.WriteFile(path, other, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := name(); got != "/other_topic" {
		t.Fatalf("after the restore: %q", got)
	}
}
