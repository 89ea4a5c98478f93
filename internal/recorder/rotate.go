package recorder

import (
	"errors"
	"fmt"
	"os"

	"ros2_pulse/internal/zlog"
)

// RotatingFile appends whole windows to a file and, before a write that
// would take it past MaxBytes, renames it to PATH.1 (one generation, like
// upstream). It reopens the file for every write, so an external logrotate
// that moves the file away also works.
//
// A PATH ending in .zst is written compressed (internal/zlog): one
// Zstandard frame per file and run, a flushed block per window. A frame
// left open (a killed recorder, a failed write) cannot be continued, so
// the next write first moves that file to PATH.1, where every whole window
// it holds stays readable.
type RotatingFile struct {
	Path     string
	MaxBytes int64 // 0: never rotate

	z       *zlog.Writer // the open frame of a .zst file
	size    int64        // the file's size after our last write to the frame
	checked bool         // the file was found to end whole (or moved aside)
}

// Write appends p with a single write(2), so a crash never leaves a torn window.
func (r *RotatingFile) Write(p []byte) (int, error) {
	if zlog.Compressed(r.Path) {
		return r.writeCompressed(p)
	}
	if r.MaxBytes > 0 {
		if st, err := os.Stat(r.Path); err == nil && st.Size() > 0 && st.Size()+int64(len(p)) > r.MaxBytes {
			if err := os.Rename(r.Path, r.Path+".1"); err != nil {
				return 0, fmt.Errorf("rotating %s: %w", r.Path, err)
			}
		}
	}
	if err := r.append(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeCompressed adds p to the open frame as one block. A compressed
// window's size is known only once it is in the frame, so the file rotates
// when it has reached MaxBytes (it may pass it by one window).
func (r *RotatingFile) writeCompressed(p []byte) (int, error) {
	st, err := os.Stat(r.Path)
	if r.z != nil && (err != nil || st.Size() != r.size) {
		r.z = nil // moved or cut by someone else (logrotate): its frame ends there
	}
	if r.z != nil && r.MaxBytes > 0 && st.Size() >= r.MaxBytes {
		end, err := r.z.End()
		r.z = nil
		if err == nil {
			err = r.append(end)
		}
		if err != nil {
			r.checked = false
			return 0, err
		}
		if err := os.Rename(r.Path, r.Path+".1"); err != nil {
			return 0, fmt.Errorf("rotating %s: %w", r.Path, err)
		}
	}
	if err := r.startFrame(); err != nil {
		return 0, err
	}
	b, err := r.z.Window(p)
	if err == nil {
		err = r.append(b)
	}
	if err != nil {
		r.z, r.checked = nil, false // the frame now misses a block: the next write starts afresh
		return 0, err
	}
	return len(p), nil
}

// append writes b at the end of the file in one write, or not at all.
func (r *RotatingFile) append(b []byte) error {
	f, err := os.OpenFile(r.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	n, werr := f.Write(b)
	cerr := f.Close()
	if werr == nil && n < len(b) {
		werr = errors.New("short write")
	}
	if werr != nil && n > 0 {
		// Never leave half a window behind: cut the file back to where it was.
		if st, err := os.Stat(r.Path); err == nil {
			_ = os.Truncate(r.Path, st.Size()-int64(n))
		}
	}
	if werr != nil {
		return werr
	}
	if st, err := os.Stat(r.Path); err == nil {
		r.size = st.Size()
	}
	return cerr
}

// startFrame opens a frame for the next window. A file that ends in an
// open frame (a recorder killed, a write that failed) is moved to PATH.1
// first: a new frame after it would be unreadable.
func (r *RotatingFile) startFrame() error {
	if r.z != nil {
		return nil
	}
	if !r.checked {
		if whole, err := endsWhole(r.Path); err != nil {
			return err
		} else if !whole {
			if err := os.Rename(r.Path, r.Path+".1"); err != nil {
				return fmt.Errorf("moving aside %s, whose last frame is open: %w", r.Path, err)
			}
		}
		r.checked = true
	}
	r.z = zlog.NewWriter()
	if st, err := os.Stat(r.Path); err == nil {
		r.size = st.Size()
	} else {
		r.size = 0
	}
	return nil
}

// endsWhole reports whether the file at path is absent, empty, or whole
// compressed frames (zlog.EndsWhole reads their headers, not their text).
func endsWhole(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	return zlog.EndsWhole(f)
}

// Close ends the open frame, so the file ends whole.
func (r *RotatingFile) Close() error {
	if r.z == nil {
		return nil
	}
	end, err := r.z.End()
	r.z = nil
	if err != nil {
		return err
	}
	return r.append(end)
}
