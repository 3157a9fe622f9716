package tracefile

import (
	"testing"
	"time"
)

func TestParseMeta(t *testing.T) {
	m := parseMeta(map[string]string{
		"program": "svc", "path": "/bin/svc", "args": "-v", "package": "example.com/svc",
		"go": "go1.26.8", "goos": "linux", "goarch": "amd64", "gomaxprocs": "2", "pid": "42",
		"start": "2026-11-24T10:00:00.5Z", "clock": "tsc", "goid": "g", "parents": "true",
		"full": "wait", "mode": "flight",
		"window_start_ns": "1500000000", "window_end_ns": "4000000000", "window_open_calls": "7",
		"from_the_future": "kept",
	})
	want := Window{Start: 1500 * time.Millisecond, End: 4 * time.Second, Open: 7}
	if m.Program != "svc" || m.Path != "/bin/svc" || m.Args != "-v" || m.Package != "example.com/svc" ||
		m.Go != "go1.26.8" || m.GOOS != "linux" || m.GOARCH != "amd64" || m.GOMAXPROCS != 2 || m.PID != 42 ||
		!m.Start.Equal(time.Date(2026, 11, 24, 10, 0, 0, 5e8, time.UTC)) || m.Clock != "tsc" || m.Goid != "g" || !m.Parents ||
		m.Full != "wait" || !m.Snapshot() || m.Window != want || m.Keys["from_the_future"] != "kept" {
		t.Errorf("parsed %+v", m)
	}
	// What does not parse is left at zero; a whole run is no snapshot.
	m = parseMeta(map[string]string{"pid": "x", "start": "yesterday", "gomaxprocs": "", "parents": "yes", "mode": "file"})
	if m.PID != 0 || !m.Start.IsZero() || m.GOMAXPROCS != 0 || m.Parents || m.Snapshot() || m.Window != (Window{}) {
		t.Errorf("parsed %+v", m)
	}
}
