//go:build calltrail && calltrail_exithook

package calltrail

// stopAtExit completes the trace when the program calls os.Exit, where
// the runtime offers an exit hook (see exithook_new.go).
func stopAtExit() {
	if tr != nil {
		recording.Store(false)
		if f := pipedAtEnd(); f != nil {
			tr.w.request(pipeEnd, true)
			dieOfPipe(f)
			return
		}
		tr.w.request("exit", true)
	}
}
