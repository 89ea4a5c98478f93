package recorder

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ros2_pulse/internal/zlog"
)

// readZst decompresses path, saying whether it ended whole.
func readZst(t *testing.T, path string) (string, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	z, err := zlog.Sniff(br)
	if err != nil || z == nil {
		t.Fatalf("%s is not a compressed stream (%v)", path, err)
	}
	defer z.Close()
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), z.Err() == nil
}

func windowText(i int) []byte {
	return []byte(fmt.Sprintf("# ts_ns=%d window_s=1.000\nTOPIC /t 10.000000\n\n", i))
}

// A .zst recording is one frame per run: a run that ends properly can be
// followed by the next run in the same file; one that was killed (its frame
// left open) is moved to PATH.1 by the next, and both read whole windows.
func TestRotatingFileCompressed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.log.zst")
	write := func(r *RotatingFile, from, to int) {
		for i := from; i < to; i++ {
			if _, err := r.Write(windowText(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			b.Write(windowText(i))
		}
		return b.String()
	}
	r := &RotatingFile{Path: path}
	write(r, 0, 3)
	// Readable while the frame is open: every window written so far.
	if got, whole := readZst(t, path); got != want(0, 3) || whole {
		t.Fatalf("open frame reads %q (whole %v)", got, whole)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = &RotatingFile{Path: path} // the next run appends its own frame
	write(r, 3, 5)
	if got, _ := readZst(t, path); got != want(0, 5) {
		t.Fatalf("two runs read %q", got)
	}
	// Killed: no Close. The next run moves the file aside and starts afresh.
	r = &RotatingFile{Path: path}
	write(r, 5, 6)
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Fatalf("a file ending in an open frame was not moved aside: %v", err)
	}
	if got, whole := readZst(t, path+".1"); got != want(0, 5) || whole {
		t.Fatalf("the moved file reads %q (whole %v)", got, whole)
	}
	if got, _ := readZst(t, path); got != want(5, 6) {
		t.Fatalf("the new file reads %q", got)
	}
	// A plain file under a .zst name is not appended to: moved aside too.
	plain := filepath.Join(t.TempDir(), "p.log.zst")
	os.WriteFile(plain, []byte("not compressed\n"), 0o644)
	r = &RotatingFile{Path: plain}
	write(r, 0, 1)
	if b, _ := os.ReadFile(plain + ".1"); string(b) != "not compressed\n" {
		t.Fatalf("the plain file was not kept: %q", b)
	}
	// Rotation: at MaxBytes the frame ends and the file moves to PATH.1.
	rot := filepath.Join(t.TempDir(), "r.log.zst")
	r = &RotatingFile{Path: rot, MaxBytes: 200}
	write(r, 0, 40)
	r.Close()
	a, wa := readZst(t, rot+".1")
	b, wb := readZst(t, rot)
	if !wa || !wb || !strings.HasSuffix(want(0, 40), a+b) || len(b) == 0 {
		t.Fatalf("rotated: .1 %d bytes (whole %v), current %d bytes (whole %v)", len(a), wa, len(b), wb)
	}
	if st, _ := os.Stat(rot + ".1"); st.Size() > 400 {
		t.Fatalf(".1 has %d bytes for a cap of 200", st.Size())
	}
	// Moved away by someone else (logrotate): a new frame in a new file.
	os.Rename(rot, rot+".moved")
	write(r, 40, 41)
	r.Close()
	if got, whole := readZst(t, rot); got != want(40, 41) || !whole {
		t.Fatalf("after an outside move the file reads %q (whole %v)", got, whole)
	}
	// A failed write is an error, and the next one starts a readable frame.
	r = &RotatingFile{Path: "/nonexistent/dir/w.log.zst"}
	if _, err := r.Write(windowText(0)); err == nil {
		t.Fatal("write to a missing directory succeeded")
	}
}
