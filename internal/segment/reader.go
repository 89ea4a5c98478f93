package segment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Suffix names segment files; anything else in the directory is ignored.
const Suffix = ".pulse"

// maxFileSize bounds what a reader maps: a hostile 2 TiB sparse file is refused.
const maxFileSize = 1 << 30

// DefaultDir is where probes put their segments when ROS_PULSE_DIR is unset.
// It must match rp_config_load in probe/src/segment_writer.c.
func DefaultDir() string { return fmt.Sprintf("/dev/shm/ros2_pulse-%d", os.Getuid()) }

// NowMono reads CLOCK_MONOTONIC, the clock the probe stamps records with.
func NowMono() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

// Problem is a segment file that could not be read.
type Problem struct {
	Path string
	Err  error
}

func (p Problem) Error() string { return fmt.Sprintf("%s: %v", p.Path, p.Err) }

// Scan is one pass over a directory.
type Scan struct {
	Mono      uint64 // CLOCK_MONOTONIC at the end of the pass
	Snapshots []*Snapshot
	Problems  []Problem
	Stale     []Stale // exited longer than the retention: left out of Snapshots (and removed, when cleaning)
}

// Unread reports whether the scan saw the segment at path but could not read
// it: a problem names the segment or its directory. A segment merely not
// there yet, or still being created, is not unread: everything it has
// counted came after the scan.
func (s *Scan) Unread(path string) bool {
	for _, p := range s.Problems {
		if p.Path == path || p.Path == filepath.Dir(path) {
			return true
		}
	}
	return false
}

// Stale is a segment of a process that exited longer ago than the retention.
type Stale struct {
	Path    string
	Pid     int
	Since   time.Time // when a reader first saw it exited
	Removed bool
}

type mapping struct {
	file  *os.File
	mem   []byte
	ino   uint64 // the directory entry's inode when it was mapped (getdents, or lstat where the fs gives no type)
	names mappingCache
	key   string // the last snapshot's Key(): one string per mapping, not per scan
	keyAt uint64 // the StartMono it was made for
	// holder is the pid, in this reader's PID namespace, of the process that
	// held the segment's lock when last seen alive (0: not seen, or not
	// visible from here); kept after it exits, so its pid does not change.
	holder    int
	holderFor uint64 // the StartMono it was learnt for
	// stranger is a lock holder whose innermost pid was not the segment's:
	// not asked again, since reading /proc/<pid>/status costs ~0.1 ms.
	stranger int
}

// Reader keeps segments of one directory mapped between scans. It is not
// safe for concurrent use.
type Reader struct {
	dir       string
	maps      map[string]*mapping
	dirBuf    []byte
	retain    time.Duration        // exited processes older than this are stale; negative: never
	clean     bool                 // remove stale segments (the reader of the segments' owner does)
	firstDead map[string]time.Time // where no exited-marker could be made
}

// NewReader returns a reader of dir that shows every segment.
func NewReader(dir string) *Reader {
	return &Reader{dir: dir, maps: map[string]*mapping{}, retain: -1, firstDead: map[string]time.Time{}}
}

// Retain makes scans leave out the segments of processes that exited more
// than retain ago (negative: none) and, with clean, remove them: exited
// processes age out of every view, and the first reader the segments' owner
// runs removes them. When a process exited is when a reader first saw it
// exited, kept beside the segment in an exited-marker file (ExitedSuffix)
// so that every reader, and every later run of one, agrees.
func (r *Reader) Retain(retain time.Duration, clean bool) { r.retain, r.clean = retain, clean }

// Close unmaps everything.
func (r *Reader) Close() {
	for p, m := range r.maps {
		m.close()
		delete(r.maps, p)
	}
}

func (m *mapping) close() {
	if m.mem != nil {
		_ = unix.Munmap(m.mem)
	}
	_ = m.file.Close()
}

