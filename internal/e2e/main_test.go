package e2e

import (
	"os"
	"testing"

	"github.com/calltrail/calltrail/internal/clitest"
)

// TestMain removes the calltrail command the tests built, if they did.
func TestMain(m *testing.M) {
	code := m.Run()
	clitest.Cleanup()
	os.Exit(code)
}
