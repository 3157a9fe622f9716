// Package e2e holds calltrail's longest tests, which run the calltrail
// command as a user would on whole programs: the case studies of
// examples/, whose culprits its findings must name, and real modules from
// the module proxy, whose own test suites must pass traced as untraced.
// They are a test binary of their own, so that each stays well inside go
// test's time limit; CALLTRAIL_LONG=1 runs them (see clitest.Long).
package e2e
