package segment

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The layout of a segment directory (docs/design/0001-segment-abi.md):
//
//	<dir>/<pid>.<n>.pulse                processes started with the probe in their environment
//	<dir>/run-<pid>-<rand>/run.lock      one `pulse run` or `pulse demo`, locked while it lives
//	<dir>/run-<pid>-<rand>/<pid>.<n>.pulse   that run's processes
//
// Every reader of <dir> reads both levels, so the views see every run; a run
// reads only its own directory, so its summary covers its own processes.
const (
	RunPrefix = "run-"
	RunLock   = "run.lock"
)

// sweepGrace keeps a sweeper away from a run directory without a lock file:
// it may have been made a moment ago, its lock file not yet created.
const sweepGrace = 10 * time.Second

// owns reports a path of a segment this reader reads: in its directory or in
// one of its run directories.
func (r *Reader) owns(path string) bool {
	dir, top := filepath.Dir(path), filepath.Clean(r.dir)
	if dir == top {
		return true
	}
	return filepath.Dir(dir) == top && strings.HasPrefix(filepath.Base(dir), RunPrefix)
}

// RunDir is the directory of one run, locked for the run's life.
type RunDir struct {
	Path string
	lock *os.File
}

// MakeRunDir makes a run directory under base: the machine-wide directory,
// created 0700 as the probe would. When base is itself a run directory (a
// `pulse run` inside a `pulse run`), the new one goes beside it, so readers
// never need to look deeper than one level.
func MakeRunDir(base string) (*RunDir, error) {
	if fileExists(filepath.Join(base, RunLock)) && strings.HasPrefix(filepath.Base(base), RunPrefix) {
		base = filepath.Dir(base)
	}
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("cannot create segment directory %s: %w", base, err)
	}
	path, err := os.MkdirTemp(base, fmt.Sprintf("%s%d-", RunPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("cannot create a run directory in %s: %w", base, err)
	}
	f, err := CreateLocked(filepath.Join(path, RunLock), os.O_EXCL)
	if err != nil {
		os.RemoveAll(path)
		return nil, err
	}
	fmt.Fprintf(f, "pid %d\n", os.Getpid())
	return &RunDir{Path: path, lock: f}, nil
}

// Close ends the run: the lock file's mtime becomes the run's end, from
// which a sweeper counts the retention, and the lock is released. The
// segments stay, so the other views see the run's final counts.
func (d *RunDir) Close() error {
	if d.lock == nil {
		return nil
	}
	now := time.Now()
	err := os.Chtimes(d.lock.Name(), now, now)
	if cerr := d.lock.Close(); err == nil {
		err = cerr
	}
	d.lock = nil
	return err
}

// SweepRuns removes what ended runs left in dir once they have been over
// for retain: their exited processes' segments, then the directory. A run
// directory whose run is alive, or that still holds a live process (a node
// that outlived its `pulse run`), is kept. It returns what it removed.
func SweepRuns(dir string, retain time.Duration) (removed []string, err error) {
	if retain < 0 {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var runs []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), RunPrefix) { // IsDir: never a symlink
			runs = append(runs, e.Name())
		}
	}
	return sweepRuns(dir, runs, retain), nil
}

// sweepRuns is SweepRuns over the run directories of dir already listed.
func sweepRuns(dir string, runs []string, retain time.Duration) (removed []string) {
	now := time.Now()
	for _, name := range runs {
		run := filepath.Join(dir, name)
		ended, locked, ok := runEnded(run)
		wait := retain
		if !locked {
			wait = max(retain, sweepGrace)
		}
		if !ok || now.Sub(ended) < wait {
			continue
		}
		if gone, ok := removeDeadSegments(run); ok {
			removed = append(removed, gone...)
			_ = os.Remove(filepath.Join(run, RunLock))
			if os.Remove(run) == nil {
				removed = append(removed, run)
			}
		} else {
			removed = append(removed, gone...)
		}
	}
	return removed
}

// runEnded reports when a run ended: its lock file's mtime once no process
// holds the lock (Close sets it; a killed run's is its start, earlier than
// its end). A directory without a lock file (hasLock false) ended when it
// was last changed. ok is false for a run that is still going.
func runEnded(run string) (ended time.Time, hasLock, ok bool) {
	lock := filepath.Join(run, RunLock)
	held, err := LockHeldAt(lock)
	if err != nil {
		st, serr := os.Lstat(run)
		if serr != nil {
			return time.Time{}, false, false
		}
		return st.ModTime(), false, true
	}
	st, err := os.Lstat(lock)
	if held || err != nil {
		return time.Time{}, true, false
	}
	return st.ModTime(), true, true
}

