// Package zlog is the compressed form of a recording: a file whose name
// ends in .zst is a Zstandard stream, flushed at the end of every window so
// that a reader (or a crash) finds whole windows up to the last one
// written. Zstandard, not gzip: its window spans many recording windows,
// and a recording repeats itself from one window to the next (the same
// names, the same rates), which is where nearly all its size goes.
package zlog

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Suffix marks a compressed recording.
const Suffix = ".zst"

// Compressed reports whether path names a compressed recording.
func Compressed(path string) bool { return strings.HasSuffix(path, Suffix) }

// magic opens every Zstandard frame.
var magic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// windowSize: an 8 MiB window holds a minute of a robot's lean windows, and
// costs that much memory in the recorder and in every reader.
const windowSize = 8 << 20

// Reader decompresses a recording; a stream that ends torn (its writer was
// killed mid-window) reads as far as it is whole, then ends, and Err says so.
type Reader struct {
	dec *zstd.Decoder
	err error
}

// Sniff returns a Reader when br starts a Zstandard stream, else nil
// (br is then read as it is).
func Sniff(br *bufio.Reader) (*Reader, error) {
	head, err := br.Peek(len(magic))
	if err != nil || !bytes.Equal(head, magic) {
		return nil, nil // too short to be compressed, or plain text
	}
	dec, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	return &Reader{dec: dec}, nil
}

func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, io.EOF
	}
	n, err := r.dec.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
		return n, io.EOF
	}
	return n, err
}

// Err is why the stream ended early (nil when it ended whole).
func (r *Reader) Err() error { return r.err }

// Close releases the decoder.
func (r *Reader) Close() { r.dec.Close() }

// Writer compresses windows into w, one flushed block per window.
type Writer struct {
	enc *zstd.Encoder
	buf bytes.Buffer
}

// NewWriter starts a Zstandard frame.
func NewWriter() *Writer {
	z := &Writer{}
	// Level: the default (zstd -3 class) compresses a robot's window in
	// ~2 ms; better levels cost 3-10x the time for ~15 % fewer bytes.
	enc, err := zstd.NewWriter(&z.buf, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(windowSize))
	if err != nil {
		panic(err) // only for invalid options, which are constant here
	}
	z.enc = enc
	return z
}

// Window compresses one window and returns its bytes, to be written with
// one write: a whole block, readable as soon as it is on disk. The slice is
// valid until the next call.
func (z *Writer) Window(p []byte) ([]byte, error) {
	z.buf.Reset()
	if _, err := z.enc.Write(p); err != nil {
		return nil, err
	}
	if err := z.enc.Flush(); err != nil {
		return nil, err
	}
	return z.buf.Bytes(), nil
}

// End closes the frame (after the last window, or before rotating) and
// returns its last bytes.
func (z *Writer) End() ([]byte, error) {
	z.buf.Reset()
	if err := z.enc.Close(); err != nil {
		return nil, err
	}
	return z.buf.Bytes(), nil
}

// EndsWhole reports whether r is a sequence of whole Zstandard frames: the
// last one closed (its last block, its checksum). It walks the frames'
// block headers and skips their contents without decompressing, so a
// recording of hundreds of MB is checked in the time it takes to read it
// (RFC 8878 §3.1). Anything else (a torn tail, other bytes) is not whole.
func EndsWhole(r io.Reader) (bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	skip := func(n int) bool { d, err := br.Discard(n); return err == nil && d == n }
	for {
		var m [4]byte
		if n, err := io.ReadFull(br, m[:]); n == 0 && err == io.EOF {
			return true, nil // at a frame boundary
		} else if err != nil {
			return false, ignoreEOF(err)
		}
		if m[3] == 0x18 && m[2] == 0x4d && m[1] == 0x2a && m[0]&0xf0 == 0x50 { // a skippable frame
			var size [4]byte
			if _, err := io.ReadFull(br, size[:]); err != nil {
				return false, ignoreEOF(err)
			}
			if !skip(int(uint32(size[0]) | uint32(size[1])<<8 | uint32(size[2])<<16 | uint32(size[3])<<24)) {
				return false, nil
			}
			continue
		}
		if !bytes.Equal(m[:], magic) {
			return false, nil
		}
		fhd, err := br.ReadByte()
		if err != nil {
			return false, ignoreEOF(err)
		}
		single := fhd&0x20 != 0
		header := [4]int{0, 2, 4, 8}[fhd>>6] + [4]int{0, 1, 2, 4}[fhd&3]
		if !single {
			header++ // the window descriptor
		} else if fhd>>6 == 0 {
			header++ // a one-byte content size
		}
		if !skip(header) {
			return false, nil
		}
		for last := false; !last; {
			var bh [3]byte
			if _, err := io.ReadFull(br, bh[:]); err != nil {
				return false, ignoreEOF(err)
			}
			h := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
			last = h&1 != 0
			size := int(h >> 3)
			switch (h >> 1) & 3 {
			case 1: // RLE: one byte repeated
				size = 1
			case 3:
				return false, nil // reserved: not a block
			}
			if !skip(size) {
				return false, nil
			}
		}
		if fhd&0x04 != 0 && !skip(4) { // the content checksum
			return false, nil
		}
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}
