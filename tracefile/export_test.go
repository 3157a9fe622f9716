package tracefile

// BatchWords returns the room of the batch Read takes events from,
// reading ahead, or 0 between batches: what tests see of the batches.
func BatchWords(rd *Reader) int {
	if rd.ahead == nil || rd.ahead.cur == nil {
		return 0
	}
	return cap(rd.ahead.cur.words)
}