// removeDeadSegments removes the segments of exited processes in a run
// directory; ok is false when a live one stays (or anything else is there).
func removeDeadSegments(run string) (removed []string, ok bool) {
	entries, err := os.ReadDir(run)
	if err != nil {
		return nil, false
	}
	ok = true
	for _, e := range entries {
		name := e.Name()
		if name == RunLock {
			continue
		}
		if strings.HasSuffix(name, ExitedSuffix) && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(run, name)) // goes with its segment
			continue
		}
		path := filepath.Join(run, name)
		if !e.Type().IsRegular() || !strings.HasSuffix(name, Suffix) {
			ok = false // not ours: leave the directory to its owner
			continue
		}
		if alive, err := LockHeldAt(path); err != nil || alive || os.Remove(path) != nil {
			ok = false
			continue
		}
		removed = append(removed, path)
	}
	return removed, ok
}

// CreateLocked creates path (0600, never through a symlink; flag may add
// os.O_EXCL) and holds a write record lock on it while the file stays open:
// the liveness a probe keeps on its segment, for files of pulse's own (a
// run's lock, a bridge's status). The kernel drops the lock with the process.
func CreateLocked(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC|flag, 0o600)
	if err != nil {
		return nil, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return f, nil
}

// LockHeldAt reports whether another process holds the record lock of the
// regular file at path (a segment, a run's lock, a bridge's status).
func LockHeldAt(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return lockHeld(f), nil
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// EmptyNotice says once, when a scan finds no probed process, which
// directory was read; it says it again only after processes came and went.
type EmptyNotice struct {
	Msg string // what to say; "" says nothing
	// Grace is how many empty scans pass unsaid until the first process is
	// seen: pulse run's first scan comes before its command has started.
	Grace      int
	said, seen bool
	passedOver int
}

// Observe reports an empty scan on w.
func (n *EmptyNotice) Observe(s *Scan, w io.Writer) {
	if n == nil || n.Msg == "" || w == nil {
		return
	}
	if len(s.Snapshots) > 0 {
		n.said, n.seen = false, true
		return
	}
	if !n.seen && n.passedOver < n.Grace {
		n.passedOver++
		return
	}
	if !n.said {
		n.said = true
		fmt.Fprintf(w, "pulse: %s\n", n.Msg)
	}
}

// ExitedSuffix names the marker a reader leaves beside the segment of a
// process it first saw exited: its mtime is when. It is not a segment (the
// probe never writes it, readers never map it).
const ExitedSuffix = ".exited"

// exitedSince is when a reader first saw the process of snap exited: the
// marker's mtime, made now if there is none (or only a stale one, older
// than the segment), or this reader's own first sighting where no marker
// can be made (another user's directory).
func (r *Reader) exitedSince(snap *Snapshot, now time.Time) time.Time {
	marker := snap.Path + ExitedSuffix
	if st, err := os.Lstat(marker); err == nil && st.Mode().IsRegular() && st.ModTime().UnixNano() >= int64(snap.StartReal) {
		return st.ModTime()
	}
	_ = os.Remove(marker) // a leftover of an earlier segment of that name
	if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600); err == nil {
		f.Close()
		return now
	}
	if t, ok := r.firstDead[snap.Path]; ok {
		return t
	}
	r.firstDead[snap.Path] = now
	return now
}

// ageOut leaves the segments of processes that exited more than the
// retention ago out of the scan; when the reader cleans, it removes them,
// markers whose segment is gone, and what ended runs left (SweepRuns).
func (r *Reader) ageOut(scan *Scan, entries []dirEntry, seen map[string]bool) {
	if r.retain < 0 {
		return
	}
	now := time.Now()
	kept := scan.Snapshots[:0]
	for _, snap := range scan.Snapshots {
		if snap.Alive {
			kept = append(kept, snap)
			continue
		}
		since := r.exitedSince(snap, now)
		if now.Sub(since) <= r.retain {
			kept = append(kept, snap)
			continue
		}
		st := Stale{Path: snap.Path, Pid: snap.Pid, Since: since}
		if r.clean {
			st.Removed = r.Remove(snap.Path) == nil
		}
		scan.Stale = append(scan.Stale, st)
	}
	scan.Snapshots = kept
	if !r.clean {
		return
	}
	var runs []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.name, ExitedSuffix); ok && !seen[filepath.Join(r.dir, name)] {
			_ = os.Remove(filepath.Join(r.dir, e.name)) // a marker of a segment removed by someone else
		}
		if strings.HasPrefix(e.name, RunPrefix) && isDir(filepath.Join(r.dir, e.name), e.typ) {
			runs = append(runs, e.name)
		}
	}
	sweepRuns(r.dir, runs, r.retain)
}
