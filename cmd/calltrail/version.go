package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

func versionVerb() *verb {
	return &verb{
		name:    "version",
		args:    "",
		summary: "print calltrail's version, and the Go it was built with",
		run: func(sess *session, _ *flag.FlagSet, args []string) error {
			if len(args) > 0 {
				return usageError{"takes no arguments"}
			}
			fmt.Fprintln(sess.out, version())
			return nil
		},
	}
}

// version says which calltrail this is: the module version the go
// command stamped, or for a build from a checkout, its commit.
func version() string {
	v := "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
		if (v == "" || v == "(devel)") && rev != "" {
			v = fmt.Sprintf("(devel) commit %.12s%s", rev, modified)
		}
	}
	return fmt.Sprintf("calltrail %s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
