// Package httpguard holds the one policy of calltrail's HTTP servers,
// the web UI of calltrail serve and the control endpoint of a traced
// program, on whom they answer.
package httpguard
