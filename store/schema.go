package store

import (
	"fmt"
	"strings"
)

// The tables, as docs/store.md describes them. Each is written once per
// push; none is updated. Ids of functions, chains and errors are hashes
// of their names, the same in every trace, so that rows of many traces
// aggregate by them.
var schema = []struct {
	name, columns, engine, order, shard string
}{
	{"pushes", `
	push UInt64, trace String, service String, labels Array(String),
	program String, start Int64, end Int64, calls UInt64, dropped UInt64,
	pushed DateTime, requests UInt8 DEFAULT 0`, "MergeTree", "PARTITION BY toYYYYMM(pushed) ORDER BY (service, trace, push)", "intHash64(push)"},
	{"calls", callColumns, "MergeTree", "PARTITION BY toYYYYMM(date) ORDER BY (func, chain, push, start)", "intHash64(push)"},
	// The calls that ran for a request, as the calls of their request
	// alone make them: the chain, self time, depth, outer calls and
	// caller of each among those calls only (see Store.calls).
	{"request_calls", callColumns, "MergeTree", "PARTITION BY toYYYYMM(date) ORDER BY (trace_id, func, chain, push, start)", "intHash64(push)"},
	{"chains", `
	push UInt64, id UInt64, funcs Array(UInt64), repeats Array(UInt32)`, "MergeTree", "ORDER BY (id, push)", "intHash64(id)"},
	{"functions", `
	id UInt64, name String, file String, line UInt32`, "ReplacingMergeTree", "ORDER BY id", "intHash64(id)"},
	{"errors", `
	id UInt64, type String, message String`, "ReplacingMergeTree", "ORDER BY id", "intHash64(id)"},
	{"goroutines", `
	push UInt64, goroutine UInt64, parent UInt64, creator UInt64, first_seen Int64,
	root UInt64, spawned_from UInt64, trace_id String,
	request_root UInt64 DEFAULT root, request_spawned_from UInt64 DEFAULT spawned_from`, "MergeTree", "ORDER BY (push, goroutine)", "intHash64(push)"},
	{"profiles", `
	push UInt64, kind String, data String`, "MergeTree", "ORDER BY push", "intHash64(push)"},
}

// callColumns are the columns of calls and request_calls.
const callColumns = `
	date Date, push UInt64, goroutine UInt64, func UInt64, chain UInt64,
	start Int64, dur Int64, self Int64, depth UInt32,
	outer UInt8, chain_outer UInt8, exit UInt8, error UInt64,
	trace_id String,
	outer_start Int64 DEFAULT start, chain_outer_start Int64 DEFAULT start,
	parent_start Int64, parent_chain UInt64,
	chain_failed_inner Int64 DEFAULT if(chain_outer = 1, 0, dur),
	chain_panicked_inner Int64 DEFAULT if(chain_outer = 1, 0, dur),
	ended Int64 DEFAULT start + dur`

// The sharding keys hash the ids: every id is odd (see FuncID), so the
// ids themselves would put every row on the same shard of an even count.

// tables returns the DDL of the tables in db, named with suffix; with a
// cluster, Distributed tables over the local ones named with _local.
func tables(db, suffix, cluster string) []string {
	var out []string
	for _, t := range schema {
		cols := strings.Join(columns(t.columns), ", ")
		if cluster != "" {
			out = append(out, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (%s) ENGINE = Distributed(%s, %s, %s_local, %s)",
				db, t.name, cols, cluster, db, t.name, t.shard))
			continue
		}
		out = append(out, fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s%s (%s) ENGINE = %s() %s",
			db, t.name, suffix, cols, t.engine, t.order))
	}
	return out
}

// columns splits a table's columns, "name Type, ...", into "name Type"
// each, with its spaces made single.
func columns(s string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if s[i] != ',' || depth > 0 {
				continue
			}
		}
		out = append(out, strings.Join(strings.Fields(s[from:i]), " "))
		from = i + 1
	}
	return out
}

// columnNames returns the names of table's columns, in the schema's order.
func columnNames(table string) []string {
	for _, t := range schema {
		if t.name != table {
			continue
		}
		var out []string
		for _, c := range columns(t.columns) {
			name, _, _ := strings.Cut(c, " ")
			out = append(out, name)
		}
		return out
	}
	return nil
}
