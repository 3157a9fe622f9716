//go:build calltrail

package profiles

import (
	"fmt"
	"io"
	"runtime/pprof"

	"github.com/calltrail/calltrail/internal/profhook"
)

func init() { profhook.Register(goProfiles{}) }

// goProfiles is runtime/pprof.
type goProfiles struct{}

func (goProfiles) StartCPUProfile(w io.Writer) error { return pprof.StartCPUProfile(w) }

func (goProfiles) StopCPUProfile() { pprof.StopCPUProfile() }

func (goProfiles) WriteProfile(name string, w io.Writer) error {
	p := pprof.Lookup(name)
	if p == nil {
		return fmt.Errorf("no profile %q", name)
	}
	return p.WriteTo(w, 0)
}
