//go:build !calltrail

package calltrail

import (
	"bytes"
	"testing"
)

// TestStartCompiledOut: without the calltrail tag, starting traces
// nothing and is no error, so that a program calls Start whatever its
// build.
func TestStartCompiledOut(t *testing.T) {
	var buf bytes.Buffer
	if err := Start(&buf, Options{}); err != nil || buf.Len() != 0 {
		t.Errorf("Start: %v, %d bytes written", err, buf.Len())
	}
	fr := NewFlightRecorder(Options{})
	if err := fr.Start(); err != nil || fr.Enabled() {
		t.Errorf("FlightRecorder: Start %v, enabled %v", err, fr.Enabled())
	}
	if n, err := fr.WriteTo(&buf); err == nil || n != 0 {
		t.Errorf("WriteTo without a recorder: %d bytes, %v", n, err)
	}
}
