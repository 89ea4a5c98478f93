package bridge

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"ros2_pulse/internal/segment"
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
	f, err := segment.CreateLocked(filepath.Join(dir, statusPrefix+strconv.Itoa(os.Getpid())+statusSuffix), 0)
	if err != nil {
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
		path := filepath.Join(dir, name)
		alive, err := segment.LockHeldAt(path)
		text, rerr := os.ReadFile(path)
		if err != nil || rerr != nil {
			continue
		}
		out = append(out, Running{Pid: pid, Alive: alive, Text: strings.TrimSpace(string(text))})
	}
	return out
}
