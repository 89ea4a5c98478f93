package cpu

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// parseStat reads what procfs reads, on every process of this machine.
func TestParseStatAgreesWithProcfs(t *testing.T) {
	procs, err := procfs.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range procs {
		raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		want, err := procfsStat(raw)
		if err != nil {
			continue
		}
		got, err := parseStat(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got.comm != want.Comm || got.utime != uint64(want.UTime) || got.stime != uint64(want.STime) ||
			got.start != want.Starttime || got.rssPages != int64(want.RSS) {
			t.Errorf("%s: got %+v, procfs %+v", raw, got, want)
		}
		checked++
	}
	if checked < 3 {
		t.Fatalf("only %d processes checked", checked)
	}
}

// procfsStat parses raw through procfs: a fake /proc holding it.
func procfsStat(raw []byte) (procfs.ProcStat, error) {
	root, err := os.MkdirTemp("", "stat")
	if err != nil {
		return procfs.ProcStat{}, err
	}
	defer os.RemoveAll(root)
	if err := os.MkdirAll(filepath.Join(root, "1"), 0o755); err != nil {
		return procfs.ProcStat{}, err
	}
	if err := os.WriteFile(filepath.Join(root, "1", "stat"), raw, 0o644); err != nil {
		return procfs.ProcStat{}, err
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		return procfs.ProcStat{}, err
	}
	p, err := fs.Proc(1)
	if err != nil {
		return procfs.ProcStat{}, err
	}
	return p.Stat()
}

func TestParseStatHostile(t *testing.T) {
	ok := "42 (a) b) R 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 555 1000 12 18446744073709551615\n"
	st, err := parseStat([]byte(ok))
	if err != nil || st.comm != "a) b" || st.utime != 7 || st.stime != 3 || st.start != 555 || st.rssPages != 12 {
		t.Fatalf("got %+v, %v", st, err)
	}
	for _, bad := range []string{"", "42", "42 (a", "42 a) R", "42 (a) R 1 2", ok[:len(ok)-30], "42 (a) R 1 42 42 0 -1 4194560 100 0 0 0 x 3 0 0 20 0 1 0 555 1000 12"} {
		if st, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("%q: no error, %+v", bad, st)
		}
	}
}

// A kept file follows its process: it reads the process's new CPU time,
// and once the process has exited it is dropped and the process yields nothing.
func TestStatFilesFollowProcess(t *testing.T) {
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; sleep 30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := newStatFiles("/proc")
	defer s.close()
	first, err := s.read(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	f := s.files[cmd.Process.Pid]
	var last procStat
	for i := 0; i < 200; i++ { // until the loop has spent a few ticks
		if last, err = s.read(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		if last.utime+last.stime >= first.utime+first.stime+3 {
			break
		}
		exec.Command("sleep", "0.02").Run()
	}
	if s.files[cmd.Process.Pid] != f || last.start != first.start || last.utime+last.stime < first.utime+first.stime+3 {
		t.Fatalf("the kept file read %+v after %+v (file kept: %v)", last, first, s.files[cmd.Process.Pid] == f)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if st, err := s.read(cmd.Process.Pid); err == nil {
		t.Fatalf("an exited process read %+v", st)
	}
	if len(s.files) != 0 {
		t.Errorf("%d files kept after the process exited", len(s.files))
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (a) b) R 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 555 1000 12 18446744073709551615\n"))
	f.Add([]byte("1 (()) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStat(b)
		if err == nil && len(st.comm) > len(b) {
			t.Fatalf("comm %q longer than its input", st.comm)
		}
	})
}

// Without threads the sampler reads each process from its kept file: a busy
// loop reads as its own clock says, and a process no longer targeted has its
// file closed.
func TestSamplerKeptFiles(t *testing.T) {
	s, err := New("", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	me := []Target{{Pid: os.Getpid(), Name: "/self"}}
	if got := s.Sample(me); len(got) != 0 {
		t.Fatalf("a first reading has no rate: %+v", got)
	}
	ownPct := busyFor(t, 300*time.Millisecond)
	got := s.Sample(me)
	if len(got) != 1 || got[0].Tid != 0 || got[0].RSSBytes <= 0 || len(s.stats.files) != 1 {
		t.Fatalf("samples %+v, %d files kept", got, len(s.stats.files))
	}
	if math.Abs(got[0].CPUPct-ownPct) > math.Max(10, 0.1*ownPct) {
		t.Errorf("a busy process read %.1f %% of a core; its own clock says %.1f %%", got[0].CPUPct, ownPct)
	}
	if out := s.Sample([]Target{{Pid: 1 << 30, Name: "/gone"}}); len(out) != 0 || len(s.stats.files) != 0 || len(s.prev) != 0 {
		t.Errorf("gone: %+v, %d files and %d readings kept", out, len(s.stats.files), len(s.prev))
	}
}
