package recorder

import (
	"errors"
	"fmt"
	"os"
)

// RotatingFile appends whole windows to a file and, before a write that
// would take it past MaxBytes, renames it to PATH.1 (one generation, like
// upstream). It reopens the file for every write, so an external logrotate
// that moves the file away also works.
type RotatingFile struct {
	Path     string
	MaxBytes int64 // 0: never rotate
}

// Write appends p with a single write(2), so a crash never leaves a torn window.
func (r *RotatingFile) Write(p []byte) (int, error) {
	if r.MaxBytes > 0 {
		if st, err := os.Stat(r.Path); err == nil && st.Size() > 0 && st.Size()+int64(len(p)) > r.MaxBytes {
			if err := os.Rename(r.Path, r.Path+".1"); err != nil {
				return 0, fmt.Errorf("rotating %s: %w", r.Path, err)
			}
		}
	}
	f, err := os.OpenFile(r.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	n, werr := f.Write(p)
	cerr := f.Close()
	if werr == nil && n < len(p) {
		werr = errors.New("short write")
	}
	if werr != nil && n > 0 {
		// Never leave half a window behind: cut the file back to where it was.
		if st, err := os.Stat(r.Path); err == nil {
			_ = os.Truncate(r.Path, st.Size()-int64(n))
		}
	}
	if werr != nil {
		return 0, werr
	}
	return n, cerr
}
