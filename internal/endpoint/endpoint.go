// Package endpoint tells calltrail's runtime whether the program links
// its control endpoint, package live: a build may leave it out (see
// calltrail build --live), and a program asked to serve on CALLTRAIL_HTTP
// without it must say so rather than keep its calls where nobody can
// ask for them.
package endpoint

import "sync/atomic"

// Linked is set by package live as it is initialised.
var Linked atomic.Bool
