package bridge

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A running bridge leaves how it joined the graph in the segment directory,
// for pulse doctor: bridge-<pid>.status, holding a record lock for as long
// as the bridge runs (as a probe does on its segment).
const statusPrefix, statusSuffix = "bridge-", ".status"

// StatusFile is a running bridge's status file.
type StatusFile struct{ f *os.File }

// WriteStatus writes text into dir's status file of this process and keeps
// it locked until Close.
func WriteStatus(dir, text string) (*StatusFile, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, statusPrefix+strconv.Itoa(os.Getpid())+statusSuffix)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteString(text + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return &StatusFile{f}, nil
}

// Close removes the status file: the bridge is gone.
func (s *StatusFile) Close() {
	if s == nil || s.f == nil {
		return
	}
	os.Remove(s.f.Name())
	s.f.Close()
	s.f = nil
}

// Running is a bridge's status file as pulse doctor reads it.
type Running struct {
	Pid   int
	Alive bool // its lock is held: the bridge runs
	Text  string
}

// ReadStatuses lists the bridges that left a status file in dir.
func ReadStatuses(dir string) []Running {
	entries, _ := os.ReadDir(dir)
	var out []Running
	for _, e := range entries {
		name := e.Name()
		pidText, ok := strings.CutSuffix(strings.TrimPrefix(name, statusPrefix), statusSuffix)
		pid, err := strconv.Atoi(pidText)
		if !ok || !strings.HasPrefix(name, statusPrefix) || err != nil || !e.Type().IsRegular() {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		b := make([]byte, 4096)
		n, _ := f.Read(b)
		lk := unix.Flock_t{Type: unix.F_WRLCK}
		alive := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk) == nil && lk.Type != unix.F_UNLCK
		f.Close()
		out = append(out, Running{Pid: pid, Alive: alive, Text: strings.TrimSpace(string(b[:n]))})
	}
	return out
}