// Scan reads every segment in the directory. A missing directory is an
// empty scan; unreadable or invalid segments are reported as problems and
// never stop the others from being read.
func (r *Reader) Scan() (*Scan, error) {
	entries, err := r.listDir(r.dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cannot list segment directory: %w", err)
	}
	scan := &Scan{}
	seen := map[string]bool{}
	r.readEntries(r.dir, entries, scan, seen)
	// One level deep: the directories `pulse run` makes for its processes.
	// Only real directories named run-*; a symlink or a deeper level is never followed.
	for _, e := range entries {
		if !strings.HasPrefix(e.name, RunPrefix) || !isDir(filepath.Join(r.dir, e.name), e.typ) {
			continue
		}
		sub := filepath.Join(r.dir, e.name)
		subEntries, err := r.listDir(sub)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			scan.Problems = append(scan.Problems, Problem{sub, err})
		}
		r.readEntries(sub, subEntries, scan, seen)
	}
	for p, m := range r.maps {
		if !seen[p] {
			m.close()
			delete(r.maps, p)
		}
	}
	r.ageOut(scan, entries, seen)
	sort.Slice(scan.Snapshots, func(i, j int) bool { return scan.Snapshots[i].Pid < scan.Snapshots[j].Pid })
	scan.Mono = NowMono()
	return scan, nil
}

// readEntries reads the segments among one directory's entries into scan.
func (r *Reader) readEntries(dir string, entries []dirEntry, scan *Scan, seen map[string]bool) {
	for _, e := range entries {
		if !strings.HasSuffix(e.name, Suffix) {
			continue
		}
		path := filepath.Join(dir, e.name)
		seen[path] = true
		snap, err := r.read(path, e)
		if errors.Is(err, ErrNotReady) || errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			scan.Problems = append(scan.Problems, Problem{path, err})
			continue
		}
		scan.Snapshots = append(scan.Snapshots, snap)
	}
}

// dirEntry is a directory entry with the inode and type getdents reports,
// so a scan needs no stat per segment to see a file replaced.
type dirEntry struct {
	name string
	ino  uint64
	typ  uint8 // unix.DT_*; DT_UNKNOWN on filesystems that do not say
}

