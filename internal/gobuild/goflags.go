package gobuild

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/calltrail/calltrail/instrument"
)

// The go command's flags, as calltrail passes them through: every rule
// about which flag takes a value, which ones choose the files of a build,
// and how the user's -tags and -ldflags meet calltrail's lives here.

// valueFlags are the go command's build and test flags that take a value:
// needed to tell a flag's value from a package argument.
var valueFlags = map[string]bool{
	"C": true, "o": true, "p": true, "tags": true, "ldflags": true, "gcflags": true, "asmflags": true,
	"gccgoflags": true, "mod": true, "modfile": true, "overlay": true, "pkgdir": true, "toolexec": true,
	"exec": true, "covermode": true, "coverpkg": true, "pgo": true, "buildmode": true, "compiler": true,
	"installsuffix": true, "run": true, "skip": true, "bench": true, "benchtime": true, "count": true,
	"cpu": true, "parallel": true, "timeout": true, "coverprofile": true, "cpuprofile": true,
	"memprofile": true, "memprofilerate": true, "blockprofile": true, "blockprofilerate": true,
	"mutexprofile": true, "mutexprofilefraction": true, "outputdir": true, "trace": true, "list": true,
	"shuffle": true, "fuzz": true, "fuzztime": true, "fuzzminimizetime": true, "vet": true,
}

// selectingFlags are the go command's flags that change which files and
// packages a build uses, or what the compiler inlines: the only ones go
// list is given.
var selectingFlags = map[string]bool{
	"tags": true, "mod": true, "race": true, "msan": true, "asan": true, "C": true,
	"pgo": true, "compiler": true, "buildmode": true, "gcflags": true,
}

// Selects reports whether the go command's flag name (without dashes)
// changes which files and packages a build uses, or what the compiler
// inlines.
func Selects(name string) bool { return selectingFlags[name] }

// TakesValue reports whether the go command's build or test flag name
// (without dashes) takes a value, which may stand as the next argument.
func TakesValue(name string) bool { return valueFlags[name] }

// boolFlags are the go command's build and test flags that take no
// value.
var boolFlags = map[string]bool{
	"a": true, "n": true, "race": true, "msan": true, "asan": true, "cover": true, "v": true,
	"work": true, "x": true, "linkshared": true, "modcacherw": true, "trimpath": true,
	"buildvcs": true, "json": true, "i": true, "failfast": true, "short": true, "benchmem": true,
	"fullpath": true, "c": true,
}

// IsGoFlag reports whether name (without dashes) is one of the go
// command's build or test flags.
func IsGoFlag(name string) bool { return valueFlags[name] || boolFlags[name] }

// goFlag is one flag of the go command, with its value if it has one.
type goFlag struct {
	name, value string
	hasValue    bool
}

func (f goFlag) String() string {
	if f.hasValue {
		return "-" + f.name + "=" + f.value
	}
	return "-" + f.name
}

// parseGoFlags reads flags as the go command does: -name, --name,
// -name=value, or -name value for the flags that take a value.
func parseGoFlags(args []string) []goFlag {
	var out []goFlag
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !hasValue && valueFlags[name] && i+1 < len(args) {
			i++
			value, hasValue = args[i], true
		}
		out = append(out, goFlag{name, value, hasValue})
	}
	return out
}

func flagArgs(fs []goFlag) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}

// values returns the values the flags give name, in order.
func values(fs []goFlag, name string) []string {
	var out []string
	for _, f := range fs {
		if f.name == name {
			out = append(out, f.value)
		}
	}
	return out
}

// without returns the flags but those named.
func without(fs []goFlag, names ...string) []goFlag {
	var out []goFlag
	for _, f := range fs {
		if !slices.Contains(names, f.name) {
			out = append(out, f)
		}
	}
	return out
}

// selecting returns the flags that choose the files of a build.
func selecting(fs []goFlag) []goFlag {
	var out []goFlag
	for _, f := range fs {
		if selectingFlags[f.name] {
			out = append(out, f)
		}
	}
	return out
}

// tags returns the build tags the flags set, with extra added, as one
// -tags flag: the go command heeds only the last -tags it is given.
// buildTags are the tags of a traced build: the runtime's, and its use
// of the Go runtime's exit hooks. The packages are listed, and the
// compiler's inlining asked, with the same, so that the build finds what
// they compiled in the go command's cache.
var buildTags = []string{"calltrail", "calltrail_exithook"}

func tags(fs []goFlag, extra ...string) goFlag {
	var all []string
	for _, v := range values(fs, "tags") {
		all = append(all, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	return goFlag{"tags", strings.Join(append(all, extra...), ","), true}
}

// ownFlags says which of the user's flags calltrail cannot pass on,
// because it sets them itself.
func ownFlags(user []goFlag) error {
	for _, f := range user {
		if f.name == "overlay" || f.name == "modfile" {
			return fmt.Errorf("-%s: calltrail builds with its own", f.name)
		}
	}
	return nil
}

// buildFlags returns the flags for the go command that builds the traced
// program: the user's, the given ones, the user's tags with calltrail's,
// and the user's linker flags with the one the runtime's exit hook needs
// from go1.23 on (a link to the runtime the linker otherwise refuses) and
// the one that sets the profiles the program records by default.
func buildFlags(user []goFlag, goMinor int, profiles string, given ...string) []string {
	out := flagArgs(without(user, "tags", "ldflags"))
	out = append(out, given...)
	out = append(out, tags(user, buildTags...).String())
	if g := runtimeGCFlags(values(user, "gcflags")); g != "" {
		out = append(out, goFlag{"gcflags", g, true}.String())
	}
	ld := values(user, "ldflags")
	if goMinor >= 23 {
		ld = append(ld, "-checklinkname=0")
	}
	if profiles != "" {
		ld = append(ld, "-X="+profilesDefault+"="+profiles)
	}
	if len(ld) > 0 {
		// Like -tags, only the last -ldflags counts.
		out = append(out, goFlag{"ldflags", strings.TrimSpace(strings.Join(ld, " ")), true}.String())
	}
	return out
}

// profilesDefault is the variable of the runtime that holds the profiles a
// program records unless CALLTRAIL_PROFILES says otherwise.
const profilesDefault = instrument.RuntimePath + "/internal/profhook.Default"

// runtimeGCFlags returns a -gcflags value for calltrail's runtime when
// the user's, gcflags, disable its optimizations (-N) for every package
// but not its inlining (-l): "" when they do not. Unoptimized, the hot
// path's frames outgrow what its nosplit functions may take, and the
// link fails; without inlining too they are small again, and the hot
// path, seeing it is not inlined, takes its pinned path. The go command
// heeds the last -gcflags whose pattern matches a package.
func runtimeGCFlags(gcflags []string) string {
	last := ""
	for _, v := range gcflags {
		if f, ok := strings.CutPrefix(v, "all="); ok {
			last = f
		}
	}
	fields := strings.Fields(last)
	if !slices.Contains(fields, "-N") || slices.Contains(fields, "-l") {
		return ""
	}
	return instrument.RuntimePath + "=" + last + " -l"
}

// goMinor returns the minor version of the go command of the build, 0 if
// unknown.
func (b *Build) goMinor() int {
	v := strings.TrimPrefix(b.goEnv("GOVERSION"), "go1.")
	if i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		v = v[:i]
	}
	n, _ := strconv.Atoi(v)
	return n
}
