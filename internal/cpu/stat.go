package cpu

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// statFiles keeps each process's /proc/<pid>/stat open and reads it again
// from offset 0 every period: one pread where procfs makes a stat, an open,
// a read and a close (a robot's 24 processes cost the page's server ~1 ms a
// window that way). A file whose process has exited reads ESRCH and is
// dropped; a recycled pid then opens a file of its own.
type statFiles struct {
	root  string
	files map[int]*os.File
	buf   []byte
}

func newStatFiles(root string) *statFiles {
	return &statFiles{root: root, files: map[int]*os.File{}, buf: make([]byte, 1024)}
}

// procStat is what a sample needs of /proc/<pid>/stat.
type procStat struct {
	comm         string
	utime, stime uint64 // clock ticks (USER_HZ, 100 on Linux)
	start        uint64 // clock ticks after boot
	rssPages     int64
}

func (p procStat) cpuSeconds() float64 { return float64(p.utime+p.stime) / 100 }

// read reads pid's stat, opening it when it is not open yet.
func (s *statFiles) read(pid int) (procStat, error) {
	f := s.files[pid]
	if f != nil {
		if st, err := s.readFile(f); err == nil {
			return st, nil
		}
		f.Close() // exited (ESRCH), or unreadable: a new file, once
		delete(s.files, pid)
	}
	f, err := os.Open(filepath.Join(s.root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	st, err := s.readFile(f)
	if err != nil {
		f.Close()
		return procStat{}, err
	}
	s.files[pid] = f
	return st, nil
}

func (s *statFiles) readFile(f *os.File) (procStat, error) {
	for {
		n, err := f.ReadAt(s.buf, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return procStat{}, err
		}
		if n < len(s.buf) {
			return parseStat(s.buf[:n])
		}
		s.buf = make([]byte, 2*len(s.buf)) // a comm of odd bytes cannot make it this long; a kernel might
		if len(s.buf) > 1<<16 {
			return procStat{}, fmt.Errorf("%s: longer than 64 KiB", f.Name())
		}
	}
}

// keep closes the files of every pid not in pids.
func (s *statFiles) keep(pids map[int]bool) {
	for pid, f := range s.files {
		if !pids[pid] {
			f.Close()
			delete(s.files, pid)
		}
	}
}

// close closes every file.
func (s *statFiles) close() { s.keep(nil) }

// parseStat reads "pid (comm) state ppid ... utime stime ... starttime vsize
// rss ..." (proc(5)). comm may hold spaces and parentheses: it ends at the
// last ')'.
func parseStat(b []byte) (procStat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, errors.New("stat: no (comm)")
	}
	st := procStat{comm: string(b[open+1 : end])}
	const utime, stime, starttime, rss = 14, 15, 22, 24 // proc(5)'s numbering: comm is field 2
	field, rest := 2, b[end+1:]
	for field < rss {
		rest = bytes.TrimLeft(rest, " \n")
		n := bytes.IndexAny(rest, " \n")
		if n < 0 {
			n = len(rest)
		}
		if n == 0 {
			return procStat{}, fmt.Errorf("stat: %d fields, want %d", field, rss)
		}
		word := rest[:n]
		rest = rest[n:]
		field++
		var err error
		switch field {
		case utime:
			st.utime, err = strconv.ParseUint(string(word), 10, 64)
		case stime:
			st.stime, err = strconv.ParseUint(string(word), 10, 64)
		case starttime:
			st.start, err = strconv.ParseUint(string(word), 10, 64)
		case rss:
			st.rssPages, err = strconv.ParseInt(string(word), 10, 64)
		}
		if err != nil {
			return procStat{}, fmt.Errorf("stat: field %d: %w", field, err)
		}
	}
	return st, nil
}
