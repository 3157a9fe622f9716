// Package text writes calltrail's answers as the command line prints
// them: tables of functions, chains and changes, the goroutines' summary,
// a trace's description, findings. Each takes the query layer's values
// and a writer, so that a verb is its flags, its query and one call here.
package text
