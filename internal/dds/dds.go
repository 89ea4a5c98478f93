//go:build cyclonedds

// Package dds publishes the bridge's messages on a real DDS domain with
// Eclipse CycloneDDS (cgo, Debian's cyclonedds-dev). It is the only cgo in
// pulse, built only with the cyclonedds tag (`make bridge`); everything it
// publishes is built by the pure-Go internal/bridge.
package dds

/*
// build/gen for go vet and editors; the Makefile puts its own tree's gen
// (build-arm64/gen, …) first through CGO_CFLAGS.
#cgo CFLAGS: -I${SRCDIR}/../../build/gen -I${SRCDIR}
#cgo LDFLAGS: -lddsc
#include <stdlib.h>
#include "pulse_dds.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"ros2_pulse/internal/bridge"
)

// Publisher writes rt/statistics and rt/diagnostics on one DDS participant.
type Publisher struct{ b C.pd_bridge }

var _ bridge.Publisher = (*Publisher)(nil)

// Open joins DDS domain `domain` as the ROS node `node`, announced on
// ros_discovery_info with GIDs of gidSize bytes (bridge.GIDSize). config,
// when not empty, is CycloneDDS XML for that domain; otherwise CycloneDDS
// reads CYCLONEDDS_URI as usual.
func Open(domain uint32, config string, node bridge.Node, gidSize int) (*Publisher, error) {
	p := &Publisher{}
	var cs cstrings
	defer cs.free()
	var cfg *C.char
	if config != "" {
		cfg = cs.add(config)
	}
	n := C.pd_node{name_space: cs.add(node.Namespace), name: cs.add(node.Name)}
	var errbuf [256]C.char
	if rc := C.pd_open(&p.b, C.uint32_t(domain), cfg, &n, C.uint32_t(gidSize), &errbuf[0], C.size_t(len(errbuf))); rc != 0 {
		return nil, fmt.Errorf("%s", C.GoString(&errbuf[0]))
	}
	return p, nil
}

// EntitiesInfo publishes a ParticipantEntitiesInfo with the given GUIDs in
// place of the bridge's own (for the golden CDR test).
func (p *Publisher) EntitiesInfo(participant [16]byte, node bridge.Node, writers [][16]byte) error {
	var cs cstrings
	defer cs.free()
	n := C.pd_node{name_space: cs.add(node.Namespace), name: cs.add(node.Name)}
	ws := make([][16]C.uint8_t, max(len(writers), 1))
	for i, w := range writers {
		for k, b := range w {
			ws[i][k] = C.uint8_t(b)
		}
	}
	var gid [16]C.uint8_t
	for k, b := range participant {
		gid[k] = C.uint8_t(b)
	}
	if rc := C.pd_write_entities_info(&p.b, &gid[0], &n, C.uint32_t(len(writers)), &ws[0]); rc < 0 {
		return fmt.Errorf("writing ros_discovery_info: %s", C.GoString(C.dds_strretcode(rc)))
	}
	return nil
}

// Close leaves the domain.
func (p *Publisher) Close() { C.pd_close(&p.b) }

// Matched returns how many readers each writer is matched with.
func (p *Publisher) Matched() (statistics, diagnostics int, err error) {
	var s, d C.uint32_t
	if C.pd_matched(&p.b, &s, &d) != 0 {
		return 0, 0, fmt.Errorf("cannot read the publication-matched status")
	}
	return int(s), int(d), nil
}

// cstrings allocates C copies of ss; free releases them.
type cstrings []*C.char

func (cs *cstrings) add(s string) *C.char {
	c := C.CString(s)
	*cs = append(*cs, c)
	return c
}

func (cs cstrings) free() {
	for _, c := range cs {
		C.free(unsafe.Pointer(c))
	}
}

// Statistics writes one MetricsMessage per element.
func (p *Publisher) Statistics(ms []bridge.Metrics) error {
	for _, m := range ms {
		var cs cstrings
		n := len(m.Points)
		types := make([]C.uint8_t, max(n, 1))
		data := make([]C.double, max(n, 1))
		for i, pt := range m.Points {
			types[i], data[i] = C.uint8_t(pt.Type), C.double(pt.Data)
		}
		rc := C.pd_write_metrics(&p.b, cs.add(m.SourceName), cs.add(m.MetricsSource), cs.add(m.Unit),
			C.int32_t(m.Start.Sec), C.uint32_t(m.Start.Nanosec), C.int32_t(m.Stop.Sec), C.uint32_t(m.Stop.Nanosec),
			&types[0], &data[0], C.uint32_t(n))
		cs.free()
		if rc < 0 {
			return fmt.Errorf("writing /statistics: %s", C.GoString(C.dds_strretcode(rc)))
		}
	}
	return nil
}

// Diagnostics writes one DiagnosticArray.
func (p *Publisher) Diagnostics(a bridge.Array) error {
	n := len(a.Status)
	// C arrays of pointers: Go memory may not hold C pointers that C keeps,
	// but these live only for the call.
	ptrs := func(k int) []*C.char { return make([]*C.char, max(k, 1)) }
	var cs cstrings
	defer cs.free()
	levels := make([]C.uint8_t, max(n, 1))
	names, msgs, hws := ptrs(n), ptrs(n), ptrs(n)
	nvalues := make([]C.uint32_t, max(n, 1))
	var keys, values []*C.char
	for i, st := range a.Status {
		levels[i] = C.uint8_t(st.Level)
		names[i], msgs[i], hws[i] = cs.add(st.Name), cs.add(st.Message), cs.add(st.HardwareID)
		nvalues[i] = C.uint32_t(len(st.Values))
		for _, kv := range st.Values {
			keys = append(keys, cs.add(kv.Key))
			values = append(values, cs.add(kv.Value))
		}
	}
	if len(keys) == 0 {
		keys, values = ptrs(0), ptrs(0)
	}
	frame := cs.add(a.FrameID)
	rc := C.pd_write_diagnostics(&p.b, C.int32_t(a.Stamp.Sec), C.uint32_t(a.Stamp.Nanosec), frame, C.uint32_t(n),
		&levels[0], &names[0], &msgs[0], &hws[0], &nvalues[0], &keys[0], &values[0])
	if rc < 0 {
		return fmt.Errorf("writing /diagnostics: %s", C.GoString(C.dds_strretcode(rc)))
	}
	return nil
}