// isDir reports a real directory (never a symlink to one), asking the
// filesystem only where getdents did not say.
func isDir(path string, typ uint8) bool {
	if typ != unix.DT_UNKNOWN {
		return typ == unix.DT_DIR
	}
	var st unix.Stat_t
	return unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// listDir lists a directory with getdents64, reusing one buffer.
// The reader's own directory may be a symlink the user chose (as the probe
// allows); a run directory inside it never is.
func (r *Reader) listDir(dir string) ([]dirEntry, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if dir != r.dir {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(dir, flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	if r.dirBuf == nil {
		r.dirBuf = make([]byte, 64<<10)
	}
	var out []dirEntry
	for {
		n, err := unix.ReadDirent(fd, r.dirBuf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, &os.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		for off := 0; off+direntNameOffset <= n; {
			d := (*unix.Dirent)(unsafe.Pointer(&r.dirBuf[off]))
			reclen := int(d.Reclen)
			if reclen <= direntNameOffset || off+reclen > n {
				return out, fmt.Errorf("getdents %s: malformed record", dir)
			}
			name := r.dirBuf[off+direntNameOffset : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) > 0 && !(len(name) <= 2 && name[0] == '.' && (len(name) == 1 || name[1] == '.')) {
				out = append(out, dirEntry{string(name), d.Ino, d.Type})
			}
			off += reclen
		}
	}
}

var direntNameOffset = int(unsafe.Offsetof(unix.Dirent{}.Name))

// Recycle hands back a scan the caller is done with: later scans fill its
// endpoint lists instead of allocating new ones (they were most of a scan's
// garbage). Neither the scan nor its snapshots may be used afterwards.
func (r *Reader) Recycle(s *Scan) {
	if s == nil {
		return
	}
	for _, snap := range s.Snapshots {
		if m := r.maps[snap.Path]; m != nil && cap(snap.Endpoints) > cap(m.names.spare) {
			m.names.spare = snap.Endpoints[:0]
		}
		if m := r.maps[snap.Path]; m != nil && snap.times != nil {
			m.names.spareTimes = snap.times
		}
		snap.Endpoints, snap.times = nil, nil
	}
}

func (r *Reader) read(path string, e dirEntry) (*Snapshot, error) {
	if e.typ == unix.DT_UNKNOWN { // the filesystem does not say: ask
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return nil, err
		}
		e.ino, e.typ = st.Ino, unix.DT_REG
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			e.typ = unix.DT_LNK
		}
	}
	if e.typ != unix.DT_REG {
		return nil, errors.New("not a regular file (refusing to follow it)")
	}
	m := r.maps[path]
	if m != nil && m.ino != e.ino {
		m.close() // replaced since we mapped it
		delete(r.maps, path)
		m = nil
	}
	if m == nil {
		var err error
		if m, err = mapFile(path); err != nil {
			return nil, err
		}
		m.ino = e.ino // compared with later entries' inodes, like with like (overlayfs may report st_ino apart)
		r.maps[path] = m
	}
	snap, err := parseGuarded(m.mem, &m.names)
	if err != nil {
		m.close() // e.g. truncated under us: map it afresh next time
		delete(r.maps, path)
		return nil, err
	}
	snap.Path = path
	var holder int
	snap.Alive, holder = lockHolder(m.file)
	if m.holderFor != snap.StartMono { // another process image: learn its holder afresh
		m.holder, m.stranger, m.holderFor = 0, 0, snap.StartMono
	}
	if m.holder == 0 && holder > 0 && holder != snap.Pid && holder != m.stranger {
		if innermostPid(holder) == snap.Pid {
			m.holder = holder
		} else {
			m.stranger = holder
		}
	}
	if m.holder > 0 {
		// The process lives in another PID namespace (a container): Pid is
		// its pid here, where /proc and kill reach it and no other process
		// has it; OwnPid the one it knows itself by (design note 0034).
		snap.OwnPid, snap.Pid = snap.Pid, m.holder
	}
	if m.key == "" || m.keyAt != snap.StartMono {
		m.key, m.keyAt = snap.Key(), snap.StartMono
	}
	snap.key = m.key
	return snap, nil
}

func mapFile(path string) (*mapping, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	if st.Size < HeaderSize {
		f.Close()
		if st.Size == 0 {
			return nil, ErrNotReady // created, not yet reserved
		}
		return nil, fmt.Errorf("truncated: %d bytes, the header alone is %d", st.Size, HeaderSize)
	}
	if st.Size > maxFileSize {
		f.Close()
		return nil, fmt.Errorf("%d bytes is larger than any segment (%d max)", st.Size, maxFileSize)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mmap: %w", err)
	}
	return &mapping{file: f, mem: mem}, nil
}

// parseGuarded turns a fault on the mapping (the file was truncated under
// us: SIGBUS) into an error instead of a crash.
func parseGuarded(mem []byte, names *mappingCache) (snap *Snapshot, err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			snap, err = nil, fmt.Errorf("segment changed size while being read: %v", p)
		}
	}()
	return parse(mem, names)
}

// lockHeld asks the kernel whether any process holds the probe's record lock.
// It works across PID namespaces and cannot be fooled by PID reuse.
func lockHeld(f *os.File) bool {
	held, _ := lockHolder(f)
	return held
}

// innermostPid is the pid process pid (of this PID namespace) has in its own
// PID namespace: the last NSpid of its /proc status; 0 when unknown.
func innermostPid(pid int) int {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.NewStatus()
	if err != nil || len(st.NSpids) == 0 {
		return 0
	}
	return int(st.NSpids[len(st.NSpids)-1])
}

// lockHolder is lockHeld and the holder's pid as the kernel gives it to
// F_GETLK: translated into this process's PID namespace, 0 when the holder
// is not visible from it (a sibling container's process).
func lockHolder(f *os.File) (held bool, pid int) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return false, 0
	}
	if lk.Type == unix.F_UNLCK {
		return false, 0
	}
	return true, int(max(lk.Pid, 0))
}

// Remove deletes a dead segment after its final counts were recorded. It
// refuses anything that is not a regular file in this reader's directory.
func (r *Reader) Remove(path string) error {
	if !r.owns(path) || !strings.HasSuffix(path, Suffix) {
		return fmt.Errorf("refusing to remove %s: not a segment of %s", path, r.dir)
	}
	if m := r.maps[path]; m != nil {
		if lockHeld(m.file) {
			return fmt.Errorf("refusing to remove %s: its process is alive", path)
		}
		m.close()
		delete(r.maps, path)
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("refusing to remove %s: not a regular file", path)
	}
	_ = os.Remove(path + ExitedSuffix)
	delete(r.firstDead, path)
	return os.Remove(path)
}
