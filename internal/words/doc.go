// Package words writes counts as English does: "1 call", "2 calls".
package words
