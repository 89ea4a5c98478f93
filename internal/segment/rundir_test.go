package segment

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// holdLock keeps a POSIX record lock on path from another process, as a live
// probe does, until the test ends.
func holdLock(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command("python3", "-c", `import fcntl, sys, time
f = open(sys.argv[1], "r+")
fcntl.lockf(f, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)`, path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("python3 is needed to hold a lock from another process: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("lock holder said %q", line)
	}
}

// The reader reads the directory and its run directories, one level deep
// and never through a symlink; Remove takes segments of both levels only.
func TestReaderReadsRunDirectoriesOneLevelDeep(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, pid int) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		b := Encode(SyntheticSpec{Pid: pid, StartMono: 1, Exe: "/x", Nodes: []string{"/n"},
			Endpoints: []SyntheticEndpoint{{Kind: KindPublisher, Name: "/t", Node: 0}}})
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1.0.pulse", 1)
	write("run-10-a/2.0.pulse", 2)
	write("run-11-b/3.0.pulse", 3)
	write("run-11-b/run-12-c/4.0.pulse", 4) // two levels: not read
	write("other/5.0.pulse", 5)             // not a run directory: not read
	elsewhere := t.TempDir()
	write("../"+filepath.Base(elsewhere)+"/6.0.pulse", 6)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "run-13-link")); err != nil { // a symlink: never followed
		t.Fatal(err)
	}
	r := NewReader(dir)
	defer r.Close()
	s, err := r.Scan()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, snap := range s.Snapshots {
		pids = append(pids, snap.Pid)
	}
	sort.Ints(pids)
	if len(pids) != 3 || pids[0] != 1 || pids[1] != 2 || pids[2] != 3 || len(s.Problems) != 0 {
		t.Fatalf("read pids %v, problems %v", pids, s.Problems)
	}
	if err := r.Remove(filepath.Join(dir, "run-11-b/run-12-c/4.0.pulse")); err == nil {
		t.Error("removed a segment two levels deep")
	}
	if err := r.Remove(filepath.Join(dir, "other/5.0.pulse")); err == nil {
		t.Error("removed a segment outside a run directory")
	}
	if err := r.Remove(filepath.Join(dir, "run-10-a/2.0.pulse")); err != nil {
		t.Errorf("removing a dead segment of a run directory: %v", err)
	}
}

