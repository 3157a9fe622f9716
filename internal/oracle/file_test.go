package oracle

import (
	"os"
	"testing"
)

// TestFile checks the trace ORACLE_FILE names, when it names one: the
// oracle over a trace from outside the suite,
//
//	ORACLE_FILE=jx.test.trace go test -run TestFile ./internal/oracle
func TestFile(t *testing.T) {
	path := os.Getenv("ORACLE_FILE")
	if path == "" {
		t.Skip()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range Check(path, data) {
		t.Error(err)
	}
}
