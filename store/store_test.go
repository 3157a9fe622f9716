package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calltrail/calltrail/analysis"
	"github.com/calltrail/calltrail/filter"
	"github.com/calltrail/calltrail/internal/chtest"
	"github.com/calltrail/calltrail/internal/tracetest"
	"github.com/calltrail/calltrail/query"
	"github.com/calltrail/calltrail/spans"
	"github.com/calltrail/calltrail/tracefile"
)

// servers are two ClickHouse servers, the shards of chtest.Cluster,
// started for the package's tests; nil where clickhouse-server is not
// installed and CALLTRAIL_CLICKHOUSE is not "required".
var servers []*chtest.Server

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := chtest.Binary(); err != nil {
		if os.Getenv("CALLTRAIL_CLICKHOUSE") == "required" {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run() // the tests that need servers skip
	}
	dir, err := os.MkdirTemp("", "calltrail-clickhouse-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if servers, err = chtest.StartShards(dir, 2); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer chtest.Stop(servers)
	return m.Run()
}

var databases int

// open returns a store in a fresh database: on the first server alone,
// or over both shards with cluster set.
func open(t *testing.T, cluster bool) *Store {
	t.Helper()
	if servers == nil {
		t.Skip("clickhouse-server is not installed (scripts/test.sh installs it)")
	}
	databases++
	cfg := Config{Addr: servers[0].Addr(), Database: fmt.Sprintf("t%d_%d", os.Getpid(), databases), User: "default"}
	if cluster {
		cfg.Cluster = chtest.Cluster
	}
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// scripts are traces with the shapes the figures depend on: nesting,
// recursion direct and through other functions, errors, panics,
// goroutines, and calls left open at the end.
var scripts = map[string]string{
	// Two requests served in turn by one goroutine, the first starting
	// a goroutine of its own that runs two chains for it, and a call
	// outside any request.
	"requests": `
1 +main.main 0
1 +main.serve 10
2 go 1 main.serve 15
2 span 1 0 GET 18
2 +main.handle 20
2 +main.D 30
4 go 2 main.handle 32
4 +main.work 33
4 +main.D 34
4 - 36
4 - 37
4 +main.D 38
4 - 39
2 - 40
2 - 50
2 end 1 52
2 span 2 0 GET 55
2 +main.handle 60
2 +main.D 62
2 -boom 70
2 - 80
2 end 2 82
3 go 1 main.serve 85
3 +main.handle 86
3 +main.D 87
3 - 88
3 - 89
1 - 90
1 - 100
`,
	// A request's span started inside calls of none (middleware), a
	// goroutine it starts, and another trace's span inside it, with a
	// recursion across the two.
	"middleware": `
1 +main.main 0
1 +main.serve 10
1 +main.mw 20
1 span 1 0 GET 25
1 +main.handle 30
1 +main.D 40
1 - 50
5 go 1 main.handle 51
5 +main.work 51
5 +main.D 51
5 - 52
5 - 52
1 span 2 0 JOB 52
1 +main.D 55
1 +main.handle 57
1 +main.D 58
1 - 60
1 - 62
1 - 65
1 end 2 66
1 +main.D 70
1 - 75
1 - 80
1 end 1 85
1 - 90
1 - 95
1 - 100
`,
	"nested": `
1 +main.main 0
1 +main.A 10
1 +main.D 20
1 -boom 50
1 +main.B 60
1 +main.D 70
1 - 90
1 - 100
1 - 110
1 +main.C 120
1 +main.D 130
1 -boom 150
1 - 160
1 - 200
`,
	"recursion": `
1 +main.main 0
1 +main.A 10
1 +main.B 20
1 +main.A 30
1 +main.C 40
1 +main.B 50
1 +main.D 60
1 ! 70
1 ! 80
1 ! 90
1 - 100
1 - 110
1 - 120
1 +main.A 130
1 +main.A 140
1 +main.A 150
1 +main.D 160
1 -other 170
1 - 180
1 - 190
1 - 200
1 - 210
`,
	// Recursions whose inner calls failed, or panicked, inside outer
	// ones that did not, and inside ones that did.
	"failing-inside": `
1 +main.main 0
1 +main.parse 10
1 +main.parse 20
1 +main.parse 30
1 -bad 40
1 -bad 50
1 - 60
1 +main.parse 70
1 +main.parse 80
1 ! 95
1 - 100
1 +main.parse 110
1 +main.parse 120
1 +main.parse 130
1 ! 140
1 ! 150
1 ! 160
1 - 170
`,
	"goroutines": `
1 +main.main 0
1 +main.serve 10
2 go 1 main.serve 15
2 +main.handle 20
2 +main.D 30
3 go 1 main.serve 35
3 +main.handle 40
3 +main.D 45
3 -timeout 60
2 - 70
2 - 80
3 - 90
1 - 100
1 +main.D 110
`,
	// A goroutine whose first call came after the call holding its go
	// statement returned, the parent waiting in another call.
	"spawned-returned": `
1 +main.main 0
1 +main.spawn 10
1 - 20
1 +main.waitAll 21
2 go 1 main.spawn 25
2 +main.work 25
2 - 30
1 - 40
1 - 50
`,
	// A server's connections: goroutines whose outermost code is not
	// traced run chain after chain, each started from main.serve, the
	// later ones too (main.item in the first connection).
	"connections": `
1 +main.main 0
1 +main.serve 1
2 go 1 main.serve 2
3 go 1 main.serve 3
2 +main.hello 10
2 - 11
2 +main.item 12
2 +main.lookup 13
2 - 14
2 - 15
3 +main.item 16
3 - 17
2 +main.hello 18
2 - 19
4 go 1 main.serve 19
4 +main.hello 20
4 - 21
4 +main.lookup 22
4 - 23
1 - 30
1 - 31
`,
	// A flight recorder's snapshot: the calls open when its window
	// began count from its start.
	"snapshot": `
meta mode flight
meta window_start_ns 50
meta window_end_ns 200
1 +main.main 0
1 +main.serve 10
1 +main.D 60
1 - 70
1 - 150
1 - 160
`,
	// Goroutines read before the calls of their parents that started
	// them, one started where the parent is in untraced code, one whose
	// parent never appears.
	"spawned-early": `
1 +main.main 0
1 - 5
2 go 1 main.serve 15
2 +main.handle 20
2 +main.D 30
2 - 40
2 - 50
3 go 1 main.serve 16
3 +main.handle 21
3 - 41
4 go 9 main.gone 17
4 +main.handle 22
4 - 42
1 +main.main 6
1 +main.serve 10
1 - 70
5 go 1 net/http.serve 72
5 +main.handle 73
5 +main.D 74
5 - 75
5 - 76
1 - 80
`,
}

// traces writes the scripts' traces, and one of a deep recursion, to
// files.
func traces(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	for name, script := range scripts {
		data, err := tracetest.Build(script)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = filepath.Join(dir, name+".trace")
		if err := os.WriteFile(out[name], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out["deep"] = filepath.Join(dir, "deep.trace")
	if err := os.WriteFile(out["deep"], tracetest.Recursion(5000), 0o644); err != nil {
		t.Fatal(err)
	}
	// Recursion through cycles, goroutines, errors and panics.
	for seed := range uint64(3) {
		data, _, err := tracetest.Random(seed)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("random%d", seed)
		out[name] = filepath.Join(dir, name+".trace")
		if err := os.WriteFile(out[name], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// local analyses a trace as the command line does.
func local(t *testing.T, path string, o analysis.Options) *query.Trace {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tracefile.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return query.New(path, analysis.Analyze(r, o))
}

// TestEqualsLocal pushes each trace and checks that the store's figures
// for it are the local analysis': every function's, and every chain of
// every function, with errors, panics and the slowest calls. Quantiles
// differ by design: the store's are exact, the local ones read from a
// histogram.
func TestEqualsLocal(t *testing.T) {
	ctx := context.Background()
	spawned := map[string]int{} // chains started by others, by trace
	for _, cluster := range []bool{false, true} {
		s := open(t, cluster)
		for name, path := range traces(t) {
			p, err := s.Push(ctx, path, Meta{Service: "svc-" + name}, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sel := Selection{Service: "svc-" + name}
			lt := local(t, path, analysis.Options{Slowest: 3})
			var calls uint64
			for _, f := range lt.Profile.Funcs {
				calls += f.Calls
			}
			if p.Calls != calls {
				t.Errorf("%s: pushed %d calls, the local analysis counts %d", name, p.Calls, calls)
			}
			st, err := s.Source(sel, "store").Trace(ctx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, want := st.Functions("self", 0), lt.Functions("self", 0)
			for i := range want {
				want[i].P50Ns, want[i].P99Ns = 0, 0
			}
			for i := range got {
				got[i].P50Ns, got[i].P99Ns = 0, 0
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("cluster %v, %s: functions\n got %+v\nwant %+v", cluster, name, got, want)
			}
			for _, f := range want {
				ids, err := s.Lookup(ctx, f.Name)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range []query.ChainOptions{{Slowest: 3}, {Slowest: 3, OnlyErrors: true}, {Slowest: 3, OnlyPanics: true}} {
					got, err := s.Chains(ctx, sel, ids, o)
					if err != nil {
						t.Fatal(err)
					}
					lt := lt
					if o.OnlyErrors || o.OnlyPanics {
						lt = local(t, path, analysis.Options{Slowest: 3, OnlyErrors: o.OnlyErrors, OnlyPanics: o.OnlyPanics, Chains: query.ChainFolder})
					}
					want, _ := lt.Chains([]uint32{mustFunc(t, lt, f.Name)}, 0)
					if len(want) == 0 {
						want = []query.Chain{}
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("cluster %v, %s: chains of %s (%+v)\n got %+v\nwant %+v", cluster, name, f.Name, o, got, want)
					}
					for _, c := range got {
						spawned[name] += len(c.SpawnedFrom)
					}
				}
			}
		}
	}
	// The comparison above says something of goroutines only if some
	// chains were started by others.
	for _, name := range []string{"goroutines", "spawned-early", "connections"} {
		if spawned[name] == 0 {
			t.Errorf("%s: no chain says where its goroutines were started", name)
		}
	}
}

func mustFunc(t *testing.T, tr *query.Trace, name string) uint32 {
	id, err := tr.Func(name)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestCompareEqualsLocal checks that the diff of two pushed traces,
// chosen by their labels, is query.Compare of the two.
func TestCompareEqualsLocal(t *testing.T) {
	ctx := context.Background()
	s := open(t, true)
	files := traces(t)
	for _, pair := range [][2]string{{"nested", "recursion"}, {"recursion", "goroutines"}, {"nested", "nested"}} {
		for _, name := range pair {
			if _, err := s.Push(ctx, files[name], Meta{Service: "cmp", Labels: []string{"trace=" + name}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		var sides [2]*query.Side
		for i, name := range pair {
			st, err := s.Source(Selection{Labels: []string{"trace=" + name}}, name).Trace(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sides[i] = st.Side()
		}
		got := sides[0].Compare(sides[1], 0)
		want := query.Compare(local(t, files[pair[0]], analysis.Options{}), local(t, files[pair[1]], analysis.Options{}), 0)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s against %s:\n got %+v\nwant %+v", pair[1], pair[0], got, want)
		}
	}
}

// folded is a profile's tree of chains as a map from the chain, its
// names joined, to its calls, total, self and errors; with fold, the
// local tree's recursion folded as the store folds it, a node's total
// counted where no caller is in the same folded chain.
func folded(p *analysis.Profile, fold bool) map[string][4]int64 {
	out := map[string][4]int64{}
	// Each chain folded from its caller's, as FoldPath folds the
	// names: by name, not by function id.
	ids := map[string]uint32{}
	var byID []string
	fd := query.NewFolder(func(id uint32) string { return byID[id] })
	type item struct {
		n     *analysis.Node
		names []string
		keys  []string // the key of each chain on the path, the outermost first
		f     query.Folded
	}
	stack := []item{{p.Root, nil, nil, fd.Empty()}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range it.n.Children {
			name := p.Name(c.Func)
			id, ok := ids[name]
			if !ok {
				id = uint32(len(byID))
				ids[name] = id
				byID = append(byID, name)
			}
			names := append(slices.Clone(it.names), name)
			f := fd.Push(it.f, id)
			k := strings.Join(names, ";")
			if fold {
				k = query.Key(fd.Steps(f, false))
			}
			v := out[k]
			v[0] += int64(c.Calls)
			if !slices.Contains(it.keys, k) {
				v[1] += c.Total
			}
			v[2] += c.Self
			v[3] += int64(c.Errors)
			out[k] = v
			stack = append(stack, item{c, names, append(slices.Clone(it.keys), k), f})
		}
	}
	return out
}

// TestProfileEqualsLocal checks that Profile of a pushed trace is the
// local analysis's tree of chains with recursion folded, and its
// functions the local ones; over the two shards.
func TestProfileEqualsLocal(t *testing.T) {
	ctx := context.Background()
	s := open(t, true)
	for name, path := range traces(t) {
		if _, err := s.Push(ctx, path, Meta{Service: "prof-" + name}, nil); err != nil {
			t.Fatal(err)
		}
		p, err := s.Profile(ctx, Selection{Service: "prof-" + name})
		if err != nil {
			t.Fatal(err)
		}
		st := query.New("store", p)
		lt := local(t, path, analysis.Options{})
		if got, want := folded(st.Profile, true), folded(lt.Profile, true); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: chains\n got %v\nwant %v", name, got, want)
		}
		// The chains that started the goroutines of each chain, as the
		// web UI shows them from the profile. (The chains' figures are
		// the tree's, compared above; their recursion is folded.)
		spawners := func(tr *query.Trace, fn string) map[string][][]query.Step {
			cs, _ := tr.Chains([]uint32{mustFunc(t, tr, fn)}, 0)
			out := map[string][][]query.Step{}
			for _, c := range cs {
				out[query.Key(c.Path)] = c.SpawnedFrom
			}
			return out
		}
		for _, f := range lt.Functions("calls", 0) {
			if got, want := spawners(st, f.Name), spawners(lt, f.Name); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: chains of %s\n got %+v\nwant %+v", name, f.Name, got, want)
			}
		}
		if st.Profile.Goroutines != lt.Profile.Goroutines {
			t.Errorf("%s: %d goroutines, want %d", name, st.Profile.Goroutines, lt.Profile.Goroutines)
		}
		// The quantiles are the store's (see TestEqualsLocal).
		got, want := st.Functions("self", 0), lt.Functions("self", 0)
		for i := range want {
			if i < len(got) {
				want[i].P50Ns, want[i].P99Ns = got[i].P50Ns, got[i].P99Ns
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: functions\n got %+v\nwant %+v", name, got, want)
		}
	}
}

// TestShardsShare pushes twenty traces over the two shards and checks
// that each shard holds calls of some: were every push on one shard (all
// twenty the same way by chance: one in half a million), the cluster
// would not scale out.
func TestShardsShare(t *testing.T) {
	ctx := context.Background()
	s := open(t, true)
	dir := t.TempDir()
	for i := 0; i < 20; i++ {
		data, err := tracetest.Build(scripts["nested"] + fmt.Sprintf("1 +main.E%d 300\n1 - 310\n", i))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("t%d.trace", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Push(ctx, path, Meta{Service: "share"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var total uint64
	for i, srv := range servers {
		one, err := Open(ctx, Config{Addr: srv.Addr(), Database: s.cfg.Database, User: "default"})
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		err = one.conn.QueryRow(ctx, "SELECT count() FROM "+s.cfg.Database+".calls_local").Scan(&n)
		one.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("shard %d holds no calls", i)
		}
		total += n
	}
	if total != 20*8 {
		t.Errorf("the shards hold %d calls, want %d", total, 20*8)
	}
}

// TestUpgrade makes a store as the schema was before goroutines kept
// their chains, which a push cannot write to, then has Init (which push
// runs first) add the columns: the push then says where its goroutines
// came from.
func TestUpgrade(t *testing.T) {
	ctx := context.Background()
	s := open(t, true)
	for _, srv := range servers {
		one, err := Open(ctx, Config{Addr: srv.Addr(), Database: s.cfg.Database, User: "default"})
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"goroutines", "goroutines_local"} {
			for _, col := range []string{"request_root", "request_spawned_from", "root", "spawned_from"} {
				if err := one.conn.Exec(ctx, "ALTER TABLE "+s.cfg.Database+"."+table+" DROP COLUMN "+col); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, table := range []string{"calls", "calls_local"} {
			for _, col := range []string{"outer_start", "chain_outer_start", "parent_start", "parent_chain", "chain_failed_inner", "chain_panicked_inner", "ended"} {
				if err := one.conn.Exec(ctx, "ALTER TABLE "+s.cfg.Database+"."+table+" DROP COLUMN "+col); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, table := range []string{"pushes", "pushes_local"} {
			if err := one.conn.Exec(ctx, "ALTER TABLE "+s.cfg.Database+"."+table+" DROP COLUMN requests"); err != nil {
				t.Fatal(err)
			}
		}
		for _, table := range []string{"request_calls", "request_calls_local"} {
			if err := one.conn.Exec(ctx, "DROP TABLE "+s.cfg.Database+"."+table); err != nil {
				t.Fatal(err)
			}
		}
		one.Close()
	}
	path := traces(t)["goroutines"]
	if _, err := s.Push(ctx, path, Meta{Service: "old"}, nil); err == nil {
		t.Fatal("pushed to a store without the goroutines' chains: the test's store is not the old schema")
	}
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Init(ctx); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if _, err := s.Push(ctx, path, Meta{Service: "new"}, nil); err != nil {
		t.Fatal(err)
	}
	ids, err := s.Lookup(ctx, "main.D")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []query.ChainOptions{{}, {Slowest: 3, OnlyErrors: true}} {
		got, err := s.Chains(ctx, Selection{Service: "new", Since: time.Unix(0, 1)}, ids, o)
		if err != nil {
			t.Fatal(err)
		}
		lt := local(t, path, analysis.Options{Slowest: o.Slowest, OnlyErrors: o.OnlyErrors, Chains: query.ChainFolder})
		want, _ := lt.Chains([]uint32{mustFunc(t, lt, "main.D")}, 0)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chains of main.D after the upgrade (%+v)\n got %+v\nwant %+v", o, got, want)
		}
	}
}

// TestSpawnsBounded pushes a trace whose goroutines wait for their
// parents' calls with room for one waiting goroutine only: every
// goroutine still gets its row, and the links lost are only missing.
func TestSpawnsBounded(t *testing.T) {
	ctx := context.Background()
	s := open(t, false)
	path := traces(t)["spawned-early"]
	rows := func(service string) (n, linked uint64) {
		t.Helper()
		err := s.conn.QueryRow(ctx, "SELECT count(), countIf(spawned_from != 0) FROM "+s.table("goroutines")+
			" WHERE push IN (SELECT push FROM "+s.table("pushes")+" WHERE service = ?)", service).Scan(&n, &linked)
		if err != nil {
			t.Fatal(err)
		}
		return n, linked
	}
	if _, err := s.Push(ctx, path, Meta{Service: "all"}, nil); err != nil {
		t.Fatal(err)
	}
	defer func(n int) { maxSpawns = n }(maxSpawns)
	maxSpawns = 1
	// The same calls in a file of its own: a push of the same file would
	// store nothing.
	data, err := tracetest.Build(scripts["spawned-early"] + "1 +main.other 90\n1 - 91\n")
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "bounded.trace")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Push(ctx, path, Meta{Service: "bounded"}, nil); err != nil {
		t.Fatal(err)
	}
	n, linked := rows("all")
	bn, blinked := rows("bounded")
	if n < 4 || bn != n {
		t.Errorf("%d goroutine rows with room for one waiting, %d without bound (want 4 or more)", bn, n)
	}
	if linked < 3 || blinked >= linked {
		t.Errorf("%d goroutines linked to their parents' chains with room for one waiting, %d without bound", blinked, linked)
	}
}

// TestFailedPush has a push fail after it wrote calls, on one server and
// over two shards: the goroutines table refuses its rows. The push
// deletes the rows it wrote.
func TestFailedPush(t *testing.T) {
	ctx := context.Background()
	path := traces(t)["goroutines"]
	for _, cluster := range []bool{false, true} {
		s := open(t, cluster)
		tables := []string{"goroutines"}
		if cluster {
			tables = append(tables, "goroutines_local")
		}
		for _, srv := range holders(s) {
			one, err := Open(ctx, Config{Addr: srv.Addr(), Database: s.cfg.Database, User: "default"})
			if err != nil {
				t.Fatal(err)
			}
			for _, table := range tables {
				if err := one.conn.Exec(ctx, "ALTER TABLE "+s.cfg.Database+"."+table+" DROP COLUMN request_spawned_from"); err != nil {
					t.Fatal(err)
				}
			}
			one.Close()
		}
		if _, err := s.Push(ctx, path, Meta{}, nil); err == nil {
			t.Fatalf("cluster %v: pushed goroutines to a table without their columns", cluster)
		}
		if n := abandoned(t, s); n != 0 {
			t.Errorf("cluster %v: %d rows of the failed push left in the store", cluster, n)
		}
	}
}

// holders returns the servers that hold the rows of s.
func holders(s *Store) []*chtest.Server {
	if s.cfg.Cluster == "" {
		return servers[:1]
	}
	return servers
}

// abandoned returns the number of rows in s of pushes that did not
// commit, once the server has carried out the deletions asked of it.
func abandoned(t *testing.T, s *Store) uint64 {
	t.Helper()
	ctx := context.Background()
	var n uint64
	for _, srv := range holders(s) {
		one, err := Open(ctx, Config{Addr: srv.Addr(), Database: s.cfg.Database, User: "default"})
		if err != nil {
			t.Fatal(err)
		}
		// Deletions are mutations, carried out after the server answers.
		mutated(t, one)
		for _, table := range []string{"calls", "request_calls", "chains", "goroutines", "profiles"} {
			if s.cfg.Cluster != "" {
				table += "_local"
			}
			var m uint64
			err := one.conn.QueryRow(ctx, "SELECT count() FROM "+s.cfg.Database+"."+table+" WHERE push NOT IN (SELECT push FROM "+s.table("pushes")+")").Scan(&m)
			if err != nil {
				t.Fatal(err)
			}
			n += m
		}
		one.Close()
	}
	return n
}

// TestPushedTwiceAtOnce stores a trace twice, as two pushes that began
// together would, each finding it absent: queries read it once.
func TestPushedTwiceAtOnce(t *testing.T) {
	ctx := context.Background()
	s := open(t, true)
	path := traces(t)["nested"]
	p, err := s.Push(ctx, path, Meta{Service: "twice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.push(ctx, Pushed{Trace: p.Trace}, path, Meta{Service: "twice"}, nil); err != nil {
		t.Fatal(err)
	}
	sel := Selection{Service: "twice"}
	var pushes uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.table("pushes")+" WHERE service = 'twice'").Scan(&pushes); err != nil {
		t.Fatal(err)
	}
	if pushes != 2 {
		t.Fatalf("%d pushes of the trace stored, want 2", pushes)
	}
	if n, err := s.Traces(ctx, sel); err != nil || n != 1 {
		t.Errorf("Traces = %d, %v; want 1", n, err)
	}
	st, err := s.Source(sel, "store").Trace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, want := st.Functions("self", 0), local(t, path, analysis.Options{}).Functions("self", 0)
	for i := range got {
		if i < len(want) {
			got[i].P50Ns, got[i].P99Ns = want[i].P50Ns, want[i].P99Ns
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("functions of a trace pushed twice\n got %+v\nwant %+v", got, want)
	}
}

// TestRequestsEqualLocal pushes a trace of requests and checks that a
// selection of one request's trace id gives, for every function and its
// chains, what the local analysis narrowed to that request gives.
func TestRequestsEqualLocal(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"requests", "middleware"} {
		path := traces(t)[name]
		for _, cluster := range []bool{false, true} {
			s := open(t, cluster)
			if _, err := s.Push(ctx, path, Meta{Service: "requests"}, nil); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("%s/cluster=%v", name, cluster), func(t *testing.T) { requestsEqualLocal(t, s, path) })
		}
	}
}

func requestsEqualLocal(t *testing.T, s *Store, path string) {
	ctx := context.Background()
	for _, n := range []uint64{1, 2} {
		var trace tracefile.TraceID
		binary.BigEndian.PutUint64(trace[8:], n) // as tracetest.Build makes a root's
		sel := Selection{Service: "requests", TraceID: trace.String()}
		lt := localRequest(t, path, trace.String())
		st, err := s.Source(sel, "store").Trace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, want := st.Functions("self", 0), lt.Functions("self", 0)
		for i := range want {
			want[i].P50Ns, want[i].P99Ns = 0, 0
		}
		for i := range got {
			got[i].P50Ns, got[i].P99Ns = 0, 0
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: functions\n got %+v\nwant %+v", n, got, want)
		}
		ids, err := s.Lookup(ctx, "main.D")
		if err != nil {
			t.Fatal(err)
		}
		gotC, err := s.Chains(ctx, sel, ids, query.ChainOptions{Slowest: 3})
		if err != nil {
			t.Fatal(err)
		}
		wantC, _ := lt.Chains([]uint32{mustFunc(t, lt, "main.D")}, 0)
		if !reflect.DeepEqual(gotC, wantC) {
			t.Errorf("request %d: chains of main.D\n got %+v\nwant %+v", n, gotC, wantC)
		}
	}
}

// localRequest is local, narrowed to the calls of request traceID as the
// command line narrows them.
func localRequest(t *testing.T, path, traceID string) *query.Trace {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := tracefile.NewReader(bytes.NewReader(data))
	ix, err := spans.Read(r)
	if err != nil {
		t.Fatal(err)
	}
	keep, ok := ix.Keep(traceID, nil)
	if !ok {
		t.Fatalf("no span of trace %s", traceID)
	}
	r, _ = tracefile.NewReader(bytes.NewReader(data))
	r.InheritSpans(ix.Inherit)
	r.KeepSpans(keep)
	return query.New(path, analysis.Analyze(r, analysis.Options{Slowest: 3}))
}

// TestWindowEqualsLocal checks that calls chosen by when they began
// (Since, Until) give what the local analysis gives over the same window
// (-window), for every function: a recursive call whose outer call of the
// same function began before the window counts in the total, as the
// outer call is not there to.
func TestWindowEqualsLocal(t *testing.T) {
	ctx := context.Background()
	s := open(t, false)
	for _, name := range []string{"recursion", "nested", "random0", "random1", "random2"} {
		path := traces(t)[name]
		if _, err := s.Push(ctx, path, Meta{Service: "window-" + name}, nil); err != nil {
			t.Fatal(err)
		}
		var ns int64 // when the push took the trace to have started
		if err := s.conn.QueryRow(ctx, "SELECT start FROM "+s.table("pushes")+" WHERE service = ?", "window-"+name).Scan(&ns); err != nil {
			t.Fatal(err)
		}
		f, err := tracefile.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		start, end := time.Unix(0, ns), time.Duration(0)
		for {
			var ev tracefile.Event
			if f.Reader.Read(&ev) != nil {
				break
			}
			end = max(end, time.Duration(ev.Time))
		}
		f.Close()
		for i := 1; i < 8; i += 2 {
			from, to := end*time.Duration(i)/8, end*time.Duration(i+2)/8
			for _, w := range []struct{ from, to time.Duration }{{from, 0}, {0, to}, {from, to}} {
				sel := Selection{Service: "window-" + name}
				if w.from != 0 {
					sel.Since = start.Add(w.from)
				}
				if w.to != 0 {
					sel.Until = start.Add(w.to)
				}
				st, err := s.Source(sel, "store").Trace(ctx)
				if err != nil {
					t.Fatal(err)
				}
				lt := local(t, path, analysis.Options{Slowest: 3, Filter: &filter.Filter{From: w.from, To: w.to}, Chains: query.ChainFolder})
				got, want := st.Functions("self", 0), lt.Functions("self", 0)
				for i := range want {
					want[i].P50Ns, want[i].P99Ns = 0, 0
				}
				for i := range got {
					got[i].P50Ns, got[i].P99Ns = 0, 0
				}
				if len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
					t.Errorf("%s, window %v-%v: functions\n got %+v\nwant %+v", name, w.from, w.to, got, want)
				}
				for _, f := range want {
					ids, err := s.Lookup(ctx, f.Name)
					if err != nil {
						t.Fatal(err)
					}
					got, err := s.Chains(ctx, sel, ids, query.ChainOptions{Slowest: 3})
					if err != nil {
						t.Fatal(err)
					}
					want, _ := lt.Chains([]uint32{mustFunc(t, lt, f.Name)}, 0)
					if len(want) == 0 {
						want = []query.Chain{}
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s, window %v-%v: chains of %s\n got %+v\nwant %+v", name, w.from, w.to, f.Name, got, want)
					}
				}
			}
		}
	}
}

// TestRequestsOfOldPushes reads a request from a push made before the
// store kept each request's calls apart: its calls are read as they are,
// not lost.
func TestRequestsOfOldPushes(t *testing.T) {
	ctx := context.Background()
	path := traces(t)["middleware"]
	s := open(t, false)
	if _, err := s.Push(ctx, path, Meta{Service: "requests"}, nil); err != nil {
		t.Fatal(err)
	}
	// The push as an older calltrail made it.
	for _, q := range []string{"ALTER TABLE " + s.table("pushes") + " UPDATE requests = 0 WHERE 1", "ALTER TABLE " + s.table("request_calls") + " DELETE WHERE 1"} {
		if err := s.conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	mutated(t, s)
	var trace tracefile.TraceID
	binary.BigEndian.PutUint64(trace[8:], 1)
	st, err := s.Source(Selection{Service: "requests", TraceID: trace.String()}, "store").Trace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := st.Functions("self", 0)
	calls := map[string]uint64{}
	for _, f := range got {
		calls[f.Name] = f.Calls
	}
	if want := map[string]uint64{"main.handle": 1, "main.D": 3, "main.work": 1}; !reflect.DeepEqual(calls, want) {
		t.Errorf("calls of request 1 of an old push: %v, want %v", calls, want)
	}
}

// mutated waits for the mutations (updates, deletions) of s's database on
// its server to be carried out, which happens after the server answers.
func mutated(t *testing.T, s *Store) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var pending uint64
		if err := s.conn.QueryRow(context.Background(), "SELECT count() FROM system.mutations WHERE database = ? AND is_done = 0", s.cfg.Database).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mutations not carried out after a minute", pending)
		}
	}
}
