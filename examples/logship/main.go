// Command logship parses access-log lines and ships them as JSON, the way
// a log shipper does (seed 003: a shipper made three times faster). Each
// mode fixes one more of the seed's problems, in the order they were
// found:
//
//	regexp   lines parsed with regular expressions, each known format
//	         tried in turn; each event cloned, once per output, by a
//	         function that builds an error to test whether a value is a
//	         nested map; events encoded by encoding/json (reflection);
//	         the shipper's state written and synced to a file after
//	         every small batch
//	index    lines parsed with strings.Index and friends instead
//	clone    and events cloned with a type switch, no error built
//	encoder  and encoded by code written for them
//	fixed    and the state written once a second, not after every batch
//
//	go run ./cmd/calltrail run ./examples/logship -mode regexp
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// An event is a parsed line, as shippers hold them: fields by name, some
// of them nested.
type event = map[string]any

// formats are the line formats the shipper knows, as regular
// expressions written the way shippers' patterns are: each field spelled
// out. A line is tried against each in turn. The last matches lines such
// as
//
//	2026-11-21T12:00:00.123Z web-3 nginx[2345]: 10.0.0.7 "GET /api/items/17 HTTP/1.1" 200 5123 0.012 "curl/8.5"
var formats = []*regexp.Regexp{
	// syslog (RFC 5424)
	regexp.MustCompile(`<(?P<pri>\d{1,3})>1 (?P<time>\S+) (?P<host>\S+) (?P<app>\S+) (?P<pid>\S+) (?P<msgid>\S+) (?P<sd>-|\[.*?\]) (?P<msg>.*)`),
	// Apache common
	regexp.MustCompile(`(?P<client>\S+) (?P<ident>\S+) (?P<user>\S+) \[(?P<time>[\w:/]+\s[+\-]\d{4})\] "(?P<method>[A-Z]+) (?P<path>\S+)\s*(?P<proto>\S+)?\s*" (?P<status>\d{3}) (?P<bytes>\S+)`),
	// access lines of a proxy, behind an ISO time, host and program
	regexp.MustCompile(`(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)\s+(?P<host>[\w.-]+)\s+(?P<app>[\w-]+)\[(?P<pid>\d+)\]:\s+` +
		`(?P<client>(?:\d{1,3}\.){3}\d{1,3})\s+"(?P<method>[A-Z]+)\s+(?P<path>\S+)\s+HTTP/(?:1\.0|1\.1|2)"\s+` +
		`(?P<status>\d{3})\s+(?P<bytes>\d+)\s+(?P<latency>\d+(?:\.\d+)?)\s+"(?P<agent>.*?)"`),
}

// parseRegexp tries each format. Only the proxy's lines come in this
// program's input; others would be parsed the same way.
func parseRegexp(line string) (event, bool) {
	for i, re := range formats {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if i != len(formats)-1 {
			return event{"message": line}, true
		}
		return newEvent(m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11]), true
	}
	return nil, false
}

// parseIndex parses the same lines as lineRE by looking for the
// separators.
func parseIndex(line string) (event, bool) {
	var f [11]string
	rest := line
	for i, sep := range []string{" ", " ", "[", "]: ", " \"", " ", " "} {
		j := strings.Index(rest, sep)
		if j < 0 {
			return nil, false
		}
		f[i], rest = rest[:j], rest[j+len(sep):]
	}
	// rest: HTTP/1.1" 200 5123 0.012 "agent"
	j := strings.Index(rest, "\" ")
	if j < 0 {
		return nil, false
	}
	rest = rest[j+2:]
	for i := 7; i < 10; i++ {
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			return nil, false
		}
		f[i], rest = rest[:j], rest[j+1:]
	}
	if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
		return nil, false
	}
	f[10] = rest[1 : len(rest)-1]
	return newEvent(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10]), true
}

func newEvent(ts, host, app, pid, client, method, path, status, size, latency, agent string) event {
	p, _ := strconv.Atoi(pid)
	st, _ := strconv.Atoi(status)
	sz, _ := strconv.Atoi(size)
	lat, _ := strconv.ParseFloat(latency, 64)
	return event{
		"time":   ts,
		"host":   host,
		"source": event{"app": app, "pid": p},
		"client": client,
		"http":   event{"method": method, "path": path, "status": st, "bytes": sz, "latency": lat, "agent": agent},
	}
}

// asMap says whether v is a nested event, the way the seed's shipper did:
// by building an error when it is not.
func asMap(v any) (event, error) {
	m, ok := v.(event)
	if !ok {
		return nil, fmt.Errorf("value %v of type %T is not a map", v, v)
	}
	return m, nil
}

func cloneSlow(e event) event {
	c := make(event, len(e))
	for k, v := range e {
		if m, err := asMap(v); err == nil {
			c[k] = cloneSlow(m)
		} else {
			c[k] = v
		}
	}
	return c
}

func cloneFast(e event) event {
	c := make(event, len(e))
	for k, v := range e {
		if m, ok := v.(event); ok {
			c[k] = cloneFast(m)
		} else {
			c[k] = v
		}
	}
	return c
}