// An ended run's directory is removed once the run has been over for the
// retention, its exited processes' segments first; a live run, and a run
// whose node outlived it, keep theirs.
func TestSweepRuns(t *testing.T) {
	base := t.TempDir()
	seg := func(run *RunDir, name string) string {
		t.Helper()
		p := filepath.Join(run.Path, name)
		if err := os.WriteFile(p, sample(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ended, err := MakeRunDir(base)
	if err != nil {
		t.Fatal(err)
	}
	seg(ended, "1.0.pulse")
	outlived, _ := MakeRunDir(base)
	holdLock(t, seg(outlived, "2.0.pulse"))
	if err := ended.Close(); err != nil {
		t.Fatal(err)
	}
	if err := outlived.Close(); err != nil {
		t.Fatal(err)
	}
	if removed, _ := SweepRuns(base, time.Hour); len(removed) != 0 {
		t.Fatalf("swept within the retention: %v", removed)
	}
	removed, err := SweepRuns(base, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || !strings.HasSuffix(removed[0], "1.0.pulse") || removed[1] != ended.Path {
		t.Fatalf("removed %v", removed)
	}
	if _, err := os.Stat(outlived.Path); err != nil {
		t.Errorf("a run with a live process was swept: %v", err)
	}
	if removed, _ := SweepRuns(base, -1); removed != nil {
		t.Errorf("a negative retention removes nothing: %v", removed)
	}
}

// The notice says which directory was read once per stretch of emptiness.
func TestEmptyNotice(t *testing.T) {
	var b strings.Builder
	n := EmptyNotice{Msg: "no probed process in /x"}
	n.Observe(&Scan{}, &b)
	n.Observe(&Scan{}, &b)
	n.Observe(&Scan{Snapshots: []*Snapshot{{}}}, &b)
	n.Observe(&Scan{}, &b)
	if b.String() != strings.Repeat("pulse: no probed process in /x\n", 2) {
		t.Fatalf("%q", b.String())
	}
	// With a grace (pulse run: its command starts after the first scan),
	// empty scans before the first process pass unsaid, then it is said once.
	b.Reset()
	g := EmptyNotice{Msg: "no probed process in /x", Grace: 2}
	g.Observe(&Scan{}, &b)
	g.Observe(&Scan{}, &b)
	if b.Len() != 0 {
		t.Fatalf("said within the grace: %q", b.String())
	}
	g.Observe(&Scan{}, &b)
	g.Observe(&Scan{}, &b)
	if b.String() != "pulse: no probed process in /x\n" {
		t.Fatalf("after the grace: %q", b.String())
	}
	b.Reset()
	late := EmptyNotice{Msg: "no probed process in /x", Grace: 2}
	late.Observe(&Scan{}, &b)
	late.Observe(&Scan{Snapshots: []*Snapshot{{}}}, &b) // the command's first process
	late.Observe(&Scan{Snapshots: []*Snapshot{{}}}, &b)
	if b.Len() != 0 {
		t.Fatalf("a command whose process came within the grace: %q", b.String())
	}
}

// Exited processes age out: a reader marks when it first saw one exited,
// every reader leaves it out once that is longer ago than the retention,
// and the owner's reader removes it (with its marker); a diagnosis only
// lists it. A live process is never aged out.
func TestExitedProcessesAgeOut(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, "7.0.pulse")
	if err := WriteSynthetic(dead, SyntheticSpec{Pid: 7, StartMono: 1, Exe: "/x", Nodes: []string{"/n"}}); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "8.0.pulse")
	if err := WriteSynthetic(live, SyntheticSpec{Pid: 8, StartMono: 1, Exe: "/x", Nodes: []string{"/m"}}); err != nil {
		t.Fatal(err)
	}
	holdLock(t, live)
	scanWith := func(retain time.Duration, clean bool) *Scan {
		t.Helper()
		r := NewReader(dir)
		defer r.Close()
		r.Retain(retain, clean)
		s, err := r.Scan()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := scanWith(time.Hour, true); len(s.Snapshots) != 2 || len(s.Stale) != 0 {
		t.Fatalf("within the retention: %d shown, stale %v", len(s.Snapshots), s.Stale)
	}
	marker := dead + ExitedSuffix
	st, err := os.Stat(marker)
	if err != nil || time.Since(st.ModTime()) > time.Minute {
		t.Fatalf("no marker of when it was first seen exited: %v", err)
	}
	old := time.Now().Add(-2 * time.Hour) // it exited two hours ago
	os.Chtimes(marker, old, old)
	if s := scanWith(time.Hour, false); len(s.Snapshots) != 1 || s.Snapshots[0].Pid != 8 || len(s.Stale) != 1 || s.Stale[0].Pid != 7 || s.Stale[0].Removed {
		t.Fatalf("a diagnosis: shown %d, stale %+v", len(s.Snapshots), s.Stale)
	}
	if _, err := os.Stat(dead); err != nil {
		t.Fatal("a reader that does not clean removed it")
	}
	if s := scanWith(-1, true); len(s.Snapshots) != 2 {
		t.Errorf("a negative retention shows everything: %d", len(s.Snapshots))
	}
	if s := scanWith(time.Hour, true); len(s.Stale) != 1 || !s.Stale[0].Removed {
		t.Fatalf("the owner's reader: stale %+v", s.Stale)
	}
	for _, p := range []string{dead, marker} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind", p)
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("the live process's segment was removed")
	}
	// A marker left by an earlier process of the same name is not this one's.
	os.WriteFile(marker, nil, 0o600)
	os.Chtimes(marker, old, old)
	WriteSynthetic(dead, SyntheticSpec{Pid: 7, StartMono: 1, StartReal: uint64(time.Now().Add(-time.Minute).UnixNano()), Exe: "/x"})
	if s := scanWith(time.Hour, true); len(s.Stale) != 0 {
		t.Errorf("an old marker aged out a new segment: %+v", s.Stale)
	}
}

// A segment whose lock another process holds (not its writer, nor the
// writer seen from outside its container) is alive under its own pid, and
// that holder's /proc status is read once, not at every scan.
func TestReaderStrangerHolderAskedOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "999999.0.pulse")
	b := Encode(SyntheticSpec{Pid: 999999, StartMono: 1, Exe: "/x", Nodes: []string{"/n"},
		Endpoints: []SyntheticEndpoint{{Kind: KindPublisher, Name: "/t", Node: 0}}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	holdLock(t, path)
	rd := NewReader(dir)
	defer rd.Close()
	for scan := 0; scan < 2; scan++ {
		s, err := rd.Scan()
		if err != nil || len(s.Snapshots) != 1 {
			t.Fatalf("scan %d: %v, %d snapshots", scan, err, len(s.Snapshots))
		}
		if sn := s.Snapshots[0]; !sn.Alive || sn.Pid != 999999 || sn.OwnPid != 0 {
			t.Fatalf("scan %d: alive %v, pid %d, own pid %d; want alive as 999999", scan, sn.Alive, sn.Pid, sn.OwnPid)
		}
		if m := rd.maps[path]; m.stranger == 0 || m.holder != 0 {
			t.Fatalf("scan %d: the holder was not remembered as a stranger (holder %d, stranger %d)", scan, m.holder, m.stranger)
		}
	}
}