// encodeFast appends e as JSON, keys sorted as encoding/json sorts them.
func encodeFast(b []byte, e event) []byte {
	var keys [8]string
	ks := keys[:0]
	for k := range e {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	b = append(b, '{')
	for i, k := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		switch v := e[k].(type) {
		case string:
			b = strconv.AppendQuote(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case float64:
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		case event:
			b = encodeFast(b, v)
		default:
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// A shipper turns lines into JSON and remembers how far it got, in a
// state file, so that it can resume after a restart.
type shipper struct {
	mode      string
	out       *bufio.Writer
	state     string
	buf       []byte
	saved     time.Time
	lines     int
	malformed int
	statuses  map[int]int
	samples   [100]event
}

func (s *shipper) ship(line string) {
	var e event
	var ok bool
	if s.mode == "regexp" {
		e, ok = parseRegexp(line)
	} else {
		e, ok = parseIndex(line)
	}
	if !ok {
		s.malformed++
		return
	}
	// Each output gets its own copy of the event, to change or keep as
	// it likes: the JSON output adds the shipper's name, the metrics
	// output drops fields, the sampler keeps every 100th event.
	j := s.clone(e)
	j["shipper"] = "logship"
	if s.mode == "regexp" || s.mode == "index" || s.mode == "clone" {
		b, err := json.Marshal(j)
		if err != nil {
			log.Fatal(err)
		}
		s.out.Write(b)
	} else {
		s.buf = encodeFast(s.buf[:0], j)
		s.out.Write(s.buf)
	}
	s.count(s.clone(e))
	s.sample(s.clone(e))
	s.out.WriteByte('\n')
	s.lines++
}

func (s *shipper) clone(e event) event {
	if s.mode == "regexp" || s.mode == "index" {
		return cloneSlow(e)
	}
	return cloneFast(e)
}

// sample is the sampler output: it keeps every 100th event of the last
// 10,000 for a debugging page.
func (s *shipper) sample(e event) {
	if s.lines%100 == 0 {
		s.samples[s.lines/100%len(s.samples)] = e
	}
}

// count is the metrics output: requests by status.
func (s *shipper) count(e event) {
	h, _ := e["http"].(event)
	st, _ := h["status"].(int)
	delete(h, "agent")
	s.statuses[st]++
}

// batchDone records progress after each batch: after every one of them
// in the slow modes, at most once a second in fixed mode.
func (s *shipper) batchDone() {
	if s.mode == "fixed" && time.Since(s.saved) < time.Second {
		return
	}
	s.saveState()
}

// saveState writes the offset to the state file, synced so that it
// survives a crash, and renamed into place so that it is never half
// written.
func (s *shipper) saveState() {
	tmp := s.state + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(f, "{\"lines\":%d}\n", s.lines)
	if err := f.Sync(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(tmp, s.state); err != nil {
		log.Fatal(err)
	}
	s.saved = time.Now()
}

// generate makes n log lines, the same ones on every run.
func generate(n int) []string {
	agents := []string{"curl/8.5", "Mozilla/5.0 (X11; Linux x86_64)", "Go-http-client/1.1"}
	methods := []string{"GET", "GET", "GET", "POST", "PUT"}
	lines := make([]string, n)
	statuses := []int{200, 200, 200, 404, 500}
	var b []byte
	two := func(b []byte, n int) []byte { return append(b, byte('0'+n/10), byte('0'+n%10)) }
	for i := range lines {
		b = append(b[:0], "2026-11-21T12:"...)
		b = two(b, i/60000%60)
		b = append(b, ':')
		b = two(b, i/1000%60)
		b = append(b, '.', byte('0'+i%1000/100))
		b = two(b, i%100)
		b = append(b, "Z web-"...)
		b = strconv.AppendInt(b, int64(i%4), 10)
		b = append(b, " nginx["...)
		b = strconv.AppendInt(b, int64(2000+i%7), 10)
		b = append(b, "]: 10.0."...)
		b = strconv.AppendInt(b, int64(i%250), 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(i%199), 10)
		b = append(b, " \""...)
		b = append(b, methods[i%len(methods)]...)
		b = append(b, " /api/items/"...)
		b = strconv.AppendInt(b, int64(i%5000), 10)
		b = append(b, " HTTP/1.1\" "...)
		b = strconv.AppendInt(b, int64(statuses[i%5]), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(100+i*37%9000), 10)
		b = append(b, " 0."...)
		b = append(b, byte('0'+i%997/100))
		b = two(b, i%997%100)
		b = append(b, " \""...)
		b = append(b, agents[i%len(agents)]...)
		b = append(b, '"')
		lines[i] = string(b)
	}
	return lines
}

func main() {
	mode := flag.String("mode", "regexp", "regexp, index, clone, encoder or fixed")
	n := flag.Int("n", 1_000_000, "log lines to ship")
	batch := flag.Int("batch", 500, "lines per batch")
	output := flag.String("o", "", "write the JSON lines to `FILE` (default: nowhere)")
	flag.Parse()
	switch *mode {
	case "regexp", "index", "clone", "encoder", "fixed":
	default:
		log.Fatalf("unknown mode %q", *mode)
	}
	lines := generate(*n)

	var w io.Writer = nowhere{}
	if *output != "" {
		f, err := os.Create(*output)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		w = f
	}
	dir, err := os.MkdirTemp("", "logship")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s := &shipper{mode: *mode, out: bufio.NewWriterSize(w, 64<<10), state: filepath.Join(dir, "state.json"), statuses: map[int]int{}}

	start := time.Now()
	for i, line := range lines {
		s.ship(line)
		if (i+1)%*batch == 0 {
			s.batchDone()
		}
	}
	s.saveState()
	if err := s.out.Flush(); err != nil {
		log.Fatal(err)
	}
	took := time.Since(start)
	fmt.Printf("shipped %d lines (%d malformed, %d errors) in %d ms, %.0f lines/s\n", s.lines, s.malformed, s.statuses[500], took.Milliseconds(), float64(s.lines)/took.Seconds())
}

// nowhere drops what is written to it.
type nowhere struct{}

func (nowhere) Write(p []byte) (int, error) { return len(p), nil }
